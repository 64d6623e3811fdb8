// SPDX-License-Identifier: MIT
// The embedded default DLQ: a SQLite database in WAL mode whose table doubles
// as the moderation queue (status `pending` until an operator acts).
// Part of the llmdlq::sqlite library.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/envelope_rewrite.hpp"
#include "llmdlq/moderation.hpp"
#include "llmdlq/moderation_query.hpp"
#include "llmdlq/purge.hpp"
#include "llmdlq/sink.hpp"

LLMDLQ_BEGIN_NAMESPACE

struct sqlite_store_options {
  std::string table = "dead_letters";  ///< letters, digits and underscores only
  int busy_timeout_ms = 5000;          ///< how long to wait for another writer's lock
  /// Reads an existing DLQ without changing it (dashboards, `llmdlq stats`):
  /// nothing is created or migrated, a missing file or a file without the
  /// table is an error, and publishing fails with `rejected`. Works on a
  /// file the process may not write.
  bool read_only = false;
};

/// Stores envelopes as rows: dlq_id, idempotency key and attempt, status
/// (`pending` on insert), category, triage class and action, failure code,
/// message, hash of the raw response, the envelope's JSON, times, and an
/// operator log. Commits are durable (WAL with synchronous=FULL) before
/// publish returns. Idempotent: an envelope whose dlq_id, or whose
/// idempotency key and attempt, is already stored is a duplicate, not a
/// second row; its receipt names the stored row's dlq_id. A batch is one
/// transaction. A new database file is created readable by its owner only
/// (0600, whatever the umask), and so are its WAL and journal files. A
/// writable open refuses (`unsafe_file`, naming the file and its mode) a
/// database or WAL/journal file that group or others can write, or that is a
/// symbolic link, and leaves it untouched. Every open, read-only too, refuses
/// (`unsafe_file`) a database whose directory group or others may write,
/// sticky or not: SQLite opens the -wal, -shm and journal files by name
/// there, and would read a WAL another user planted. The file is marked as
/// llmdlq's (`PRAGMA application_id` 0x4C444C51, "LDLQ") when the store makes
/// its table; a database neither marked, empty, nor holding llmdlq's tables
/// alone (a DLQ an earlier version made, marked then) is refused
/// (`rejected`, naming what it holds) before anything is written to it.
///
/// Errors: `rejected` when the store will refuse the envelope however often
/// it is retried (a read-only file, a constraint other than the duplicate
/// check, a record too big, a file that is not a SQLite database);
/// `timeout` when another writer holds the lock too long; `unavailable` or
/// `io_error` for the rest, which a retry may cure. Operator actions (act()) move a
/// row along moderation.hpp's transitions in one transaction (read, check,
/// conditional update), append to its log and, on resolve and recover, store
/// the corrected JSON; the replayer's actions (record_attempt, recover,
/// exhaust) also replace the stored envelope with the request's.
///
/// The file also holds `llmdlq_traffic`, the counts record_traffic() adds
/// (a row per DLQ table and minute), which timeline() reads.
///
/// A table made by a version without the `recovered` and `exhausted`
/// statuses has a status CHECK that refuses them: open() rebuilds it with
/// the wider CHECK (SQLite cannot alter a constraint), copying every row and
/// recreating its indexes, in one transaction.
///
/// Thread-safe (one connection, serialized). Other processes may share the
/// file: SQLite's locks serialize writers, and a conditional update means two
/// operators cannot both claim a row.
class sqlite_store final : public moderation_store {
 public:
  [[nodiscard]] static expected<sqlite_store, sink_error> open(const std::filesystem::path& path,
                                                              sqlite_store_options options = {});

  sqlite_store(sqlite_store&&) noexcept;
  sqlite_store& operator=(sqlite_store&&) noexcept;
  ~sqlite_store() override;

  [[nodiscard]] expected<receipt, sink_error> publish(const envelope& e) override;
  [[nodiscard]] expected<std::vector<receipt>, sink_error> publish_batch(std::span<const envelope> batch) override;
  [[nodiscard]] std::string_view kind() const noexcept override { return "sqlite"; }

  /// The rows counted by category, triage class, status and failure code.
  /// A read of the store: it fails as get() does (store_unavailable).
  [[nodiscard]] expected<dlq_statistics, moderation_error> statistics() override;
  /// The stored envelope with this dlq_id, if any.
  [[nodiscard]] expected<std::optional<envelope>, moderation_error> find(std::string_view dlq_id);
  /// Walks every row in dlq_id order and stores what `change` returns for
  /// it (status, log and times unchanged), `batch` rows per transaction: a
  /// batch is written whole or not at all, and a failure stops the walk
  /// after the batches already committed. Returns the rows changed.
  [[nodiscard]] expected<std::size_t, moderation_error> rewrite_envelopes(const envelope_rewrite& change,
                                                                         std::size_t batch = 256);

  /// Deletes the rows whose expires_at is at or before `request.now` (rows
  /// without one stay, and so does a row whose expires_at is not a time as
  /// the store writes it: counted and named in the report's `unreadable`,
  /// never taken as expired), whatever their status, and appends one row to
  /// `llmdlq_purge_audit` (purged_table, operator, at, count,
  /// oldest_expires_at, newest_expires_at), all in one transaction. A dry run
  /// counts in a read transaction and writes nothing; it also works on a
  /// read-only store. Replay state (sqlite_replay_state) is left alone: its
  /// attempt counts and ledger are what keep a replay exactly-once and capped
  /// when a failure with the same idempotency key comes back after its dead
  /// letter was purged. Errors: `rejected` for an empty operator name or a
  /// read-only store, the rest as publish().
  [[nodiscard]] expected<purge_report, sink_error> purge(const purge_request& request);

  [[nodiscard]] expected<moderation_record, moderation_error> act(const moderation_request& request) override;
  [[nodiscard]] expected<std::optional<moderation_record>, moderation_error> get(std::string_view dlq_id) override;
  [[nodiscard]] expected<std::vector<moderation_record>, moderation_error> list(moderation_status status,
                                                                              std::size_t limit) override;
  [[nodiscard]] expected<std::vector<moderation_record>, moderation_error> list_after(
      moderation_status status, std::string_view after_created_at, std::string_view after_dlq_id,
      std::size_t limit) override;
  [[nodiscard]] expected<moderation_page, moderation_error> query(const moderation_query& query) override;
  using moderation_store::timeline;
  /// Reads `llmdlq_traffic` when it is there (a read-only open of a file
  /// that never recorded traffic has none: `processed` stays 0).
  [[nodiscard]] expected<std::vector<dlq_timeline_bucket>, moderation_error> timeline(
      timestamp since, timestamp until, std::chrono::seconds width) override;
  /// Fails (store_unavailable) on a read-only store.
  [[nodiscard]] expected<void, moderation_error> record_traffic(timestamp at, std::uint64_t processed,
                                                                std::uint64_t dead_lettered) override;

 private:
  struct impl;
  explicit sqlite_store(std::unique_ptr<impl> impl) noexcept;
  std::unique_ptr<impl> impl_;
};

LLMDLQ_END_NAMESPACE
