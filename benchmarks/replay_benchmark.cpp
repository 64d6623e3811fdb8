// SPDX-License-Identifier: MIT
// How fast `llmdlq replay --execute` drains a DLQ with N model calls in
// flight: replayer over a DLQ of 1,000 cut-off letters, each asked
// again of a stand-in OpenAI-compatible server in this process that takes
// 200 ms per answer (as a hosted model's short answer does) and fixes it,
// through one openai_compatible_client per call in flight, at no rate
// limit, each letter's attempt reserved, its call journaled, its payload
// claimed, recorded in the ledger and its record marked recovered. Items
// are letters; replay/STORE/N is N calls in flight (target: >= 0.8 N times
// the letters per second of N = 1, up to 16). The DLQ and its replay state
// are in PostgreSQL (LLMDLQ_TEST_POSTGRES, the server scripts/bench starts;
// a schema of the run's own, dropped after) or in a SQLite file, whose
// commits each wait for the disk. A fresh DLQ is made for each, off the clock.
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <benchmark/benchmark.h>
#include <httplib.h>

#include <boost/json.hpp>
#include <llmdlq/llm/moderation_replay_source.hpp>
#include <llmdlq/llm/openai_compatible_client.hpp>
#include <llmdlq/llm/recovery_ladder.hpp>
#include <llmdlq/llm/replayer.hpp>
#include <llmdlq/postgres/replay_state.hpp>
#include <llmdlq/postgres/store.hpp>
#include <llmdlq/process.hpp>
#include <llmdlq/sqlite/replay_state.hpp>
#include <llmdlq/sqlite/store.hpp>
#include <libpq-fe.h>

#include "private_folder.hpp"

namespace {

constexpr std::size_t letters = 1000;
constexpr auto answer_time = std::chrono::milliseconds(200);

constexpr std::string_view schema_text = R"({
  "type": "object", "required": ["merchant", "total"],
  "properties": {"merchant": {"type": "string"}, "total": {"type": "number"}}
})";

// A model server that answers every chat completion after answer_time with
// a receipt the schema accepts, serving as many connections at once as the
// replay opens.
class stand_in_server {
 public:
  stand_in_server() {
    server_.new_task_queue = [] { return new httplib::ThreadPool(64); };
    server_.Post("/v1/chat/completions", [](const httplib::Request&, httplib::Response& response) {
      std::this_thread::sleep_for(answer_time);
      const boost::json::object body{
          {"id", "chatcmpl-bench"},
          {"object", "chat.completion"},
          {"model", "m"},
          {"choices", boost::json::array{boost::json::object{
                          {"index", 0},
                          {"message", {{"role", "assistant"}, {"content", R"({"merchant": "AH", "total": 32.83})"}}},
                          {"finish_reason", "stop"}}}},
          {"usage", {{"prompt_tokens", 120}, {"completion_tokens", 12}, {"total_tokens", 132}}}};
      response.set_content(boost::json::serialize(body), "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    if (port_ <= 0) std::abort();
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~stand_in_server() {
    while (!server_.is_running()) std::this_thread::yield();
    server_.stop();
    thread_.join();
  }
  stand_in_server(const stand_in_server&) = delete;
  stand_in_server& operator=(const stand_in_server&) = delete;

  [[nodiscard]] std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

std::vector<llmdlq::envelope> cut_off_letters() {
  const auto schema = llmdlq::schema::compile(schema_text);
  if (!schema) std::abort();
  std::vector<llmdlq::envelope> out;
  for (std::size_t i = 0; i < letters; ++i) {
    llmdlq::request_context ctx;
    ctx.idempotency_key = "receipts/" + std::to_string(i);
    ctx.model.name = "m";
    ctx.model.max_tokens = 100;
    ctx.finish_reason = "length";
    auto judged = llmdlq::process_llm_response(R"({"merchant": "AH", "tot)", *schema, ctx);
    if (judged) std::abort();
    out.push_back(std::move(judged.error()));
  }
  return out;
}

std::unique_ptr<llmdlq::llm_client> client_of(const std::string& base_url) {
  llmdlq::openai_compatible_client_options options;
  options.base_url = base_url;
  auto opened = llmdlq::openai_compatible_client::open(std::move(options));
  if (!opened) std::abort();
  return std::make_unique<llmdlq::openai_compatible_client>(std::move(*opened));
}

// Runs `sql` on the PostgreSQL server; false when it failed.
bool run_sql(const char* conninfo, const std::string& sql) {
  PGconn* conn = PQconnectdb(conninfo);
  PGresult* result = PQexec(conn, sql.c_str());
  const bool done = PQresultStatus(result) == PGRES_COMMAND_OK;
  PQclear(result);
  PQfinish(conn);
  return done;
}

// What opened, or the end of the benchmark.
template <class Opened>
auto opened(Opened result) {
  if (!result) std::abort();
  return std::move(*result);
}

// A DLQ and its replay state, in one SQLite file or one PostgreSQL schema.
class dlq {
 public:
  virtual ~dlq() = default;
  virtual llmdlq::moderation_store& store() = 0;
  virtual llmdlq::replay_state& state() = 0;
};

class sqlite_dlq final : public dlq {
 public:
  sqlite_dlq()
      : store_(*llmdlq::sqlite_store::open(folder_.path() / "dlq.db")),
        state_(*llmdlq::sqlite_replay_state::open(folder_.path() / "dlq.db")) {}
  llmdlq::moderation_store& store() override { return store_; }
  llmdlq::replay_state& state() override { return state_; }

 private:
  bench::private_folder folder_;
  llmdlq::sqlite_store store_;
  llmdlq::sqlite_replay_state state_;
};

class postgres_dlq final : public dlq {
 public:
  explicit postgres_dlq(const char* server)
      : server_(server),
        made_(run_sql(server, "CREATE SCHEMA " + schema_)),
        conninfo_(std::string(server) + " options=-csearch_path=" + schema_),
        store_(opened(llmdlq::postgres_store::open(conninfo_))),
        state_(opened(llmdlq::postgres_replay_state::open(conninfo_))) {}
  ~postgres_dlq() override { (void)run_sql(server_, "DROP SCHEMA IF EXISTS " + schema_ + " CASCADE"); }
  postgres_dlq(const postgres_dlq&) = delete;
  postgres_dlq& operator=(const postgres_dlq&) = delete;
  llmdlq::moderation_store& store() override { return store_; }
  llmdlq::replay_state& state() override { return state_; }

 private:
  const char* server_;
  std::string schema_ = "llmdlq_replay_bench_" + std::to_string(::getpid());
  bool made_;
  std::string conninfo_;
  llmdlq::postgres_store store_;
  llmdlq::postgres_replay_state state_;
};

enum class backend : std::uint8_t { sqlite, postgres };

void replay(benchmark::State& state, backend kind) {
  const char* server = std::getenv("LLMDLQ_TEST_POSTGRES");
  if (kind == backend::postgres && server == nullptr) {
    state.SkipWithError("LLMDLQ_TEST_POSTGRES is not set (scripts/bench starts a PostgreSQL)");
    return;
  }
  const stand_in_server model;
  const auto dead = cut_off_letters();
  std::size_t recovered = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::unique_ptr<dlq> q;
    if (kind == backend::postgres) {
      q = std::make_unique<postgres_dlq>(server);
    } else {
      q = std::make_unique<sqlite_dlq>();
    }
    if (!q->store().publish_batch(dead)) std::abort();
    const auto first = client_of(model.base_url());
    auto ladder = llmdlq::recovery_ladder::create(schema_text, *first);
    if (!ladder) std::abort();
    llmdlq::moderation_replay_source source(q->store());
    llmdlq::replayer_options options;
    options.dry_run = false;
    options.rate = 0;
    options.concurrency = static_cast<std::size_t>(state.range(0));
    options.new_client = [url = model.base_url()] { return client_of(url); };
    llmdlq::replayer replayer(*ladder, source, q->state(), options);
    state.ResumeTiming();
    auto summary = replayer.run();
    if (!summary) {
      state.SkipWithError(summary.error().message.c_str());
      return;
    }
    recovered += summary->recovered;
  }
  if (recovered != letters * static_cast<std::size_t>(state.iterations())) {
    state.SkipWithError("not every letter was recovered");
    return;
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(letters));
}

}  // namespace

// 1, 4, 16 and 32 calls in flight, one timed run each (minutes each: whatever --repetitions says).
static void calls_in_flight(benchmark::internal::Benchmark* b) {
  b->Arg(1)->Arg(4)->Arg(16)->Arg(32)->Unit(benchmark::kSecond)->Iterations(1)->Repetitions(1)->UseRealTime();
}

BENCHMARK_CAPTURE(replay, postgres, backend::postgres)->Apply(calls_in_flight);
BENCHMARK_CAPTURE(replay, sqlite, backend::sqlite)->Apply(calls_in_flight);

BENCHMARK_MAIN();
