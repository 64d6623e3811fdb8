// SPDX-License-Identifier: MIT
// The PostgreSQL moderation store against a real server (scripts/test starts
// one and sets LLMDLQ_TEST_POSTGRES; without it every test skips itself).
// Each test works in a table of its own, dropped at its end.
#include <libpq-fe.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <latch>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <boost/json.hpp>
#include <fmt/format.h>

#include <llmdlq/process.hpp>
#include <llmdlq/postgres/store.hpp>

#include "catch.hpp"
#include "support/skip.hpp"
#include "support/envelope_check.hpp"
#include "support/eventually.hpp"

namespace postgres_store_test {

using namespace std::chrono_literals;

namespace {

const char* conninfo() { return std::getenv("LLMDLQ_TEST_POSTGRES"); }

#define REQUIRE_POSTGRES()                                                                              \
  do {                                                                                                  \
    if (!conninfo()) LLMDLQ_SKIP("LLMDLQ_TEST_POSTGRES is not set (scripts/test starts a PostgreSQL)"); \
  } while (false)

std::string random_suffix() {
  std::random_device device;
  std::mt19937_64 random(device() ^ (std::uint64_t{device()} << 32));
  return fmt::format("{:016x}", random());
}

void drop_notice(void*, const char*) {}

// SQL run directly, as an operator's tool would: a connection of its own.
class database {
 public:
  database() : conn_(PQconnectdb(conninfo())) {
    PQsetNoticeProcessor(conn_, drop_notice, nullptr);
    REQUIRE(PQstatus(conn_) == CONNECTION_OK);
  }
  database(const database&) = delete;
  database& operator=(const database&) = delete;
  ~database() { PQfinish(conn_); }

  // The first column of each row.
  std::vector<std::string> column(const std::string& sql, const std::vector<std::string>& params = {}) {
    std::vector<const char*> values;
    for (const auto& p : params) values.push_back(p.c_str());
    PGresult* r = PQexecParams(conn_, sql.c_str(), static_cast<int>(values.size()), nullptr, values.data(), nullptr,
                               nullptr, 0);
    const auto status = PQresultStatus(r);
    INFO(sql << ": " << PQresultErrorMessage(r));
    std::vector<std::string> rows;
    if (status == PGRES_TUPLES_OK) {
      for (int i = 0; i < PQntuples(r); ++i) rows.emplace_back(PQgetvalue(r, i, 0));
    }
    PQclear(r);
    REQUIRE((status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK));
    return rows;
  }

  // Runs `sql`, which may be several statements.
  void execute(const std::string& sql) {
    PGresult* r = PQexec(conn_, sql.c_str());
    const auto status = PQresultStatus(r);
    INFO(sql << ": " << PQresultErrorMessage(r));
    PQclear(r);
    REQUIRE((status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK));
  }

  // The first column of the first row ("" when there is none).
  std::string value(const std::string& sql, const std::vector<std::string>& params = {}) {
    auto rows = column(sql, params);
    return rows.empty() ? std::string() : rows.front();
  }

 private:
  PGconn* conn_;
};

// A table (and optionally a schema) of this test's own, dropped at the end.
struct scratch_table {
  std::string name = "llmdlq_test_" + random_suffix();
  std::string schema;

  llmdlq::postgres_store_options options() const {
    llmdlq::postgres_store_options o;
    o.table = name;
    o.schema = schema;
    return o;
  }

  std::string sql_name() const { return schema.empty() ? '"' + name + '"' : '"' + schema + "\".\"" + name + '"'; }

  ~scratch_table() {
    // No REQUIRE here: a destructor must not throw.
    PGconn* conn = PQconnectdb(conninfo());
    PQsetNoticeProcessor(conn, drop_notice, nullptr);
    const std::string sql = schema.empty() ? fmt::format("DROP TABLE IF EXISTS {}", sql_name())
                                           : fmt::format("DROP SCHEMA IF EXISTS \"{}\" CASCADE", schema);
    PQclear(PQexec(conn, sql.c_str()));
    PQfinish(conn);
  }
};

llmdlq::envelope sample(std::string key, std::uint32_t attempt = 1,
                        llmdlq::failure_category category = llmdlq::failure_category::syntax) {
  llmdlq::request_context context;
  context.idempotency_key = std::move(key);
  context.attempt = attempt;
  llmdlq::process_options options;
  options.failure_code_prefix = "ocr";
  return llmdlq::test::check_envelope(llmdlq::make_envelope({.category = category, .message = "test failure"},
                                                            R"({"merchant": "Jumbo", "total": )", context, options));
}

llmdlq::postgres_store open_store(const scratch_table& table) {
  auto store = llmdlq::postgres_store::open(conninfo(), table.options());
  INFO((store ? "" : store.error().message));
  REQUIRE(store.has_value());
  return std::move(*store);
}

std::string published(llmdlq::postgres_store& store, const llmdlq::envelope& e) {
  auto r = store.publish(e);
  INFO((r ? "" : r.error().message));
  REQUIRE(r.has_value());
  CHECK_FALSE(r->duplicate);
  return e.dlq_id;
}

llmdlq::moderation_request request(const std::string& id, llmdlq::moderation_action action, std::string who = "alice",
                                   std::optional<std::string> corrected = std::nullopt) {
  llmdlq::moderation_request r;
  r.dlq_id = id;
  r.action = action;
  r.operator_name = std::move(who);
  r.note = fmt::format("{} by test", llmdlq::to_string(action));
  const bool corrects = action == llmdlq::moderation_action::resolve || action == llmdlq::moderation_action::recover;
  if (corrects && !corrected) corrected = R"({"merchant": "Jumbo", "total": 8.1})";
  r.corrected = std::move(corrected);
  return r;
}

bool replayer_action(llmdlq::moderation_action action) {
  return action == llmdlq::moderation_action::record_attempt || action == llmdlq::moderation_action::recover ||
         action == llmdlq::moderation_action::exhaust;
}

// request(), with the stored envelope (one more attempt in its history) for the replayer's actions.
llmdlq::moderation_request request(llmdlq::postgres_store& store, const std::string& id,
                                   llmdlq::moderation_action action, std::string who = "alice") {
  auto r = request(id, action, std::move(who));
  if (replayer_action(action)) {
    auto record = store.get(id);
    REQUIRE(record.has_value());
    REQUIRE(record->has_value());
    auto e = llmdlq::parse_envelope((*record)->envelope_json);
    REQUIRE(e.has_value());
    e->attempts.history.push_back({.strategy = "repair_prompt",
                                   .outcome = "failed",
                                   .tokens = 90,
                                   .at = llmdlq::system_now(),
                                   .model = "small-model",
                                   .latency_ms = 700,
                                   .fingerprint = "syntax:eof"});
    r.envelope_json = llmdlq::serialize(*e);
  }
  return r;
}

// Moves a fresh pending record to `status` with the actions that lead there.
void reach(llmdlq::postgres_store& store, const std::string& id, llmdlq::moderation_status status) {
  using a = llmdlq::moderation_action;
  std::vector<a> path;
  switch (status) {
    case llmdlq::moderation_status::pending: break;
    case llmdlq::moderation_status::claimed: path = {a::claim}; break;
    case llmdlq::moderation_status::resolved: path = {a::claim, a::resolve}; break;
    case llmdlq::moderation_status::discarded: path = {a::discard}; break;
    case llmdlq::moderation_status::requeued: path = {a::requeue}; break;
    case llmdlq::moderation_status::recovered: path = {a::recover}; break;
    case llmdlq::moderation_status::exhausted: path = {a::exhaust}; break;
    case llmdlq::moderation_status::redriven: path = {a::redrive}; break;
  }
  for (const auto action : path) {
    auto r = store.act(request(store, id, action, "setup"));
    INFO((r ? "" : r.error().message));
    REQUIRE(r.has_value());
  }
}

boost::json::array log_of(const llmdlq::moderation_record& record) {
  auto log = boost::json::parse(record.operator_log);
  REQUIRE(log.is_array());
  return log.as_array();
}

// A string member of a log entry ("" when absent or not a string).
std::string field(const boost::json::value& entry, std::string_view key) {
  const auto* object = entry.if_object();
  const auto* found = object ? object->if_contains(key) : nullptr;
  return found && found->is_string() ? std::string(found->get_string()) : std::string();
}

constexpr std::array all_actions = {llmdlq::moderation_action::claim,          llmdlq::moderation_action::resolve,
                                    llmdlq::moderation_action::discard,        llmdlq::moderation_action::requeue,
                                    llmdlq::moderation_action::record_attempt, llmdlq::moderation_action::recover,
                                    llmdlq::moderation_action::exhaust,        llmdlq::moderation_action::redrive};

}  // namespace

TEST_CASE("postgres_store migrates idempotently into the documented table", "[postgres]") {
  REQUIRE_POSTGRES();
  scratch_table table;
  auto store = open_store(table);
  CHECK(store.qualified_table() == table.sql_name());
  database db;
  const auto columns = db.column(
      "SELECT column_name || ':' || data_type FROM information_schema.columns WHERE table_name = $1 "
      "ORDER BY ordinal_position",
      {table.name});
  CHECK(columns == std::vector<std::string>{
                       "dlq_id:text", "idempotency_key:text", "attempt:bigint", "status:text", "category:text",
                       "triage:text", "action:text", "failure_code:text", "message:text", "raw_response:text",
                       "raw_sha256:text", "envelope:jsonb", "created_at:timestamp with time zone",
                       "updated_at:timestamp with time zone", "expires_at:timestamp with time zone",
                       "operator_log:jsonb", "claimed_by:text", "resolution:jsonb"});
  CHECK(db.column("SELECT indexname FROM pg_indexes WHERE tablename = $1 ORDER BY indexname", {table.name}) ==
        std::vector<std::string>{table.name + "_created", table.name + "_expires", table.name + "_key_attempt",
                                 table.name + "_pkey", table.name + "_queue", table.name + "_status"});

  // Again, on the same store, from a second store, and with a row in the table: nothing changes.
  const auto id = published(store, sample("receipt-1"));
  REQUIRE(store.migrate().has_value());
  REQUIRE(store.migrate().has_value());
  auto second = open_store(table);
  REQUIRE(second.migrate().has_value());
  CHECK(db.value(fmt::format("SELECT count(*) FROM {}", table.sql_name())) == "1");
  auto found = second.get(id);
  REQUIRE(found.has_value());
  CHECK(found->has_value());

  // The status column takes the five statuses only.
  CHECK(db.value("SELECT count(*) FROM information_schema.check_constraints c JOIN "
                 "information_schema.constraint_column_usage u USING (constraint_name) "
                 "WHERE u.table_name = $1 AND u.column_name = 'status'",
                 {table.name}) == "1");
}

TEST_CASE("postgres_store migrations from several processes at once take turns", "[postgres]") {
  REQUIRE_POSTGRES();
  scratch_table table;
  std::latch start(3);
  std::vector<std::string> errors(3);
  {
    std::vector<std::jthread> threads;
    for (std::size_t i = 0; i < 3; ++i) {
      threads.emplace_back([&, i] {
        start.arrive_and_wait();
        auto store = llmdlq::postgres_store::open(conninfo(), table.options());
        if (!store) errors[i] = store.error().message;
      });
    }
  }
  for (const auto& error : errors) CHECK(error == "");
}

TEST_CASE("postgres_store takes a schema, and checks its names before connecting", "[postgres]") {
  REQUIRE_POSTGRES();
  scratch_table table;
  table.schema = "llmdlq_test_schema_" + random_suffix();
  auto store = open_store(table);
  CHECK(store.qualified_table() == table.sql_name());
  const auto id = published(store, sample("receipt-1"));
  database db;
  CHECK(db.value(fmt::format("SELECT status FROM {} WHERE dlq_id = $1", table.sql_name()), {id}) == "pending");

  for (const std::string bad :
       std::initializer_list<std::string>{"", "1table", "bad-name", "x\"; DROP TABLE y; --", "a b", "tablé",
                                          std::string(49, 'a'), std::string(64, 'a')}) {
    INFO(bad);
    llmdlq::postgres_store_options options;
    options.table = bad;
    auto refused = llmdlq::postgres_store::open(conninfo(), options);
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code == llmdlq::sink_errc::rejected);
    if (bad.empty() || bad.size() == 49) continue;  // no schema, and a valid schema name
    options.table = "fine";
    options.schema = bad;
    refused = llmdlq::postgres_store::open(conninfo(), options);
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code == llmdlq::sink_errc::rejected);
  }
  llmdlq::postgres_store_options longest;
  longest.table = std::string(48, 'a');
  longest.migrate = false;
  auto missing = llmdlq::postgres_store::open(conninfo(), longest);  // valid name, no such table
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().code == llmdlq::sink_errc::rejected);
  CHECK(missing.error().message.find("does not exist") != std::string::npos);
}

TEST_CASE("postgres_store reports an unreachable server as unavailable", "[postgres]") {
  REQUIRE_POSTGRES();
  auto store = llmdlq::postgres_store::open("host=127.0.0.1 port=1 connect_timeout=2 dbname=postgres");
  REQUIRE_FALSE(store.has_value());
  CHECK(store.error().code == llmdlq::sink_errc::unavailable);
  CHECK(store.error().message.starts_with("postgres: connect: "));
}

TEST_CASE("postgres_store stores one pending row per envelope, and publishing it again is a duplicate", "[postgres]") {
  REQUIRE_POSTGRES();
  scratch_table table;
  auto options = table.options();
  const auto fixed_now = llmdlq::parse_rfc3339("2026-11-30T08:15:00.250Z").value();
  options.clock = [&] { return fixed_now; };
  auto opened = llmdlq::postgres_store::open(conninfo(), options);
  REQUIRE(opened.has_value());
  auto& store = *opened;
  auto e = sample("receipt-1");
  e.expires_at = e.created_at + std::chrono::days(30);
  auto first = store.publish(e);
  REQUIRE(first.has_value());
  CHECK_FALSE(first->duplicate);
  CHECK(first->dlq_id == e.dlq_id);
  CHECK(first->location == "postgres:postgres#" + table.name);
  auto again = store.publish(e);
  REQUIRE(again.has_value());
  CHECK(again->duplicate);

  database db;
  const auto t = table.sql_name();
  CHECK(db.value(fmt::format("SELECT count(*) FROM {}", t)) == "1");
  CHECK(db.value(fmt::format("SELECT concat_ws('/', status, category, triage, action, failure_code, attempt, "
                             "idempotency_key, message) FROM {}",
                             t)) == "pending/syntax/transient/local_repair/ocr_structural_broken_json/1/receipt-1/"
                                    "test failure");
  CHECK(db.value(fmt::format("SELECT envelope->>'dlq_id' FROM {}", t)) == e.dlq_id);
  CHECK(db.value(fmt::format("SELECT raw_sha256 = envelope->'raw_response'->>'sha256' FROM {}", t)) == "t");
  CHECK(db.value(fmt::format("SELECT expires_at - created_at FROM {}", t)) == "30 days");
  CHECK(db.value(fmt::format("SELECT jsonb_typeof(operator_log) || jsonb_array_length(operator_log) FROM {}", t)) ==
        "array0");

  auto record = store.get(e.dlq_id);
  REQUIRE(record.has_value());
  REQUIRE(record->has_value());
  const auto& r = **record;
  CHECK(r.dlq_id == e.dlq_id);
  CHECK(r.status == llmdlq::moderation_status::pending);
  CHECK(r.category == "syntax");
  CHECK(r.triage == "transient");
  CHECK(r.failure_code == "ocr_structural_broken_json");
  CHECK(r.raw_response == R"({"merchant": "Jumbo", "total": )");
  CHECK(r.created_at == llmdlq::format_rfc3339(e.created_at));
  CHECK(r.updated_at == "2026-11-30T08:15:00.250Z");
  CHECK(r.operator_log == "[]");
  CHECK(r.claimed_by.empty());
  CHECK_FALSE(r.resolution.has_value());
  auto stored = llmdlq::parse_envelope(r.envelope_json);  // jsonb's key order, the same envelope
  REQUIRE(stored.has_value());
  CHECK(*stored == e);

  auto absent = store.get("0190b6f2-0000-7000-8000-000000000000");
  REQUIRE(absent.has_value());
  CHECK_FALSE(absent->has_value());
}

TEST_CASE("postgres_store: the same idempotency key and attempt is a duplicate, the next attempt a new row",
          "[postgres]") {
  REQUIRE_POSTGRES();
  scratch_table table;
  auto store = open_store(table);
  published(store, sample("receipt-1", 1));
  // Same input, same attempt, a new envelope (a worker that crashed before committing its offset).
  const auto first = sample("receipt-1", 1);
  auto replayed = store.publish(sample("receipt-1", 1));
  REQUIRE(replayed.has_value());
  CHECK(replayed->duplicate);
  CHECK(replayed->dlq_id == first.dlq_id);
  // An envelope for the same input and attempt under another dlq_id (one
  // written by an older version): the receipt names the stored row.
  auto older = sample("receipt-1", 1);
  older.dlq_id = "0190b6f2-0000-7000-8000-00000000abcd";
  auto named = store.publish(older);
  REQUIRE(named.has_value());
  CHECK(named->duplicate);
  CHECK(named->dlq_id == first.dlq_id);
  published(store, sample("receipt-1", 2));
  published(store, sample("receipt-2", 1));
  // Without a host key the derived key makes an identical failure one row.
  published(store, sample("", 1));
  auto same = store.publish(sample("", 1));
  REQUIRE(same.has_value());
  CHECK(same->duplicate);
  database db;
  CHECK(db.value(fmt::format("SELECT count(*) FROM {}", table.sql_name())) == "4");
}

TEST_CASE("postgres_store batches are one transaction", "[postgres]") {
  REQUIRE_POSTGRES();
  scratch_table table;
  auto store = open_store(table);
  const auto stored = sample("receipt-0");
  published(store, stored);
  const std::vector<llmdlq::envelope> batch = {sample("receipt-1"), stored, sample("receipt-2"), sample("receipt-3")};
  auto receipts = store.publish_batch(batch);
  REQUIRE(receipts.has_value());
  REQUIRE(receipts->size() == 4);
  CHECK_FALSE((*receipts)[0].duplicate);
  CHECK((*receipts)[1].duplicate);
  CHECK_FALSE((*receipts)[2].duplicate);
  CHECK((*receipts)[3].dlq_id == batch[3].dlq_id);
  database db;
  const auto count = fmt::format("SELECT count(*) FROM {}", table.sql_name());
  CHECK(db.value(count) == "4");
  auto empty = store.publish_batch({});
  REQUIRE(empty.has_value());
  CHECK(empty->empty());

  // A batch whose last row the table refuses stores nothing at all.
  db.value(fmt::format("ALTER TABLE {} ADD CONSTRAINT no_poison CHECK (category <> 'poison')", table.sql_name()));
  const std::vector<llmdlq::envelope> refused = {sample("receipt-4"), sample("receipt-5"),
                                                 sample("receipt-6", 1, llmdlq::failure_category::poison)};
  auto failed = store.publish_batch(refused);
  REQUIRE_FALSE(failed.has_value());
  CHECK(failed.error().code == llmdlq::sink_errc::rejected);
  CHECK(failed.error().message.find("no_poison") != std::string::npos);
  CHECK(db.value(count) == "4");
  // The connection is still usable: the failed transaction was rolled back.
  published(store, sample("receipt-7"));
  CHECK(db.value(count) == "5");
}

TEST_CASE("postgres_store operator actions follow transition(), forbidden ones change nothing", "[postgres]") {
  REQUIRE_POSTGRES();
  scratch_table table;
  auto store = open_store(table);
  int n = 0;
  for (const auto from : llmdlq::all_moderation_statuses) {
    for (const auto action : all_actions) {
      const auto id = published(store, sample("receipt-" + std::to_string(++n)));
      reach(store, id, from);
      auto before = store.get(id);
      REQUIRE(before.has_value());
      REQUIRE(before->has_value());
      REQUIRE((*before)->status == from);
      INFO(llmdlq::to_string(action) << " from " << llmdlq::to_string(from));
      auto r = store.act(request(store, id, action, "bob"));
      if (const auto to = llmdlq::transition(from, action)) {
        INFO((r ? "" : r.error().message));
        REQUIRE(r.has_value());
        CHECK(r->dlq_id == id);
        CHECK(r->status == *to);
        const auto log = log_of(*r);
        REQUIRE(log.size() == log_of(**before).size() + 1);
        const auto& entry = log.back();
        CHECK(field(entry, "operator") == "bob");
        CHECK(field(entry, "action") == llmdlq::to_string(action));
        CHECK(field(entry, "from") == llmdlq::to_string(from));
        CHECK(field(entry, "to") == llmdlq::to_string(*to));
        CHECK(field(entry, "note") == fmt::format("{} by test", llmdlq::to_string(action)));
        CHECK(field(entry, "at") == r->updated_at);
        CHECK(llmdlq::parse_rfc3339(r->updated_at).has_value());
        CHECK(r->claimed_by == (*to == llmdlq::moderation_status::claimed ? "bob" : (*before)->claimed_by));
        if (action == llmdlq::moderation_action::resolve || action == llmdlq::moderation_action::recover) {
          REQUIRE(r->resolution.has_value());
          CHECK(boost::json::parse(*r->resolution) == boost::json::parse(R"({"merchant": "Jumbo", "total": 8.1})"));
        } else {
          CHECK_FALSE(r->resolution.has_value());
        }
        const auto history = [](const std::string& json) {
          return llmdlq::parse_envelope(json)->attempts.history.size();
        };
        CHECK(history(r->envelope_json) == history((*before)->envelope_json) + (replayer_action(action) ? 1 : 0));
        auto after = store.get(id);
        REQUIRE(after.has_value());
        CHECK((*after)->operator_log == r->operator_log);
      } else {
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == llmdlq::moderation_errc::invalid_transition);
        REQUIRE(r.error().current.has_value());
        CHECK(*r.error().current == from);
        auto after = store.get(id);
        REQUIRE(after.has_value());
        REQUIRE(after->has_value());
        CHECK((*after)->status == from);
        CHECK((*after)->operator_log == (*before)->operator_log);
        CHECK((*after)->updated_at == (*before)->updated_at);
      }
    }
  }
  // The whole history of one record: claim, requeue, claim again, resolve.
  const auto id = published(store, sample("receipt-history"));
  for (const auto action : {llmdlq::moderation_action::claim, llmdlq::moderation_action::requeue,
                            llmdlq::moderation_action::claim, llmdlq::moderation_action::resolve}) {
    REQUIRE(store.act(request(id, action, action == llmdlq::moderation_action::claim ? "carol" : "dave")).has_value());
  }
  auto done = store.get(id);
  REQUIRE(done.has_value());
  const auto log = log_of(**done);
  REQUIRE(log.size() == 4);
  CHECK(field(log[1], "from") == "claimed");
  CHECK(field(log[1], "to") == "requeued");
  CHECK(field(log[2], "from") == "requeued");
  CHECK((*done)->claimed_by == "carol");

  auto missing = store.act(request("0190b6f2-0000-7000-8000-000000000000", llmdlq::moderation_action::claim));
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().code == llmdlq::moderation_errc::not_found);
  CHECK_FALSE(missing.error().current.has_value());
}

TEST_CASE("postgres_store resolves only with strict JSON that PostgreSQL can store", "[postgres]") {
  REQUIRE_POSTGRES();
  scratch_table table;
  auto store = open_store(table);
  const auto id = published(store, sample("receipt-1"));
  reach(store, id, llmdlq::moderation_status::claimed);

  auto without = request(id, llmdlq::moderation_action::resolve);
  without.corrected.reset();
  for (auto bad : {without, request(id, llmdlq::moderation_action::resolve, "alice", "{'merchant': 'Jumbo'}"),
                   request(id, llmdlq::moderation_action::resolve, "alice", R"({"merchant": "Jumbo",})"),
                   request(id, llmdlq::moderation_action::resolve, "alice", "```json\n{}\n```"),
                   request(id, llmdlq::moderation_action::resolve, "alice", "\"\xff\""),
                   request(id, llmdlq::moderation_action::resolve, "alice", R"({"merchant": "Jum\u0000bo"})")}) {
    INFO((bad.corrected ? *bad.corrected : "(none)"));
    auto r = store.act(bad);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == llmdlq::moderation_errc::invalid_resolution);
    CHECK_FALSE(r.error().message.empty());
  }
  auto record = store.get(id);
  REQUIRE(record.has_value());
  CHECK((*record)->status == llmdlq::moderation_status::claimed);
  CHECK(log_of(**record).size() == 1);
  CHECK_FALSE((*record)->resolution.has_value());

  const std::string corrected = R"({"merchant": "Пятёрочка", "total": 1384.50, "items": [{"sku": "A-1"}]})";
  auto resolved = store.act(request(id, llmdlq::moderation_action::resolve, "alice", corrected));
  INFO((resolved ? "" : resolved.error().message));
  REQUIRE(resolved.has_value());
  CHECK(resolved->status == llmdlq::moderation_status::resolved);
  REQUIRE(resolved->resolution.has_value());
  CHECK(boost::json::parse(*resolved->resolution) == boost::json::parse(corrected));
  database db;
  CHECK(db.value(fmt::format("SELECT resolution->>'merchant' FROM {}", table.sql_name())) == "Пятёрочка");
}

TEST_CASE("postgres_store: of two operators claiming at once, exactly one wins", "[postgres]") {
  REQUIRE_POSTGRES();
  scratch_table table;
  // Two stores: two connections, as two operators' processes would have.
  auto first = open_store(table);
  auto second = open_store(table);
  std::vector<std::string> ids;
  for (int i = 0; i < 60; ++i) ids.push_back(published(first, sample(fmt::format("receipt-{}", i))));

  struct outcome {
    std::vector<std::string> won;
    int lost_to_claimed = 0;
    std::vector<std::string> unexpected_errors;
  };
  outcome a, b;
  std::latch start(2);
  const auto claim_all = [&](llmdlq::postgres_store& store, const std::string& who, outcome& out) {
    start.arrive_and_wait();
    for (const auto& id : ids) {
      auto r = store.act(request(id, llmdlq::moderation_action::claim, who));
      if (r) {
        out.won.push_back(id);
      } else if (r.error().code == llmdlq::moderation_errc::invalid_transition && r.error().current &&
                 *r.error().current == llmdlq::moderation_status::claimed) {
        ++out.lost_to_claimed;
      } else {
        out.unexpected_errors.push_back(r.error().message);
      }
    }
  };
  {
    std::jthread one(claim_all, std::ref(first), "alice", std::ref(a));
    std::jthread two(claim_all, std::ref(second), "bob", std::ref(b));
  }
  CHECK(a.unexpected_errors.empty());
  CHECK(b.unexpected_errors.empty());
  CHECK(a.won.size() + b.won.size() == ids.size());
  CHECK(a.lost_to_claimed + b.lost_to_claimed == static_cast<int>(ids.size()));
  std::set<std::string> winners(a.won.begin(), a.won.end());
  winners.insert(b.won.begin(), b.won.end());
  CHECK(winners.size() == ids.size());
  database db;
  const auto t = table.sql_name();
  CHECK(
      db.value(fmt::format("SELECT count(*) FROM {} WHERE status = 'claimed' AND jsonb_array_length(operator_log) = 1",
                           t)) == std::to_string(ids.size()));
  CHECK(db.value(fmt::format("SELECT count(*) FROM {} WHERE claimed_by = 'alice'", t)) == std::to_string(a.won.size()));
  CHECK(db.value(fmt::format("SELECT count(*) FROM {} WHERE claimed_by = 'bob'", t)) == std::to_string(b.won.size()));
}

TEST_CASE("postgres_store lists a status oldest first", "[postgres]") {
  REQUIRE_POSTGRES();
  scratch_table table;
  auto store = open_store(table);
  const auto base = llmdlq::parse_rfc3339("2026-11-01T00:00:00Z").value();
  std::vector<llmdlq::envelope> envelopes;
  for (int i = 0; i < 5; ++i) {
    auto e = sample(fmt::format("receipt-{}", i));
    e.created_at = base + std::chrono::hours(i);
    envelopes.push_back(e);
  }
  for (const int i : {3, 0, 4, 1, 2}) published(store, envelopes[static_cast<std::size_t>(i)]);

  auto oldest = store.list(llmdlq::moderation_status::pending, 3);
  REQUIRE(oldest.has_value());
  REQUIRE(oldest->size() == 3);
  for (std::size_t i = 0; i < 3; ++i) CHECK((*oldest)[i].dlq_id == envelopes[i].dlq_id);
  CHECK((*oldest)[1].created_at == "2026-11-01T01:00:00.000Z");

  reach(store, envelopes[1].dlq_id, llmdlq::moderation_status::claimed);
  auto pending = store.list(llmdlq::moderation_status::pending, 100);
  REQUIRE(pending.has_value());
  CHECK(pending->size() == 4);
  auto claimed = store.list(llmdlq::moderation_status::claimed, 100);
  REQUIRE(claimed.has_value());
  REQUIRE(claimed->size() == 1);
  CHECK(claimed->front().dlq_id == envelopes[1].dlq_id);
  auto none = store.list(llmdlq::moderation_status::resolved, 100);
  REQUIRE(none.has_value());
  CHECK(none->empty());
  auto zero = store.list(llmdlq::moderation_status::pending, 0);
  REQUIRE(zero.has_value());
  CHECK(zero->empty());
}

TEST_CASE("postgres_store keeps envelopes whose text PostgreSQL cannot hold", "[postgres]") {
  REQUIRE_POSTGRES();
  scratch_table table;
  auto store = open_store(table);
  llmdlq::request_context context;
  context.idempotency_key = "receipt-nul";
  const std::string raw("{\"merchant\": \"Ju\0mbo\"}", 22);  // valid UTF-8, but U+0000
  auto e = llmdlq::test::check_envelope(llmdlq::make_envelope(
      {.category = llmdlq::failure_category::poison, .message = "NUL byte at offset 15"}, raw, context));
  REQUIRE_FALSE(e.raw_response.base64);
  e.failure.message = std::string("a\0b", 3);
  e.extensions["host"] = "bad \xff byte";
  REQUIRE(store.publish(e).has_value());
  auto again = store.publish(e);
  REQUIRE(again.has_value());
  CHECK(again->duplicate);

  auto record = store.get(e.dlq_id);
  REQUIRE(record.has_value());
  REQUIRE(record->has_value());
  auto stored = llmdlq::parse_envelope((*record)->envelope_json);
  REQUIRE(stored.has_value());
  CHECK(stored->raw_response.base64);  // lossless: the same bytes, in base64
  CHECK(stored->raw_response.text == "eyJtZXJjaGFudCI6ICJKdQBtYm8ifQ==");
  CHECK(stored->raw_response.length == raw.size());
  CHECK(stored->raw_response.sha256 == e.raw_response.sha256);
  CHECK((*record)->raw_response == "eyJtZXJjaGFudCI6ICJKdQBtYm8ifQ==");
  CHECK(stored->failure.message == "a\xEF\xBF\xBD"
                                   "b");
  CHECK(field(stored->extensions, "host") == "bad \xEF\xBF\xBD byte");
  CHECK(stored->dlq_id == e.dlq_id);
  database db;
  CHECK(db.value(fmt::format("SELECT message FROM {}", table.sql_name())) == "a\xEF\xBF\xBD"
                                                                             "b");
}

TEST_CASE("postgres_store: PostgreSQL restarted mid-run, nothing lost and nothing duplicated", "[postgres][fault]") {
  REQUIRE_POSTGRES();
  const char* restart = std::getenv("LLMDLQ_TEST_POSTGRES_RESTART");
  if (!restart) LLMDLQ_SKIP("LLMDLQ_TEST_POSTGRES_RESTART is not set");
  scratch_table table;
  auto store = open_store(table);
  const auto started = [] { return database().value("SELECT pg_postmaster_start_time()::text"); };
  const std::string before = started();

  // Publishes envelopes one by one and in batches, as a worker would, while
  // the server restarts; a failed publish is retried until it succeeds.
  std::vector<llmdlq::envelope> sent;
  std::atomic<bool> restarted = false;
  std::atomic<int> published = 0;  // the restart waits for some publishes first
  int restart_status = -1;
  std::size_t failures = 0;
  std::vector<std::string> failure_codes;
  const auto deadline = std::chrono::steady_clock::now() + 90s;
  {
    std::jthread restarter([&] {
      llmdlq::test::eventually([&] { return published >= 10; }, 30s);
      restart_status = std::system(restart);
      restarted = true;
    });
    std::size_t after_restart = 0;
    for (int i = 0; after_restart < 30; ++i) {
      std::vector<llmdlq::envelope> batch;
      const int size = i % 4 == 3 ? 3 : 1;
      for (int k = 0; k < size; ++k) batch.push_back(sample(fmt::format("receipt-{}-{}", i, k)));
      for (;;) {
        REQUIRE(std::chrono::steady_clock::now() < deadline);  // check-tests: allow duration-upper-bound a hang's guard
        std::optional<llmdlq::sink_error> error;
        if (size == 1) {
          auto r = store.publish(batch.front());
          if (!r) error = r.error();
        } else {
          auto r = store.publish_batch(batch);
          if (!r) error = r.error();
        }
        if (!error) break;
        ++failures;
        if (failure_codes.size() < 5) failure_codes.push_back(error->message);
        CHECK((error->code == llmdlq::sink_errc::unavailable || error->code == llmdlq::sink_errc::timeout));
        std::this_thread::sleep_for(50ms);  // the host's back-off
      }
      sent.insert(sent.end(), batch.begin(), batch.end());
      ++published;
      if (restarted) ++after_restart;
    }
  }
  REQUIRE(restart_status == 0);
  CHECK(started() != before);  // the server really restarted
  INFO(sent.size() << " envelopes sent, " << failures << " publishes failed and were retried");
  for (const auto& message : failure_codes) UNSCOPED_INFO(message);

  std::vector<std::string> expected_ids;
  for (const auto& e : sent) expected_ids.push_back(e.dlq_id);
  std::sort(expected_ids.begin(), expected_ids.end());
  database db;
  auto stored_ids = db.column(fmt::format("SELECT dlq_id FROM {} ORDER BY dlq_id", table.sql_name()));
  CHECK(stored_ids.size() == expected_ids.size());
  CHECK(stored_ids == expected_ids);  // every envelope, once
  CHECK(db.value(fmt::format("SELECT count(DISTINCT idempotency_key) FROM {}", table.sql_name())) ==
        std::to_string(sent.size()));

  // A restart while the store is idle: its next calls reconnect by themselves.
  REQUIRE(std::system(restart) == 0);
  auto claimed = store.act(request(sent.front().dlq_id, llmdlq::moderation_action::claim));
  INFO((claimed ? "" : claimed.error().message));
  REQUIRE(claimed.has_value());
  CHECK(claimed->status == llmdlq::moderation_status::claimed);
  CHECK(log_of(*claimed).size() == 1);
  REQUIRE(std::system(restart) == 0);
  auto found = store.get(sent.back().dlq_id);
  REQUIRE(found.has_value());
  CHECK(found->has_value());
  REQUIRE(std::system(restart) == 0);
  const auto last = sample("receipt-last");
  auto r = store.publish(last);
  REQUIRE(r.has_value());
  CHECK_FALSE(r->duplicate);
}

TEST_CASE("postgres_store: the replayer's actions need the record's own envelope, recovered is final", "[postgres]") {
  REQUIRE_POSTGRES();
  scratch_table table;
  auto store = open_store(table);
  const auto id = published(store, sample("receipt-replayed"));
  const auto other = published(store, sample("receipt-other"));
  using a = llmdlq::moderation_action;
  auto missing = request(id, a::record_attempt);
  auto mismatched = request(store, other, a::exhaust);
  mismatched.dlq_id = id;
  auto not_envelope = request(id, a::exhaust);
  not_envelope.envelope_json = R"({"dlq_id": "x"})";
  auto no_correction = request(store, id, a::recover);
  no_correction.corrected.reset();
  for (const auto& bad : {missing, mismatched, not_envelope, no_correction}) {
    auto r = store.act(bad);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == llmdlq::moderation_errc::invalid_resolution);
  }
  CHECK(log_of(store.get(id)->value()).empty());

  auto recorded = store.act(request(store, id, a::record_attempt, "replayer"));
  REQUIRE(recorded.has_value());
  CHECK(recorded->status == llmdlq::moderation_status::pending);
  const auto stored = llmdlq::parse_envelope(recorded->envelope_json);
  REQUIRE(stored.has_value());
  REQUIRE(stored->attempts.history.size() == 1);
  CHECK(stored->attempts.history[0].model == "small-model");
  CHECK(stored->attempts.history[0].fingerprint == "syntax:eof");
  auto recovered = store.act(request(store, id, a::recover, "replayer"));
  REQUIRE(recovered.has_value());
  CHECK(recovered->status == llmdlq::moderation_status::recovered);
  CHECK(llmdlq::parse_envelope(recovered->envelope_json)->attempts.history.size() == 2);
  CHECK(store.list(llmdlq::moderation_status::recovered, 10)->size() == 1);
  for (const auto action : all_actions) {
    auto r = store.act(request(store, id, action));
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().current == llmdlq::moderation_status::recovered);
  }
}

TEST_CASE("postgres_store: a table made before the replay statuses gets the wider status check", "[postgres]") {
  REQUIRE_POSTGRES();
  scratch_table table;
  database db;
  // The table as earlier versions made it.
  db.column(fmt::format(R"sql(
    CREATE TABLE {0} (
      dlq_id text PRIMARY KEY, idempotency_key text, attempt bigint NOT NULL,
      status text NOT NULL DEFAULT 'pending'
             CHECK (status IN ('pending', 'claimed', 'resolved', 'discarded', 'requeued')),
      category text NOT NULL, triage text NOT NULL, action text NOT NULL, failure_code text NOT NULL,
      message text NOT NULL, raw_response text, raw_sha256 text NOT NULL, envelope jsonb NOT NULL,
      created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL, expires_at timestamptz,
      operator_log jsonb NOT NULL DEFAULT '[]'::jsonb CHECK (jsonb_typeof(operator_log) = 'array'),
      claimed_by text, resolution jsonb))sql",
                        table.sql_name()));
  {
    auto old = llmdlq::postgres_store::open(conninfo(), [&] {
      auto o = table.options();
      o.migrate = false;
      return o;
    }());
    REQUIRE(old.has_value());
    const auto id = published(*old, sample("receipt-old"));
    // Without the migration the store refuses the new statuses, as a store failure.
    auto refused = old->act(request(*old, id, llmdlq::moderation_action::exhaust));
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code == llmdlq::moderation_errc::store_unavailable);
  }
  auto store = open_store(table);
  const auto checks = db.column(
      "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = $1::regclass AND contype = 'c' "
      "ORDER BY 1",
      {table.sql_name()});
  REQUIRE(checks.size() == 2);
  CHECK(checks[1].find("'exhausted'") != std::string::npos);
  CHECK(checks[1].find("'recovered'") != std::string::npos);
  CHECK(checks[1].find("'redriven'") != std::string::npos);
  const auto id = store.list(llmdlq::moderation_status::pending, 10)->front().dlq_id;
  auto exhausted = store.act(request(store, id, llmdlq::moderation_action::exhaust));
  REQUIRE(exhausted.has_value());
  CHECK(exhausted->status == llmdlq::moderation_status::exhausted);
  // Opening again changes nothing.
  REQUIRE(llmdlq::postgres_store::open(conninfo(), table.options()).has_value());
  CHECK(db.column("SELECT conname FROM pg_constraint WHERE conrelid = $1::regclass AND contype = 'c'",
                  {table.sql_name()})
            .size() == 2);
}

TEST_CASE("postgres_store passes the connection string to libpq as it is so TLS settings reach it", "[postgres]") {
  REQUIRE_POSTGRES();
  // The test server speaks no TLS: libpq's own refusal shows it read the settings.
  auto required = llmdlq::postgres_store::open(std::string(conninfo()) + " sslmode=require");
  REQUIRE_FALSE(required.has_value());
  CHECK(required.error().code == llmdlq::sink_errc::unavailable);
  CHECK(required.error().message.find("SSL was required") != std::string::npos);
  auto verified = llmdlq::postgres_store::open(std::string(conninfo()) +
                                               " sslmode=verify-full sslrootcert=/nonexistent/ca.crt");
  REQUIRE_FALSE(verified.has_value());
  INFO(verified.error().message);
  CHECK((verified.error().message.find("SSL was required") != std::string::npos ||
         verified.error().message.find("/nonexistent/ca.crt") != std::string::npos));
}

namespace {

// The SQL after the README's <!-- postgres-grants-test --> marker, for
// `table`, with role names that end in `suffix` (roles belong to the server).
std::string readme_grants(const std::string& table, const std::string& suffix) {
  std::ifstream in(LLMDLQ_README);
  REQUIRE(in);
  const std::string readme{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const auto marker = readme.find("<!-- postgres-grants-test -->\n```sql\n");
  REQUIRE(marker != std::string::npos);
  const auto begin = readme.find('\n', readme.find("```sql", marker)) + 1;
  std::string sql = readme.substr(begin, readme.find("\n```", begin) + 1 - begin);
  const auto replace_all = [&](const std::string& from, const std::string& to) {
    for (auto at = sql.find(from); at != std::string::npos; at = sql.find(from, at + to.size())) {
      sql.replace(at, from.size(), to);
    }
  };
  replace_all("receipt_moderation_queue", table);
  for (const std::string role : {"llmdlq_writer", "llmdlq_operator", "llmdlq_reader"}) replace_all(role, role + suffix);
  return sql;
}

// Roles of the test's own, each with a login member, dropped at the end.
struct scratch_roles {
  std::string suffix = "_" + random_suffix();
  std::vector<std::string> roles;
  ~scratch_roles() {
    PGconn* conn = PQconnectdb(conninfo());
    PQsetNoticeProcessor(conn, drop_notice, nullptr);
    for (const auto& role : roles) {
      PQclear(PQexec(conn, fmt::format("DROP OWNED BY {0}; DROP ROLE IF EXISTS {0}", role).c_str()));
    }
    PQfinish(conn);
  }
  // A login role in `group`; its connection string.
  std::string login(database& db, const std::string& group) {
    const std::string user = "login_" + group + suffix;
    roles.insert(roles.begin(), user);  // members go before their group
    db.execute(fmt::format("CREATE ROLE {} LOGIN IN ROLE {}", user, group + suffix));
    return std::string(conninfo()) + " user=" + user;
  }
};

// Runs `sql` as the user of `connection`: the error message, or "" when it worked.
std::string refusal_of(const std::string& connection, const std::string& sql) {
  PGconn* conn = PQconnectdb(connection.c_str());
  REQUIRE(PQstatus(conn) == CONNECTION_OK);
  PGresult* r = PQexec(conn, sql.c_str());
  const bool worked = PQresultStatus(r) == PGRES_TUPLES_OK || PQresultStatus(r) == PGRES_COMMAND_OK;
  std::string message = worked ? std::string() : PQresultErrorMessage(r);
  PQclear(r);
  PQfinish(conn);
  return message;
}

}  // namespace

TEST_CASE("postgres_store: the README's grants give a writer, an operator and a reader that sees no raw text",
          "[postgres]") {
  REQUIRE_POSTGRES();
  scratch_table table;
  { auto owner = open_store(table); }  // migrates: the test's user owns the table
  scratch_roles roles;
  database db;
  for (const std::string group : {"llmdlq_reader", "llmdlq_operator", "llmdlq_writer"}) {
    roles.roles.push_back(group + roles.suffix);
  }
  db.execute(readme_grants(table.name, roles.suffix));
  auto options = table.options();
  options.migrate = false;

  // The writer publishes, and knows a duplicate, but cannot read records.
  const auto writer = roles.login(db, "llmdlq_writer");
  auto worker = llmdlq::postgres_store::open(writer, options);
  INFO((worker ? "" : worker.error().message));
  REQUIRE(worker.has_value());
  const auto e = sample("grants:1");
  CHECK(published(*worker, e) == e.dlq_id);
  auto again = worker->publish(e);
  REQUIRE(again.has_value());
  CHECK(again->duplicate);
  auto peek = worker->get(e.dlq_id);
  REQUIRE_FALSE(peek.has_value());
  CHECK(peek.error().message.find("permission denied") != std::string::npos);

  // The operator reads whole records and acts on them, but cannot insert.
  const auto operator_login = roles.login(db, "llmdlq_operator");
  auto moderation = llmdlq::postgres_store::open(operator_login, options);
  REQUIRE(moderation.has_value());
  auto record = moderation->get(e.dlq_id);
  REQUIRE(record.has_value());
  REQUIRE(record->has_value());
  auto claimed = moderation->act(request(e.dlq_id, llmdlq::moderation_action::claim));
  INFO((claimed ? "" : claimed.error().message));
  CHECK(claimed.has_value());
  auto inserted = moderation->publish(sample("grants:2"));
  REQUIRE_FALSE(inserted.has_value());
  CHECK(inserted.error().code == llmdlq::sink_errc::rejected);

  // The reader sees counts and states, and is refused every column that holds text of the output.
  const auto reader = roles.login(db, "llmdlq_reader");
  const auto t = table.sql_name();
  CHECK(refusal_of(reader, fmt::format("SELECT dlq_id, idempotency_key, attempt, status, category, triage, action, "
                                       "failure_code, raw_sha256, created_at, updated_at, expires_at, claimed_by "
                                       "FROM {}",
                                       t)) == "");
  CHECK(refusal_of(reader, fmt::format("SELECT status, count(*) FROM {} GROUP BY status", t)) == "");
  for (const std::string column : {"raw_response", "envelope", "resolution", "message", "operator_log", "*"}) {
    INFO(column);
    CHECK(refusal_of(reader, fmt::format("SELECT {} FROM {}", column, t)).find("permission denied") !=
          std::string::npos);
  }
  CHECK(refusal_of(reader, fmt::format("UPDATE {} SET status = 'discarded'", t)).find("permission denied") !=
        std::string::npos);
}

}  // namespace postgres_store_test
