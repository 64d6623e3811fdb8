// SPDX-License-Identifier: MIT
// Dead-letter envelopes per second into each sink, and a worker's throughput
// end to end:
//   - sink/<sink>/single: publish() of one ~3 KB envelope (a schema failure of
//     a 1.8 KB receipt, raw response included), returning once it is durable;
//   - sink/<sink>/batch100: publish_batch() of 100 such envelopes;
//   - sink/fdatasync_floor/...: the same bytes appended to a file and
//     fdatasync'ed with no sink around them, the floor under the file sinks;
//   - worker/end_to_end/<sink>: pipeline::handle over 1,000 ~1 KB LLM
//     responses, 2 % of them failing (syntax and schema), the failures
//     dead-lettered into the sink; items are responses.
// Every envelope is new (its own dlq_id and idempotency key), so no sink
// takes the duplicate path. Times are wall-clock (UseRealTime): the sinks
// wait on fsync, sockets and delivery reports, not on the CPU. Runs that wait
// on the disk also report flush_ms, the disk's fdatasync latency around the
// run (see disk_flush_ms()).
//
// PostgreSQL and Redis come from LLMDLQ_TEST_POSTGRES (a libpq connection
// string) and LLMDLQ_TEST_REDIS (host:port), as scripts/lib/servers.sh
// exports them (scripts/bench starts those servers); without them those
// benchmarks are skipped with an error. Kafka is librdkafka's mock cluster,
// in this process. Each run writes to its own temporary directory, table,
// stream or cluster, and removes it afterwards.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <benchmark/benchmark.h>
#include <llmdlq/llmdlq.hpp>

#if LLMDLQ_BENCH_WITH_SQLITE
#include <llmdlq/sqlite/store.hpp>
#endif
#if LLMDLQ_BENCH_WITH_POSTGRES
#include <libpq-fe.h>
#include <llmdlq/postgres/store.hpp>
#endif
#if LLMDLQ_BENCH_WITH_REDIS
#include <hiredis/hiredis.h>
#include <llmdlq/redis/stream_sink.hpp>
#endif
#if LLMDLQ_BENCH_WITH_KAFKA
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <llmdlq/kafka/sink.hpp>
#endif

#include "documents.hpp"
#include "receipt_schema.hpp"
#include "private_folder.hpp"

namespace {

constexpr std::size_t batch_size = 100;
constexpr std::size_t worker_responses = 1000;  // per iteration of worker/end_to_end
constexpr std::size_t failure_every = 50;       // 2 %

using llmdlq_bench::receipt_schema;

llmdlq::process_config process_config() {
  llmdlq::process_config config;
  config.envelope.failure_code_prefix = "ocr";
  return config;
}

// What a worker knows about one call, as an OCR worker fills it in.
llmdlq::request_context context(std::string idempotency_key, std::int64_t offset) {
  llmdlq::request_context c;
  c.idempotency_key = std::move(idempotency_key);
  c.record_id = "scan-" + std::to_string(offset);
  c.correlation_id = "req-" + std::to_string(offset);
  c.model = {"ollama", "llama3.2-vision", "11b", 0.0, 2048, std::nullopt};
  c.prompt = {"receipt-extraction", "v3", ""};
  c.versions = {"receipt-v1", "v3", "11b", "tesseract-5.3", "worker-2.4.0"};
  c.origin = {"receipt-processor", "ocr-worker-1", "receipts", 3, offset};
  c.finish_reason = "stop";
  return c;
}

// Ids no other run shares: a UUIDv7 whose time is this process's start, with
// the process id and a counter in its random bits; keys likewise.
class unique_ids {
 public:
  unique_ids()
      : start_ms_(static_cast<std::uint64_t>(
            std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
                .count())),
        pid_(static_cast<std::uint64_t>(::getpid())) {}

  std::string next_dlq_id() {
    const std::uint64_t n = counter_.fetch_add(1, std::memory_order_relaxed);
    char id[40];
    std::snprintf(id, sizeof id, "%08llx-%04llx-7%03llx-%04llx-%012llx",
                  static_cast<unsigned long long>((start_ms_ >> 16) & 0xFFFFFFFFull),
                  static_cast<unsigned long long>(start_ms_ & 0xFFFFull),
                  static_cast<unsigned long long>(pid_ & 0xFFFull),
                  static_cast<unsigned long long>(0x8000ull | ((pid_ >> 12) & 0x3FFFull)),
                  static_cast<unsigned long long>(n & 0xFFFFFFFFFFFFull));
    return id;
  }

  std::string next_key() {
    return "receipts:" + std::to_string(pid_) + ":" + std::to_string(counter_.fetch_add(1, std::memory_order_relaxed));
  }

  // A name for this run's table, stream or file.
  std::string next_name(std::string_view stem) {
    return std::string(stem) + "_" + std::to_string(pid_) + "_" +
           std::to_string(counter_.fetch_add(1, std::memory_order_relaxed));
  }

 private:
  std::uint64_t start_ms_;
  std::uint64_t pid_;
  std::atomic<std::uint64_t> counter_{0};
};

unique_ids& ids() {
  static unique_ids instance;
  return instance;
}

// The envelope every sink benchmark publishes copies of: a 1.8 KB receipt
// whose total came back as a string (a schema failure, the commonest kind),
// with the OCR text the model saw, as process_llm_response writes it.
const llmdlq::envelope& template_envelope() {
  static const llmdlq::envelope e = [] {
    static const std::string raw = llmdlq_bench::make_receipt(1800, llmdlq_bench::total_as_string);
    static const std::string ocr =
        "ALBERT HEIJN 1423\nKassa 3  28-09-2026 17:42\nHALFVOLLE MELK 1L      1,19\nVOLKOREN BROOD         2,49\n"
        "GOUDSE KAAS JONG BEL   4,19\nTOTAAL               23,47\nPIN                  23,47\n";
    auto c = context("receipts:3:100042", 100042);
    c.original_input = ocr;
    auto r = llmdlq::process_llm_response(raw, receipt_schema(), c, process_config());
    if (r || r.error().failure.category != llmdlq::failure_category::schema) std::abort();
    return std::move(r.error());
  }();
  return e;
}

// Gives every envelope of the pool a new dlq_id and idempotency key.
void renew(std::vector<llmdlq::envelope>& pool) {
  for (auto& e : pool) {
    e.dlq_id = ids().next_dlq_id();
    e.idempotency_key = ids().next_key();
  }
}

// Publishes `batch` envelopes per iteration (publish() when 1, else
// publish_batch()). Envelopes are renamed a thousand at a time with the
// clock paused; `between` runs then too (the memory sink empties itself).
void publish_loop(benchmark::State& state, llmdlq::sink& sink, std::size_t batch,
                  const std::function<void()>& between = {}) {
  const auto& t = template_envelope();
  std::vector<llmdlq::envelope> pool(1000, t);
  renew(pool);
  std::size_t next = 0;
  for (auto _ : state) {
    if (next + batch > pool.size()) {
      state.PauseTiming();
      renew(pool);
      if (between) between();
      next = 0;
      state.ResumeTiming();
    }
    if (batch == 1) {
      auto r = sink.publish(pool[next]);
      if (!r) {
        state.SkipWithError(("publish failed: " + r.error().message).c_str());
        break;
      }
      benchmark::DoNotOptimize(r);
    } else {
      auto r = sink.publish_batch(std::span<const llmdlq::envelope>(pool).subspan(next, batch));
      if (!r) {
        state.SkipWithError(("publish_batch failed: " + r.error().message).c_str());
        break;
      }
      benchmark::DoNotOptimize(r);
    }
    next += batch;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * batch));
  state.counters["envelope_bytes"] = static_cast<double>(llmdlq::serialize(t).size());
}

// The shared virtual disk's flush latency swings with what else the host
// writes (from ~0.2 ms to ~4 ms per fdatasync here), and every durable sink
// follows it. The median of a few 3.5 KB appends + fdatasync, in a temporary
// directory on the filesystem the sinks and servers write to, before and
// after a run, reported as `flush_ms` beside the run's throughput.
double disk_flush_ms() {
  bench::private_folder dir;
  const int fd = ::open((dir.path() / "probe").c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
  if (fd < 0) return -1;
  const std::string line(3558, 'x');
  std::vector<double> ms;
  for (int i = 0; i < 15; ++i) {
    const auto start = std::chrono::steady_clock::now();
    if (::write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size()) || ::fdatasync(fd) != 0) break;
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  ::close(fd);
  if (ms.empty()) return -1;
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// Runs `body` between two disk probes and reports their mean as flush_ms.
void with_flush_probe(benchmark::State& state, const std::function<void()>& body) {
  const double before = disk_flush_ms();
  body();
  const double after = disk_flush_ms();
  state.counters["flush_ms"] = (before + after) / 2;
}

// --- the sinks, each opened for one run --------------------------------------

// The floor under the file sinks: write() of the envelopes' JSON lines to a
// file opened O_APPEND and one fdatasync(), with no sink around them.
void fdatasync_floor(benchmark::State& state, std::size_t batch) {
  bench::private_folder dir;
  const int fd = ::open((dir.path() / "floor.jsonl").c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
  if (fd < 0) {
    state.SkipWithError("cannot create a file in the temporary directory");
    return;
  }
  std::string lines;
  for (std::size_t i = 0; i < batch; ++i) lines += llmdlq::serialize(template_envelope()) + '\n';
  with_flush_probe(state, [&] {
    for (auto _ : state) {
      if (::write(fd, lines.data(), lines.size()) != static_cast<ssize_t>(lines.size()) || ::fdatasync(fd) != 0) {
        state.SkipWithError("write or fdatasync failed");
        break;
      }
    }
  });
  ::close(fd);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * batch));
  state.counters["envelope_bytes"] = static_cast<double>(lines.size() / batch - 1);
}

void memory_sink(benchmark::State& state, std::size_t batch) {
  llmdlq::memory_sink sink;
  publish_loop(state, sink, batch, [&] {
    if (sink.size() > 10000) sink.clear();
  });
}

void jsonl_sink(benchmark::State& state, std::size_t batch) {
  bench::private_folder dir;
  auto sink = llmdlq::jsonl_file_sink::open(dir.path() / "dead-letters.jsonl");  // fdatasync per append
  if (!sink) {
    state.SkipWithError(("jsonl_file_sink::open: " + sink.error().message).c_str());
    return;
  }
  with_flush_probe(state, [&] { publish_loop(state, *sink, batch); });
}

#if LLMDLQ_BENCH_WITH_SQLITE
void sqlite_store(benchmark::State& state, std::size_t batch) {
  bench::private_folder dir;
  auto sink = llmdlq::sqlite_store::open(dir.path() / "dlq.db");  // WAL, synchronous=FULL
  if (!sink) {
    state.SkipWithError(("sqlite_store::open: " + sink.error().message).c_str());
    return;
  }
  with_flush_probe(state, [&] { publish_loop(state, *sink, batch); });
}
#endif

#if LLMDLQ_BENCH_WITH_POSTGRES
// Drops the run's table through libpq directly, so that a shared server keeps nothing.
void drop_postgres_table(const char* conninfo, const std::string& qualified_table) {
  PGconn* conn = PQconnectdb(conninfo);
  if (PQstatus(conn) == CONNECTION_OK) PQclear(PQexec(conn, ("DROP TABLE IF EXISTS " + qualified_table).c_str()));
  PQfinish(conn);
}

void postgres_sink(benchmark::State& state, std::size_t batch) {
  const char* conninfo = std::getenv("LLMDLQ_TEST_POSTGRES");
  if (conninfo == nullptr || *conninfo == '\0') {
    state.SkipWithError("LLMDLQ_TEST_POSTGRES is not set (scripts/bench starts a server)");
    return;
  }
  llmdlq::postgres_store_options options;
  options.table = ids().next_name("bench_dlq");
  auto store = llmdlq::postgres_store::open(conninfo, options);
  if (!store) {
    state.SkipWithError(("postgres_store::open: " + store.error().message).c_str());
    return;
  }
  const std::string table = store->qualified_table();
  with_flush_probe(state, [&] { publish_loop(state, *store, batch); });
  drop_postgres_table(conninfo, table);
}
#endif

#if LLMDLQ_BENCH_WITH_REDIS
std::optional<llmdlq::redis_connection_options> redis_server() {
  const char* address = std::getenv("LLMDLQ_TEST_REDIS");
  if (address == nullptr) return std::nullopt;
  const std::string_view text = address;
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos) return std::nullopt;
  llmdlq::redis_connection_options c;
  c.host = std::string(text.substr(0, colon));
  c.port = std::atoi(std::string(text.substr(colon + 1)).c_str());
  return c;
}

// Removes the run's stream and dedupe keys, so that the server's memory and
// append-only file do not carry one run into the next.
void delete_redis_keys(const llmdlq::redis_connection_options& c, const std::string& stream) {
  redisContext* r = redisConnect(c.host.c_str(), c.port);
  if (r == nullptr) return;
  if (r->err == 0) {
    freeReplyObject(redisCommand(r, "DEL %s", stream.c_str()));
    const std::string pattern = stream + ":dedupe:*";
    std::string cursor = "0";
    do {
      auto* reply = static_cast<redisReply*>(redisCommand(r, "SCAN %s MATCH %s COUNT 1000", cursor.c_str(),
                                                          pattern.c_str()));
      if (reply == nullptr || reply->type != REDIS_REPLY_ARRAY || reply->elements != 2) {
        freeReplyObject(reply);
        break;
      }
      cursor.assign(reply->element[0]->str, reply->element[0]->len);
      const redisReply* keys = reply->element[1];
      if (keys->elements > 0) {  // one UNLINK per page: one AOF write and fsync, not one per key
        std::vector<const char*> argv{"UNLINK"};
        std::vector<std::size_t> lengths{6};
        for (std::size_t i = 0; i < keys->elements; ++i) {
          argv.push_back(keys->element[i]->str);
          lengths.push_back(keys->element[i]->len);
        }
        freeReplyObject(redisCommandArgv(r, static_cast<int>(argv.size()), argv.data(), lengths.data()));
      }
      freeReplyObject(reply);
    } while (cursor != "0");
  }
  redisFree(r);
}

void redis_sink(benchmark::State& state, std::size_t batch) {
  const auto server = redis_server();
  if (!server) {
    state.SkipWithError("LLMDLQ_TEST_REDIS (host:port) is not set (scripts/bench starts a server)");
    return;
  }
  llmdlq::redis_stream_sink_options options;
  options.connection = *server;
  options.stream = "llmdlq:bench:" + ids().next_name("dead_letters");
  options.dedupe_ttl = std::chrono::minutes(10);  // the keys outlive the run only briefly
  auto sink = llmdlq::redis_stream_sink::open(options);
  if (!sink) {
    state.SkipWithError(("redis_stream_sink::open: " + sink.error().message).c_str());
    return;
  }
  with_flush_probe(state, [&] { publish_loop(state, *sink, batch); });
  delete_redis_keys(*server, options.stream);
}
#endif

#if LLMDLQ_BENCH_WITH_KAFKA
void drop_kafka_log(const rd_kafka_t*, int, const char*, const char*) {}

// librdkafka's mock cluster, one broker, in this process: it speaks the real
// protocol over loopback TCP, and keeps what it is sent in memory.
//
// Its brokers' sockets take their options from the handle that owns the
// cluster, and librdkafka leaves Nagle's algorithm on by default: a broker
// then holds back its reply to the last of several ProduceRequests in
// flight (one per partition) until the client's delayed ACK, ~40 ms later,
// and a batch spread over partitions takes 40 ms whatever its size. Kafka's
// brokers set TCP_NODELAY; so does this mock.
class mock_cluster {
 public:
  explicit mock_cluster(int brokers = 1) {
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    rd_kafka_conf_set_log_cb(conf, drop_kafka_log);
    char error[512];
    if (rd_kafka_conf_set(conf, "socket.nagle.disable", "true", error, sizeof error) != RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      return;
    }
    owner_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof error);
    if (owner_ != nullptr) cluster_ = rd_kafka_mock_cluster_new(owner_, brokers);
  }
  ~mock_cluster() {
    if (cluster_ != nullptr) rd_kafka_mock_cluster_destroy(cluster_);
    if (owner_ != nullptr) rd_kafka_destroy(owner_);
  }
  mock_cluster(const mock_cluster&) = delete;
  mock_cluster& operator=(const mock_cluster&) = delete;

  [[nodiscard]] bool ok() const noexcept { return cluster_ != nullptr; }
  [[nodiscard]] std::string bootstrap() const { return rd_kafka_mock_cluster_bootstraps(cluster_); }
  [[nodiscard]] bool create_topic(const std::string& name, int partitions) const {
    return rd_kafka_mock_topic_create(cluster_, name.c_str(), partitions, 1) == RD_KAFKA_RESP_ERR_NO_ERROR;
  }

 private:
  rd_kafka_t* owner_ = nullptr;
  rd_kafka_mock_cluster_t* cluster_ = nullptr;
};

const std::string dlq_topic = "receipts-dead-letter-queue";
const std::string results_topic = "receipts-extracted";

// A kafka_sink on a fresh mock cluster (topics of 3 partitions), warmed up:
// the first publish to a topic waits for its metadata, which is no part of
// the steady state.
struct kafka_setup {
  mock_cluster cluster;
  std::optional<llmdlq::kafka_sink> sink;
  std::string error;

  explicit kafka_setup(const llmdlq::kafka_properties& extra) {
    if (!cluster.ok() || !cluster.create_topic(dlq_topic, 3) || !cluster.create_topic(results_topic, 3)) {
      error = "cannot start librdkafka's mock cluster";
      return;
    }
    llmdlq::kafka_sink_options options;
    options.properties = extra;
    options.properties["bootstrap.servers"] = cluster.bootstrap();
    options.topic = dlq_topic;
    auto created = llmdlq::kafka_sink::open(std::move(options));
    if (!created) {
      error = "kafka_sink::open: " + created.error().message;
      return;
    }
    sink.emplace(std::move(*created));
    sink->producer().prepare(results_topic);
    auto warm = template_envelope();
    warm.dlq_id = ids().next_dlq_id();
    warm.idempotency_key = ids().next_key();
    auto r = sink->publish(warm);
    auto s = sink->producer().send({results_topic, -1, "warm-up", "{}", {}});
    if (!r || !s) error = "warm-up publish failed: " + (r ? s.error().message : r.error().message);
  }
};

// librdkafka's own default linger.ms (5 in 2.0), set explicitly since the
// sink defaults to 0, or 0.
llmdlq::kafka_properties kafka_properties(bool linger0) { return {{"linger.ms", linger0 ? "0" : "5"}}; }

void kafka_sink(benchmark::State& state, std::size_t batch, bool linger0) {
  kafka_setup kafka(kafka_properties(linger0));
  if (!kafka.error.empty()) {
    state.SkipWithError(kafka.error.c_str());
    return;
  }
  publish_loop(state, *kafka.sink, batch);
}
#endif

// --- the worker ---------------------------------------------------------------

// 1,000 LLM responses as a receipt worker sees them: ~1 KB receipts, 2 % of
// them failing (every 50th), in turn a syntax failure and a schema failure
// (the total as a string; no currency). Local repair keeps learning new
// fixes, so the syntax failures are the first two of a few broken inputs
// that still fail as syntax (a bare word for a value needs a lossy repair; a
// ']' that closes nothing).
struct worker_inputs {
  std::vector<std::string> responses;
  std::size_t bytes = 0;
  std::string error;  // why the inputs could not be made
};

const worker_inputs& worker_responses_set() {
  static const worker_inputs inputs = [] {
    using namespace llmdlq_bench;
    worker_inputs in;
    const auto options = process_config();
    const auto c = context("check", 0);
    auto fails_as = [&](const std::string& raw, llmdlq::failure_category category) {
      auto r = llmdlq::process_llm_response(raw, receipt_schema(), c, options);
      return !r && r.error().failure.category == category;
    };
    const std::string base = make_receipt(1000);
    auto replaced = [&](std::string_view from, std::string_view to) {
      std::string text = base;
      const auto at = text.find(from);
      if (at != std::string::npos) text.replace(at, from.size(), to);
      return text;
    };
    std::vector<std::string> syntax;
    for (auto&& candidate :
         {replaced(R"("currency":"EUR")", R"("currency":EUR)"), replaced(R"(],"confidence")", R"(]],"confidence")"),
          replaced(R"("currency":"EUR")", R"("currency":"EUR"}})"), replaced(R"("card",)", R"("card,)")}) {
      if (syntax.size() < 2 && fails_as(candidate, llmdlq::failure_category::syntax)) syntax.push_back(candidate);
    }
    std::vector<std::string> schema;
    for (auto&& candidate : {make_receipt(1000, total_as_string), make_receipt(1000, missing_currency)}) {
      if (fails_as(candidate, llmdlq::failure_category::schema)) schema.push_back(candidate);
    }
    if (syntax.empty() || schema.empty()) {
      in.error = "no broken input fails as syntax or schema any more: update worker_responses_set()";
      return in;
    }
    std::vector<std::string> failures;  // syntax and schema in turn
    for (std::size_t i = 0; i < std::max(syntax.size(), schema.size()); ++i) {
      failures.push_back(syntax[i % syntax.size()]);
      failures.push_back(schema[i % schema.size()]);
    }
    std::vector<std::string> accepted;
    for (std::size_t size = 900; size < 1160; size += 20) {
      accepted.push_back(make_receipt(size));
      if (!llmdlq::process_llm_response(accepted.back(), receipt_schema(), c, options)) {
        in.error = "a generated receipt is not accepted";
        return in;
      }
    }
    std::size_t failed = 0;
    for (std::size_t i = 0; i < worker_responses; ++i) {
      if (i % failure_every == failure_every - 1) {
        in.responses.push_back(failures[failed++ % failures.size()]);
      } else {
        in.responses.push_back(accepted[i % accepted.size()]);
      }
      in.bytes += in.responses.back().size();
    }
    return in;
  }();
  return inputs;
}

// `on_accepted` is what the worker does with an accepted result before it
// commits (nothing, or producing it to the results topic and waiting for the
// delivery report, as examples/kafka_worker.cpp does).
void worker_loop(benchmark::State& state, llmdlq::sink& sink,
                 const std::function<bool(const std::string& key, const llmdlq::accepted&)>& on_accepted = {}) {
  const auto& inputs = worker_responses_set();
  if (!inputs.error.empty()) {
    state.SkipWithError(inputs.error.c_str());
    return;
  }
  const llmdlq::pipeline pipeline{receipt_schema(), sink, process_config()};
  std::int64_t offset = 0;
  std::size_t dead_letters = 0;
  for (auto _ : state) {
    for (const auto& raw : inputs.responses) {
      const auto c = context(ids().next_key(), offset++);
      const llmdlq::disposition d = pipeline.handle(raw, c);
      if (d == llmdlq::disposition::retry) {
        state.SkipWithError(("the sink failed: " + d.error->message).c_str());
        return;
      }
      if (d.dead_letter) ++dead_letters;
      if (d.accepted && on_accepted && !on_accepted(c.idempotency_key, *d.accepted)) {
        state.SkipWithError("producing an accepted result failed");
        return;
      }
      benchmark::DoNotOptimize(d);
    }
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * inputs.responses.size()));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * inputs.bytes));
  state.counters["dead_letter_share"] = static_cast<double>(dead_letters) /
                                        static_cast<double>(state.iterations() * inputs.responses.size());
}

#if LLMDLQ_BENCH_WITH_SQLITE
void worker_sqlite(benchmark::State& state) {
  bench::private_folder dir;
  auto sink = llmdlq::sqlite_store::open(dir.path() / "dlq.db");
  if (!sink) {
    state.SkipWithError(("sqlite_store::open: " + sink.error().message).c_str());
    return;
  }
  with_flush_probe(state, [&] { worker_loop(state, *sink); });
}
#endif

#if LLMDLQ_BENCH_WITH_KAFKA
void worker_kafka(benchmark::State& state, bool linger0, bool produce_results) {
  kafka_setup kafka(kafka_properties(linger0));
  if (!kafka.error.empty()) {
    state.SkipWithError(kafka.error.c_str());
    return;
  }
  if (!produce_results) {
    worker_loop(state, *kafka.sink);
    return;
  }
  auto& producer = kafka.sink->producer();
  worker_loop(state, *kafka.sink, [&](const std::string& key, const llmdlq::accepted& a) {
    return producer.send({results_topic, -1, key, a.json, {}}).has_value();
  });
}
#endif

void add(const std::string& name, std::function<void(benchmark::State&)> run) {
  benchmark::RegisterBenchmark(name.c_str(), [run = std::move(run)](benchmark::State& s) { run(s); })
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
}

void add_sink(const std::string& sink, const std::function<void(benchmark::State&, std::size_t)>& run) {
  add("sink/" + sink + "/single", [run](benchmark::State& s) { run(s, 1); });
  add("sink/" + sink + "/batch100", [run](benchmark::State& s) { run(s, batch_size); });
}

const int registered = [] {
  add_sink("memory", memory_sink);
  add_sink("fdatasync_floor", fdatasync_floor);
  add_sink("jsonl", jsonl_sink);
#if LLMDLQ_BENCH_WITH_SQLITE
  add_sink("sqlite", sqlite_store);
#endif
#if LLMDLQ_BENCH_WITH_POSTGRES
  add_sink("postgres", postgres_sink);
#endif
#if LLMDLQ_BENCH_WITH_REDIS
  add_sink("redis", redis_sink);
#endif
#if LLMDLQ_BENCH_WITH_KAFKA
  add_sink("kafka", [](benchmark::State& s, std::size_t batch) { kafka_sink(s, batch, false); });
  add_sink("kafka_linger0", [](benchmark::State& s, std::size_t batch) { kafka_sink(s, batch, true); });
#endif
#if LLMDLQ_BENCH_WITH_SQLITE
  add("worker/end_to_end/sqlite", worker_sqlite);
#endif
#if LLMDLQ_BENCH_WITH_KAFKA
  add("worker/end_to_end/kafka", [](benchmark::State& s) { worker_kafka(s, false, false); });
  add("worker/end_to_end/kafka_linger0", [](benchmark::State& s) { worker_kafka(s, true, false); });
  add("worker/end_to_end/kafka_results", [](benchmark::State& s) { worker_kafka(s, false, true); });
  add("worker/end_to_end/kafka_linger0_results", [](benchmark::State& s) { worker_kafka(s, true, true); });
#endif
  return 0;
}();

}  // namespace

BENCHMARK_MAIN();
