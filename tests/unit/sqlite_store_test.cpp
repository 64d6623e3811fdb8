// SPDX-License-Identifier: MIT
// The SQLite sink: durable rows with status pending, idempotent on dlq_id and
// on idempotency key + attempt, batches in one transaction, statistics.
#include <fcntl.h>
#include <linux/fs.h>
#include <sqlite3.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <optional>

#include <llmdlq/pipeline.hpp>
#include <llmdlq/process.hpp>
#include <llmdlq/sqlite/store.hpp>

#include <boost/json.hpp>

#include "catch.hpp"
#include "support/skip.hpp"
#include "support/envelope_check.hpp"
#include "support/file_mode.hpp"
#include "support/temp_dir.hpp"

namespace sqlite_store_test {

namespace {

using llmdlq::test::mode_of;

llmdlq::envelope sample(std::string key, std::uint32_t attempt = 1,
                        llmdlq::failure_category category = llmdlq::failure_category::syntax,
                        llmdlq::timestamp at = llmdlq::system_now()) {
  llmdlq::request_context context;
  context.idempotency_key = std::move(key);
  context.attempt = attempt;
  llmdlq::process_options options;
  options.clock = [at] { return at; };
  return llmdlq::test::check_envelope(
      llmdlq::make_envelope({.category = category, .message = "test failure"}, "raw text", context, options));
}

// Reads one column of one row with SQLite directly, as an operator's tool would.
std::string column(const std::filesystem::path& db, const std::string& sql) {
  sqlite3* handle = nullptr;
  REQUIRE(sqlite3_open_v2(db.c_str(), &handle, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  REQUIRE(sqlite3_prepare_v2(handle, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK);
  std::string value;
  if (sqlite3_step(stmt) == SQLITE_ROW && sqlite3_column_text(stmt, 0)) {
    value = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
  }
  sqlite3_finalize(stmt);
  sqlite3_close(handle);
  return value;
}

// Makes a file unwritable even for root (the immutable attribute) while it
// lives; `made` is false where the file system or the process cannot.
class immutable_file {
 public:
  explicit immutable_file(const std::filesystem::path& file) : fd_(::open(file.c_str(), O_RDONLY | O_CLOEXEC)) {
    made = fd_ >= 0 && set(FS_IMMUTABLE_FL);
  }
  ~immutable_file() {
    if (made) set(0);
    if (fd_ >= 0) ::close(fd_);
  }
  immutable_file(const immutable_file&) = delete;
  immutable_file& operator=(const immutable_file&) = delete;
  bool made = false;

 private:
  bool set(int flag) {
    int flags = 0;
    if (::ioctl(fd_, FS_IOC_GETFLAGS, &flags) != 0) return false;
    flags = (flags & ~FS_IMMUTABLE_FL) | flag;
    return ::ioctl(fd_, FS_IOC_SETFLAGS, &flags) == 0;
  }
  int fd_;
};

/// A file nobody may write: mode 0400, or for root, who may write any
/// file, the immutable flag.
class frozen_file {
 public:
  explicit frozen_file(const std::filesystem::path& file) {
    if (::geteuid() == 0) {
      made = immutable_.emplace(file).made;
    } else {
      made = ::chmod(file.c_str(), 0400) == 0;
    }
  }
  bool made = false;

 private:
  std::optional<immutable_file> immutable_;
};

/// Whether frozen_file can freeze a file in `dir`: as root, only where the
/// file system has the flag and the process CAP_LINUX_IMMUTABLE.
bool files_can_be_frozen(const std::filesystem::path& dir) {
  const auto probe = dir / "probe";
  std::ofstream(probe) << "probe";
  return frozen_file(probe).made;
}

}  // namespace

TEST_CASE("sqlite_store creates the DLQ readable by its owner only, whatever the umask", "[sqlite]") {
  llmdlq::test::temp_dir dir;
  const mode_t mask = GENERATE(mode_t(0), mode_t(022), mode_t(0277));
  CAPTURE(mask);
  const auto path = dir.path() / "dlq.db";
  const llmdlq::test::scoped_umask umask(mask);
  auto sink = llmdlq::sqlite_store::open(path);
  REQUIRE(sink.has_value());
  REQUIRE(sink->publish(sample("private")).has_value());
  CHECK(mode_of(path) == 0600);
  // The WAL holds the same records until a checkpoint; SQLite gives it the database's mode.
  CHECK(mode_of(path.string() + "-wal") == 0600);
  CHECK(mode_of(path.string() + "-shm") == 0600);
}

TEST_CASE("sqlite_store refuses a DLQ that group or others can write, and leaves it untouched", "[sqlite]") {
  llmdlq::test::temp_dir dir;
  const auto path = dir.path() / "dlq.db";
  {
    auto sink = llmdlq::sqlite_store::open(path);
    REQUIRE(sink.has_value());
    REQUIRE(sink->publish(sample("stored")).has_value());
  }
  const std::string exposed = GENERATE(std::string(), std::string("-wal"), std::string("-journal"));
  CAPTURE(exposed);
  const auto file = path.string() + exposed;
  if (!exposed.empty()) std::ofstream(file, std::ios::binary) << "";
  REQUIRE(::chmod(file.c_str(), 0666) == 0);
  const std::string before = llmdlq::test::slurp(path);

  auto sink = llmdlq::sqlite_store::open(path);
  REQUIRE_FALSE(sink.has_value());
  CHECK(sink.error().code == llmdlq::sink_errc::unsafe_file);
  CHECK(sink.error().message.find(file + " has mode 0666") != std::string::npos);
  CHECK(llmdlq::test::slurp(path) == before);
  CHECK(mode_of(file) == 0666);
  // Reading it changes nothing and is not refused: `llmdlq stats` can still tell what it holds.
  auto reader = llmdlq::sqlite_store::open(path, {.read_only = true});
  REQUIRE(reader.has_value());
  CHECK(reader->statistics()->total == 1);
}

TEST_CASE("sqlite_store refuses a symbolic link to a database", "[sqlite]") {
  llmdlq::test::temp_dir dir;
  const auto target = dir.path() / "elsewhere.db";
  const auto link = dir.path() / "dlq.db";
  REQUIRE(llmdlq::sqlite_store::open(target).has_value());
  std::filesystem::create_symlink(target, link);
  auto sink = llmdlq::sqlite_store::open(link);
  REQUIRE_FALSE(sink.has_value());
  CHECK(sink.error().code == llmdlq::sink_errc::unsafe_file);
  CHECK(sink.error().message.find(link.string() + " is a symbolic link") != std::string::npos);
}

TEST_CASE("sqlite_store stores a pending row per envelope, durably and in WAL mode", "[sqlite]") {
  llmdlq::test::temp_dir dir;
  const auto path = dir.path() / "dlq.db";
  auto sink = llmdlq::sqlite_store::open(path);
  REQUIRE(sink.has_value());
  const auto e = sample("receipt-1");
  auto r = sink->publish(e);
  REQUIRE(r.has_value());
  CHECK_FALSE(r->duplicate);
  CHECK(column(path, "PRAGMA journal_mode") == "wal");
  CHECK(column(path, "SELECT status FROM dead_letters WHERE dlq_id = '" + e.dlq_id + "'") == "pending");
  CHECK(column(path, "SELECT failure_code FROM dead_letters") == "structural_broken_json");
  CHECK(column(path, "SELECT category || '/' || triage || '/' || action FROM dead_letters") ==
        "syntax/transient/local_repair");
  auto found = sink->find(e.dlq_id);
  REQUIRE(found.has_value());
  CHECK(*found == e);
}

TEST_CASE("sqlite_store is idempotent on dlq_id and on idempotency key + attempt", "[sqlite]") {
  llmdlq::test::temp_dir dir;
  auto sink = llmdlq::sqlite_store::open(dir.path() / "dlq.db");
  REQUIRE(sink.has_value());
  const auto e = sample("receipt-1");
  REQUIRE(sink->publish(e).has_value());
  auto again = sink->publish(e);
  REQUIRE(again.has_value());
  CHECK(again->duplicate);
  CHECK(again->dlq_id == e.dlq_id);
  // Same input, same attempt, another envelope id (written by an older
  // worker, or by hand): the receipt names the row that is stored.
  auto other = sample("receipt-1", 1);
  other.dlq_id = "00000000-0000-8000-8000-000000000001";
  auto replayed = sink->publish(other);
  REQUIRE(replayed.has_value());
  CHECK(replayed->duplicate);
  CHECK(replayed->dlq_id == e.dlq_id);
  CHECK(replayed->location == again->location);
  auto found = sink->find(replayed->dlq_id);
  REQUIRE(found.has_value());
  CHECK(found->has_value());
  CHECK_FALSE(sink->find(other.dlq_id)->has_value());
  // In a batch too, also when the first copy is in the same batch.
  auto batch_copy = sample("receipt-9", 1);
  auto batch_replay = sample("receipt-9", 1);
  batch_replay.dlq_id = "00000000-0000-8000-8000-000000000002";
  const std::vector<llmdlq::envelope> batch{other, batch_copy, batch_replay};
  auto receipts = sink->publish_batch(batch);
  REQUIRE(receipts.has_value());
  CHECK((*receipts)[0].duplicate);
  CHECK((*receipts)[0].dlq_id == e.dlq_id);
  CHECK_FALSE((*receipts)[1].duplicate);
  CHECK((*receipts)[2].duplicate);
  CHECK((*receipts)[2].dlq_id == batch_copy.dlq_id);
  // The next attempt is a new row.
  auto second = sink->publish(sample("receipt-1", 2));
  REQUIRE(second.has_value());
  CHECK_FALSE(second->duplicate);
  auto stats = sink->statistics();
  REQUIRE(stats.has_value());
  CHECK(stats->total == 3);
}

TEST_CASE("sqlite_store batches are one transaction, and survive reopening", "[sqlite]") {
  llmdlq::test::temp_dir dir;
  const auto path = dir.path() / "dlq.db";
  std::vector<llmdlq::envelope> batch;
  for (int i = 0; i < 50; ++i) {
    batch.push_back(sample("k" + std::to_string(i), 1,
                           i % 2 ? llmdlq::failure_category::schema : llmdlq::failure_category::truncated));
  }
  {
    auto sink = llmdlq::sqlite_store::open(path);
    REQUIRE(sink.has_value());
    auto receipts = sink->publish_batch(batch);
    REQUIRE(receipts.has_value());
    CHECK(receipts->size() == 50);
  }
  auto reopened = llmdlq::sqlite_store::open(path);
  REQUIRE(reopened.has_value());
  auto stats = reopened->statistics();
  REQUIRE(stats.has_value());
  CHECK(stats->total == 50);
  CHECK(stats->by_category.at("schema") == 25);
  CHECK(stats->by_category.at("truncated") == 25);
  CHECK(stats->by_status.at("pending") == 50);
  CHECK(stats->by_triage.at("deterministic") == 25);
}

TEST_CASE("sqlite_store failures are sink errors, and a custom table name is checked", "[sqlite]") {
  llmdlq::test::temp_dir dir;
  auto bad_name = llmdlq::sqlite_store::open(dir.path() / "a.db", {"drop table x; --"});
  REQUIRE_FALSE(bad_name.has_value());
  CHECK(bad_name.error().code == llmdlq::sink_errc::rejected);

  auto missing = llmdlq::sqlite_store::open("/nonexistent-dir/dlq.db");
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().code == llmdlq::sink_errc::unavailable);

  auto custom = llmdlq::sqlite_store::open(dir.path() / "b.db", {"receipt_moderation_queue"});
  REQUIRE(custom.has_value());
  REQUIRE(custom->publish(sample("x")).has_value());
  CHECK(column(dir.path() / "b.db", "SELECT count(*) FROM receipt_moderation_queue") == "1");
}

TEST_CASE("sqlite_store: the DLQ file made read-only under a running sink keeps what the sink acknowledges",
          "[sqlite]") {
  llmdlq::test::temp_dir dir;
  if (!files_can_be_frozen(dir.path())) LLMDLQ_SKIP("root cannot make a file immutable here: no file nobody may write");
  const auto path = dir.path() / "dlq.db";
  const auto later = sample("later");
  {
    auto sink = llmdlq::sqlite_store::open(path);
    REQUIRE(sink.has_value());
    REQUIRE(sink->publish(sample("before")).has_value());
    const frozen_file frozen(path);
    REQUIRE(frozen.made);
    // The open connection writes its write-ahead log, which the mode or
    // flag set since does not cover: the letter is acknowledged...
    REQUIRE(sink->publish(later).has_value());
  }
  // ... and reads back once the sink is closed, its log not lost.
  auto reader = llmdlq::sqlite_store::open(path, {.read_only = true});
  REQUIRE(reader.has_value());
  const auto found = reader->find(later.dlq_id);
  REQUIRE(found.has_value());
  CHECK(*found == later);
}

TEST_CASE("sqlite_store: a DLQ file nobody may write is rejected, not retried", "[sqlite]") {
  llmdlq::test::temp_dir dir;
  if (!files_can_be_frozen(dir.path())) LLMDLQ_SKIP("root cannot make a file immutable here: no file nobody may write");
  const auto path = dir.path() / "dlq.db";
  {
    auto sink = llmdlq::sqlite_store::open(path);
    REQUIRE(sink.has_value());
    REQUIRE(sink->publish(sample("first")).has_value());
  }
  const frozen_file frozen(path);
  REQUIRE(frozen.made);
  auto sink = llmdlq::sqlite_store::open(path);
  auto r = sink ? sink->publish(sample("second")) : llmdlq::unexpected(sink.error());
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == llmdlq::sink_errc::rejected);
}

TEST_CASE("sqlite_store: errors a retry cannot cure are rejected", "[sqlite]") {
  llmdlq::test::temp_dir dir;
  const auto path = dir.path() / "dlq.db";
  {
    auto sink = llmdlq::sqlite_store::open(path);
    REQUIRE(sink.has_value());
    REQUIRE(sink->publish(sample("first")).has_value());
    // A constraint other than the duplicate check: the table wants a failure code.
    auto no_code = sample("no-code");
    no_code.failure.code.clear();
    auto r = sink->publish(no_code);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == llmdlq::sink_errc::rejected);
    CHECK(llmdlq::is_permanent(r.error().code));
  }
  SECTION("a DLQ opened read-only") {
    auto reader = llmdlq::sqlite_store::open(path, {.read_only = true});
    REQUIRE(reader.has_value());
    auto r = reader->publish(sample("second"));
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == llmdlq::sink_errc::rejected);
  }
  SECTION("a file that is not a SQLite database is refused and left alone") {
    const auto text = dir.write("dlq.jsonl", "{\"dlq_id\": \"x\"}\n");
    auto sink = llmdlq::sqlite_store::open(text);
    REQUIRE_FALSE(sink.has_value());
    CHECK(sink.error().code == llmdlq::sink_errc::rejected);
    CHECK(llmdlq::test::slurp(text) == "{\"dlq_id\": \"x\"}\n");
  }
}

TEST_CASE("sqlite_store read-only: reads a DLQ without changing it", "[sqlite]") {
  llmdlq::test::temp_dir dir;
  const auto path = dir.path() / "dlq.db";
  const auto e = sample("kept");
  {
    auto sink = llmdlq::sqlite_store::open(path);
    REQUIRE(sink.has_value());
    REQUIRE(sink->publish(e).has_value());
  }
  const std::string before = llmdlq::test::slurp(path);
  {
    auto reader = llmdlq::sqlite_store::open(path, {.read_only = true});
    REQUIRE(reader.has_value());
    auto stats = reader->statistics();
    REQUIRE(stats.has_value());
    CHECK(stats->total == 1);
    auto found = reader->find(e.dlq_id);
    REQUIRE(found.has_value());
    CHECK(*found == e);
  }
  CHECK(llmdlq::test::slurp(path) == before);

  // Nothing is created: not a missing file, not a table in an empty one.
  const auto missing = dir.path() / "missing.db";
  auto absent = llmdlq::sqlite_store::open(missing, {.read_only = true});
  REQUIRE_FALSE(absent.has_value());
  CHECK_FALSE(std::filesystem::exists(missing));
  const auto empty = dir.write("empty.db", "");
  auto no_table = llmdlq::sqlite_store::open(empty, {.read_only = true});
  REQUIRE_FALSE(no_table.has_value());
  CHECK(no_table.error().code == llmdlq::sink_errc::rejected);
  CHECK(no_table.error().message.find("not a DLQ") != std::string::npos);
  CHECK(std::filesystem::file_size(empty) == 0);
}

TEST_CASE("sqlite_store as a moderation store: operator actions follow the status machine", "[sqlite]") {
  using llmdlq::moderation_action;
  using llmdlq::moderation_errc;
  using llmdlq::moderation_status;
  llmdlq::test::temp_dir dir;
  auto sink = llmdlq::sqlite_store::open(dir.path() / "dlq.db");
  REQUIRE(sink.has_value());
  llmdlq::moderation_store& store = *sink;
  const auto now = llmdlq::system_now();
  const auto a = sample("a", 1, llmdlq::failure_category::syntax, now);
  const auto b = sample("b", 1, llmdlq::failure_category::syntax, now + std::chrono::seconds(1));
  REQUIRE(store.publish(a).has_value());
  REQUIRE(store.publish(b).has_value());

  auto pending = store.list(moderation_status::pending, 10);
  REQUIRE(pending.has_value());
  REQUIRE(pending->size() == 2);
  CHECK((*pending)[0].dlq_id == a.dlq_id);  // oldest first
  CHECK((*pending)[0].raw_response == "raw text");
  CHECK((*pending)[0].failure_code == "structural_broken_json");

  auto claimed = store.act({a.dlq_id, moderation_action::claim, "ana", "looking", std::nullopt});
  REQUIRE(claimed.has_value());
  CHECK(claimed->status == moderation_status::claimed);
  CHECK(claimed->claimed_by == "ana");
  // A second operator cannot claim it too.
  auto again = store.act({a.dlq_id, moderation_action::claim, "bob", "", std::nullopt});
  REQUIRE_FALSE(again.has_value());
  CHECK(again.error().code == moderation_errc::invalid_transition);
  CHECK(again.error().current == moderation_status::claimed);
  // Resolving needs JSON.
  auto bad = store.act({a.dlq_id, moderation_action::resolve, "ana", "", std::string("{oops")});
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().code == moderation_errc::invalid_resolution);
  auto resolved = store.act({a.dlq_id, moderation_action::resolve, "ana", "fixed the total", R"({"total": 3})"});
  REQUIRE(resolved.has_value());
  CHECK(resolved->status == moderation_status::resolved);
  CHECK(resolved->resolution == R"({"total": 3})");
  const auto log = boost::json::parse(resolved->operator_log).as_array();
  REQUIRE(log.size() == 2);
  CHECK(log[1].at("action") == "resolve");
  CHECK(log[1].at("from") == "claimed");
  CHECK(log[1].at("note") == "fixed the total");
  // Final states stay final.
  for (const auto action : {moderation_action::claim, moderation_action::discard, moderation_action::requeue}) {
    auto r = store.act({a.dlq_id, action, "ana", "", std::nullopt});
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == moderation_errc::invalid_transition);
  }
  // Requeued for replay, then discarded after a second look.
  REQUIRE(store.act({b.dlq_id, moderation_action::requeue, "bob", "replay", std::nullopt}).has_value());
  CHECK(store.list(moderation_status::requeued, 10)->size() == 1);
  REQUIRE(store.act({b.dlq_id, moderation_action::claim, "bob", "", std::nullopt}).has_value());
  REQUIRE(store.act({b.dlq_id, moderation_action::discard, "bob", "duplicate receipt", std::nullopt}).has_value());
  CHECK(store.get(b.dlq_id)->value().status == moderation_status::discarded);
  auto missing = store.act({"no-such-id", moderation_action::claim, "ana", "", std::nullopt});
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().code == moderation_errc::not_found);
  CHECK_FALSE(store.get("no-such-id")->has_value());
  // A redelivered envelope is still one row, in whatever state it reached.
  auto redelivered = store.publish(a);
  REQUIRE(redelivered.has_value());
  CHECK(redelivered->duplicate);
  CHECK(store.get(a.dlq_id)->value().status == moderation_status::resolved);
}

TEST_CASE("moderation transitions are the documented ones", "[sqlite]") {
  using llmdlq::moderation_action;
  using s = llmdlq::moderation_status;
  CHECK(llmdlq::transition(s::pending, moderation_action::claim) == s::claimed);
  CHECK(llmdlq::transition(s::requeued, moderation_action::claim) == s::claimed);
  CHECK_FALSE(llmdlq::transition(s::pending, moderation_action::resolve));
  CHECK(llmdlq::transition(s::claimed, moderation_action::resolve) == s::resolved);
  CHECK(llmdlq::transition(s::pending, moderation_action::discard) == s::discarded);
  CHECK_FALSE(llmdlq::transition(s::requeued, moderation_action::discard));
  CHECK(llmdlq::statuses_allowing(moderation_action::requeue) == std::vector{s::pending, s::claimed, s::exhausted});
  CHECK(llmdlq::statuses_allowing(moderation_action::recover) == std::vector{s::pending, s::requeued, s::redriven});
  CHECK(llmdlq::statuses_allowing(moderation_action::redrive) == std::vector{s::pending, s::requeued, s::exhausted});
  CHECK(llmdlq::transition(s::redriven, moderation_action::claim) == s::claimed);
  CHECK(llmdlq::transition(s::redriven, moderation_action::discard) == s::discarded);
  CHECK_FALSE(llmdlq::transition(s::redriven, moderation_action::redrive));
  CHECK_FALSE(llmdlq::transition(s::redriven, moderation_action::requeue));
  CHECK(llmdlq::transition(s::requeued, moderation_action::record_attempt) == s::requeued);
  CHECK(llmdlq::transition(s::exhausted, moderation_action::claim) == s::claimed);
  CHECK_FALSE(llmdlq::transition(s::claimed, moderation_action::recover));
  CHECK_FALSE(llmdlq::transition(s::recovered, moderation_action::claim));
}

namespace {

// `e`'s JSON with one more attempt in its history, as the replayer writes it back.
std::string with_attempt(llmdlq::envelope e, std::string outcome) {
  e.attempts.history.push_back({.strategy = "repair_prompt", .outcome = std::move(outcome), .tokens = 120,
                                .at = e.created_at, .model = "small-model", .latency_ms = 850,
                                .fingerprint = "schema:/total:type"});
  return llmdlq::serialize(e);
}

llmdlq::moderation_request replayer_request(const llmdlq::envelope& e, llmdlq::moderation_action action,
                                            std::optional<std::string> envelope_json,
                                            std::optional<std::string> corrected = std::nullopt) {
  return {.dlq_id = e.dlq_id, .action = action, .operator_name = "replayer", .note = "",
          .corrected = std::move(corrected), .envelope_json = std::move(envelope_json)};
}

}  // namespace

TEST_CASE("sqlite_store: the replayer records attempts, recovers and exhausts records", "[sqlite]") {
  using llmdlq::moderation_action;
  using llmdlq::moderation_errc;
  using llmdlq::moderation_status;
  llmdlq::test::temp_dir dir;
  auto sink = llmdlq::sqlite_store::open(dir.path() / "dlq.db");
  REQUIRE(sink.has_value());
  llmdlq::moderation_store& store = *sink;
  const auto now = llmdlq::system_now();
  const auto a = sample("a", 1, llmdlq::failure_category::schema, now);
  const auto b = sample("b", 1, llmdlq::failure_category::schema, now + std::chrono::seconds(1));
  const auto c = sample("c", 1, llmdlq::failure_category::schema, now + std::chrono::seconds(2));
  for (const auto& e : {a, b, c}) REQUIRE(store.publish(e).has_value());

  // record_attempt keeps the status and replaces the envelope.
  auto recorded = store.act(replayer_request(a, moderation_action::record_attempt, with_attempt(a, "failed")));
  REQUIRE(recorded.has_value());
  CHECK(recorded->status == moderation_status::pending);
  auto stored = llmdlq::parse_envelope(recorded->envelope_json);
  REQUIRE(stored.has_value());
  REQUIRE(stored->attempts.history.size() == 1);
  CHECK(stored->attempts.history[0].model == "small-model");
  CHECK(stored->attempts.history[0].latency_ms == 850);
  CHECK(sink->find(a.dlq_id)->value().attempts.history.size() == 1);
  auto log = boost::json::parse(recorded->operator_log).as_array();
  REQUIRE(log.size() == 1);
  CHECK(log[0].at("action") == "record_attempt");
  CHECK(log[0].at("from") == "pending");
  CHECK(log[0].at("to") == "pending");

  // Without the envelope, with another record's, or with no envelope at all: refused, nothing changes.
  for (const auto& bad : {replayer_request(a, moderation_action::record_attempt, std::nullopt),
                          replayer_request(a, moderation_action::exhaust, with_attempt(b, "failed")),
                          replayer_request(a, moderation_action::exhaust, std::string(R"({"dlq_id": "x"})")),
                          replayer_request(a, moderation_action::recover, with_attempt(a, "recovered")),
                          replayer_request(a, moderation_action::recover, with_attempt(a, "recovered"),
                                           std::string("{'total': 3}"))}) {
    auto r = store.act(bad);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == moderation_errc::invalid_resolution);
  }
  CHECK(store.get(a.dlq_id)->value().status == moderation_status::pending);
  CHECK(sink->find(a.dlq_id)->value().attempts.history.size() == 1);

  // recover from pending: final, with the corrected document as resolution.
  auto recovered = store.act(replayer_request(a, moderation_action::recover,
                                              with_attempt(*stored, "recovered"), std::string(R"({"total": 3})")));
  REQUIRE(recovered.has_value());
  CHECK(recovered->status == moderation_status::recovered);
  CHECK(recovered->resolution == R"({"total": 3})");
  CHECK(sink->find(a.dlq_id)->value().attempts.history.size() == 2);
  for (const auto action : {moderation_action::claim, moderation_action::discard, moderation_action::requeue,
                            moderation_action::record_attempt, moderation_action::exhaust}) {
    auto r = store.act(replayer_request(a, action, with_attempt(a, "failed")));
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == moderation_errc::invalid_transition);
    CHECK(r.error().current == moderation_status::recovered);
  }

  // recover from requeued.
  REQUIRE(store.act({b.dlq_id, moderation_action::requeue, "ana", "try again", std::nullopt}).has_value());
  REQUIRE(store.act(replayer_request(b, moderation_action::record_attempt, with_attempt(b, "failed"))).has_value());
  CHECK(store.get(b.dlq_id)->value().status == moderation_status::requeued);
  REQUIRE(store.act(replayer_request(b, moderation_action::recover, with_attempt(b, "recovered"),
                                     std::string(R"({"total": 4})")))
              .has_value());
  CHECK(store.list(moderation_status::recovered, 10)->size() == 2);

  // exhaust: it waits for a person, who may claim, requeue or discard it.
  auto exhausted = store.act(replayer_request(c, moderation_action::exhaust, with_attempt(c, "failed")));
  REQUIRE(exhausted.has_value());
  CHECK(exhausted->status == moderation_status::exhausted);
  CHECK(store.list(moderation_status::exhausted, 10)->front().dlq_id == c.dlq_id);
  CHECK(store.act(replayer_request(c, moderation_action::record_attempt, with_attempt(c, "failed"))).error().code ==
        moderation_errc::invalid_transition);
  REQUIRE(store.act({c.dlq_id, moderation_action::requeue, "ana", "", std::nullopt}).has_value());
  REQUIRE(store.act(replayer_request(c, moderation_action::exhaust, with_attempt(c, "failed"))).has_value());
  REQUIRE(store.act({c.dlq_id, moderation_action::claim, "ana", "", std::nullopt}).has_value());
  REQUIRE(store.act({c.dlq_id, moderation_action::discard, "ana", "", std::nullopt}).has_value());
  CHECK(store.get(c.dlq_id)->value().status == moderation_status::discarded);

  const auto stats = sink->statistics();
  REQUIRE(stats.has_value());
  CHECK(stats->by_status.at("recovered") == 2);
  CHECK(stats->by_status.at("discarded") == 1);
  CHECK(stats->total == 3);
}

TEST_CASE("sqlite_store: a table made before the replay statuses is migrated, rows and indexes kept", "[sqlite]") {
  llmdlq::test::temp_dir dir;
  const auto path = dir.path() / "dlq.db";
  const auto e = sample("old");
  {
    auto store = llmdlq::sqlite_store::open(path);
    REQUIRE(store.has_value());
    REQUIRE(store->publish(e).has_value());
    REQUIRE(store->act({e.dlq_id, llmdlq::moderation_action::requeue, "ana", "", std::nullopt}).has_value());
  }
  // The table as earlier versions made it: five statuses in its CHECK.
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  const char* downgrade = R"sql(
    BEGIN;
    CREATE TABLE old (
      dlq_id          TEXT PRIMARY KEY,
      idempotency_key TEXT,
      attempt         INTEGER NOT NULL,
      status          TEXT NOT NULL DEFAULT 'pending'
                      CHECK (status IN ('pending', 'claimed', 'resolved', 'discarded', 'requeued')),
      category TEXT NOT NULL, triage TEXT NOT NULL, action TEXT NOT NULL, failure_code TEXT NOT NULL,
      message TEXT NOT NULL, raw_sha256 TEXT NOT NULL, envelope TEXT NOT NULL, created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL, expires_at TEXT, operator_log TEXT NOT NULL DEFAULT '[]',
      claimed_by TEXT, resolution TEXT);
    INSERT INTO old SELECT * FROM dead_letters;
    DROP TABLE dead_letters;
    ALTER TABLE old RENAME TO dead_letters;
    CREATE UNIQUE INDEX dead_letters_attempt ON dead_letters (idempotency_key, attempt)
      WHERE idempotency_key IS NOT NULL;
    COMMIT;
  )sql";
  REQUIRE(sqlite3_exec(db, downgrade, nullptr, nullptr, nullptr) == SQLITE_OK);
  CHECK(sqlite3_exec(db, "UPDATE dead_letters SET status = 'exhausted'", nullptr, nullptr, nullptr) ==
        SQLITE_CONSTRAINT);
  sqlite3_close(db);

  auto store = llmdlq::sqlite_store::open(path);
  REQUIRE(store.has_value());
  CHECK(column(path, "SELECT sql FROM sqlite_master WHERE name = 'dead_letters'").find("'exhausted'") !=
        std::string::npos);
  CHECK(column(path, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'dead_letters' "
                     "AND name IN ('dead_letters_attempt', 'dead_letters_status')") == "2");
  const auto record = store->get(e.dlq_id);
  REQUIRE(record.has_value());
  REQUIRE(record->has_value());
  CHECK((*record)->status == llmdlq::moderation_status::requeued);
  CHECK(boost::json::parse((*record)->operator_log).as_array().size() == 1);
  auto exhausted = store->act(replayer_request(e, llmdlq::moderation_action::exhaust, with_attempt(e, "failed")));
  REQUIRE(exhausted.has_value());
  CHECK(exhausted->status == llmdlq::moderation_status::exhausted);
  // The same envelope is still a duplicate: the unique index is back.
  CHECK(store->publish(e)->duplicate);
  // Opening again rebuilds nothing: the table stays where it is in the file.
  const auto root_page = "SELECT rootpage FROM sqlite_master WHERE name = 'dead_letters'";
  const std::string where = column(path, root_page);
  REQUIRE(llmdlq::sqlite_store::open(path).has_value());
  CHECK(column(path, root_page) == where);
  CHECK(store->get(e.dlq_id)->value().status == llmdlq::moderation_status::exhausted);
}

TEST_CASE("sqlite_store: a pipeline owns a store opened in the expression that builds it", "[sqlite][pipeline]") {
  llmdlq::test::temp_dir dir;
  const auto path = dir.path() / "dlq.db";
  const llmdlq::pipeline pipeline{*llmdlq::schema::compile(R"({"type": "object", "required": ["total"]})"),
                                  *llmdlq::sqlite_store::open(path)};
  llmdlq::request_context context;
  context.idempotency_key = "receipt-1";
  const auto d = pipeline.handle(R"({"sum": 1})", context);
  CHECK(d == llmdlq::disposition::commit);
  REQUIRE(d.stored.has_value());
  CHECK_FALSE(d.stored->duplicate);
  auto reader = llmdlq::sqlite_store::open(path, {.read_only = true});
  REQUIRE(reader.has_value());
  CHECK(reader->statistics()->total == 1);
  CHECK(reader->find(d.stored->dlq_id)->has_value());
}

TEST_CASE("sqlite_store: statistics and find fail as store reads, in the moderation domain", "[sqlite]") {
  llmdlq::test::temp_dir dir;
  const auto path = dir.path() / "dlq.db";
  auto store = llmdlq::sqlite_store::open(path);
  REQUIRE(store.has_value());
  const auto e = sample("gone");
  REQUIRE(store->publish(e).has_value());
  sqlite3* other = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &other) == SQLITE_OK);
  CHECK(sqlite3_exec(other, "DROP TABLE dead_letters", nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(other);

  const llmdlq::expected<llmdlq::dlq_statistics, llmdlq::moderation_error> stats = store->statistics();
  REQUIRE_FALSE(stats.has_value());
  CHECK(stats.error().code == llmdlq::moderation_errc::store_unavailable);
  CHECK_FALSE(llmdlq::is_permanent(stats.error().code));
  CHECK(llmdlq::to_string(stats.error().code) == "store_unavailable");
  CHECK(stats.error().message.find("sqlite: statistics") == 0);
  const auto found = store->find(e.dlq_id);
  REQUIRE_FALSE(found.has_value());
  CHECK(found.error().code == llmdlq::moderation_errc::store_unavailable);
}

}  // namespace sqlite_store_test
