// SPDX-License-Identifier: MIT
// The PostgreSQL moderation store: dead letters as rows of a table that
// operators work through (claim, resolve, discard, requeue).
// Part of the llmdlq::postgres library (libpq).
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/envelope_rewrite.hpp"
#include "llmdlq/moderation.hpp"
#include "llmdlq/moderation_query.hpp"
#include "llmdlq/purge.hpp"
#include "llmdlq/sink.hpp"
#include "llmdlq/timestamp.hpp"

LLMDLQ_BEGIN_NAMESPACE

struct postgres_store_options {
  /// The table: letters, digits and underscores, not starting with a digit,
  /// at most 48 characters (its indexes' names add a suffix within
  /// PostgreSQL's 63). Used as written (quoted), so case matters.
  std::string table = "receipt_moderation_queue";
  /// The schema holding the table (same rules as the table); empty: the
  /// first schema of the connection's search_path, usually `public`.
  std::string schema;
  /// open() runs migrate(). Turn it off where the application's role may
  /// not create tables; open() then fails when the table is missing.
  bool migrate = true;
  /// Limit on each statement, in milliseconds (a publish that waits longer
  /// on a lock fails with sink_errc::timeout); 0 keeps the server's setting.
  int statement_timeout_ms = 30000;
  /// Rows a purge deletes per transaction: each batch locks only its own
  /// rows, for one short statement.
  std::size_t purge_batch = 1000;
  /// Where the store reads the time it writes into updated_at and the
  /// operator log; the system clock when empty.
  clock_function clock;
};

/// Dead letters in a PostgreSQL table, one row per envelope:
///
///     dlq_id text PRIMARY KEY, idempotency_key text, attempt bigint,
///     status text (pending | claimed | resolved | discarded | requeued
///                  | recovered | exhausted),
///     category, triage, action, failure_code, message text,
///     raw_response text, raw_sha256 text, envelope jsonb,
///     created_at, updated_at, expires_at timestamptz,
///     operator_log jsonb  -- [{"at", "operator", "action", "from", "to", "note"}, ...]
///     claimed_by text, resolution jsonb
///     UNIQUE (idempotency_key, attempt) WHERE idempotency_key IS NOT NULL
///
/// publish() is one `INSERT ... ON CONFLICT DO NOTHING`: an envelope whose
/// dlq_id, or whose idempotency key and attempt, is already stored is a
/// duplicate (`receipt::duplicate`), never a second row. A batch is one
/// transaction. Both return after the commit (the session runs with
/// synchronous_commit on, or stricter when the server says so).
///
/// act() is one conditional UPDATE (`WHERE dlq_id = $1 AND status = ANY(...)`)
/// along transition(): of two operators claiming a row, exactly one wins and
/// the other gets invalid_transition with the row's current status. Claiming
/// sets claimed_by, which then keeps who claimed last. Resolving and
/// recovering require the corrected JSON, strict JSON that PostgreSQL's jsonb
/// accepts (no \u0000), kept in `resolution`. The replayer's actions
/// (record_attempt, recover, exhaust) replace `envelope` with the request's
/// in the same UPDATE. moderation_record::operator_log is the log's JSON
/// array text; envelope_json and resolution are as jsonb prints them (keys
/// reordered, same values).
///
/// PostgreSQL text holds neither U+0000 nor invalid UTF-8. An envelope with
/// such a raw response or original input is stored with that text in
/// base64 (`"encoding": "base64"`, lossless; length and hash unchanged);
/// such characters anywhere else (messages, host metadata) become U+FFFD.
///
/// Connection loss: every call finds a broken connection (a restarted or
/// unreachable server), resets it once and carries on; when the server is
/// still unreachable the call fails with sink_errc::unavailable or
/// moderation_errc::store_unavailable and nothing was written: the caller
/// retries later. A publish whose connection broke mid-way is run again on
/// the new connection, which is safe since publishing is idempotent; it may
/// then report `duplicate` for a row its first try had committed. An action
/// whose connection broke is run again too, and recognises its own entry at
/// the end of the log when its first try had committed.
///
/// Thread-safe: one connection, serialised by a mutex (open one store per
/// thread for parallel writers). No exceptions (but std::bad_alloc), and
/// nothing printed: the server's notices are dropped.
class postgres_store final : public moderation_store {
 public:
  /// Connects with a libpq connection string or URI (`host=... dbname=...`,
  /// `postgresql://...`), then migrates when `options.migrate` and checks
  /// that the table is usable. Defaults that the string may override:
  /// connect_timeout=10, application_name=llmdlq. The client encoding is
  /// always UTF8.
  [[nodiscard]] static expected<postgres_store, sink_error> open(std::string_view conninfo,
                                                                 postgres_store_options options = {});

  postgres_store(postgres_store&&) noexcept;
  postgres_store& operator=(postgres_store&&) noexcept;
  ~postgres_store() override;

  /// Creates the schema (when set), the table and its indexes, and beside
  /// the table `llmdlq_purge_audit` and `llmdlq_traffic`, when missing;
  /// idempotent, and safe when several processes migrate at once (they take
  /// turns on an advisory lock). In an existing table it changes only a
  /// status CHECK made before `recovered` and `exhausted` existed, replacing
  /// it with one that allows every status. Without that migration the store
  /// works, but the replayer's recover and exhaust fail (store_unavailable).
  [[nodiscard]] expected<void, sink_error> migrate();

  [[nodiscard]] expected<receipt, sink_error> publish(const envelope& e) override;
  [[nodiscard]] expected<std::vector<receipt>, sink_error> publish_batch(std::span<const envelope> batch) override;
  [[nodiscard]] std::string_view kind() const noexcept override { return "postgres"; }

  /// Deletes the rows whose expires_at is at or before `request.now` (rows
  /// without one stay), whatever their status, in batches of `purge_batch`:
  /// each batch is one statement, its own transaction, that locks its rows
  /// with `FOR UPDATE SKIP LOCKED`, so the queue is never locked for long and
  /// a row an operator holds locked is left for the next purge. The audit is
  /// a row of `llmdlq_purge_audit` (in the table's schema; migrate() makes
  /// it): id, purged_table, operator, at, count, oldest_expires_at,
  /// newest_expires_at. It is inserted first and each batch adds its count
  /// and range to it in the batch's transaction, so the audit matches what
  /// was deleted even when a purge is interrupted; the report is that row.
  /// A dry run counts in one statement and writes nothing. Errors:
  /// `rejected` for an empty operator name, the rest as publish().
  [[nodiscard]] expected<purge_report, sink_error> purge(const purge_request& request);

  [[nodiscard]] expected<moderation_record, moderation_error> act(const moderation_request& request) override;
  [[nodiscard]] expected<std::optional<moderation_record>, moderation_error> get(std::string_view dlq_id) override;
  /// Up to `limit` records with this status, oldest (created_at) first.
  [[nodiscard]] expected<std::vector<moderation_record>, moderation_error> list(moderation_status status,
                                                                              std::size_t limit) override;
  [[nodiscard]] expected<std::vector<moderation_record>, moderation_error> list_after(
      moderation_status status, std::string_view after_created_at, std::string_view after_dlq_id,
      std::size_t limit) override;
  [[nodiscard]] expected<moderation_page, moderation_error> query(const moderation_query& query) override;
  [[nodiscard]] expected<dlq_statistics, moderation_error> statistics() override;
  using moderation_store::timeline;
  /// Reads `llmdlq_traffic` (in the table's schema; migrate() makes it)
  /// when it is there; without it `processed` stays 0.
  [[nodiscard]] expected<std::vector<dlq_timeline_bucket>, moderation_error> timeline(
      timestamp since, timestamp until, std::chrono::seconds width) override;
  /// One upsert into `llmdlq_traffic`; fails when migrate() has not made it.
  [[nodiscard]] expected<void, moderation_error> record_traffic(timestamp at, std::uint64_t processed,
                                                                std::uint64_t dead_lettered) override;
  /// Walks every row in dlq_id order and stores what `change` returns for
  /// it (status, log and times unchanged), `batch` rows per transaction
  /// (locked FOR UPDATE while `change` runs): a batch is written whole or
  /// not at all, and a failure stops the walk after the batches already
  /// committed. `change` sees the envelope as jsonb prints it, and may see a
  /// batch twice when a lost connection is retried. Returns the rows changed.
  [[nodiscard]] expected<std::size_t, moderation_error> rewrite_envelopes(const envelope_rewrite& change,
                                                                         std::size_t batch = 256);

  /// The table as SQL names it: `"schema"."table"`, or `"table"`.
  [[nodiscard]] const std::string& qualified_table() const noexcept;

 private:
  struct impl;
  explicit postgres_store(std::unique_ptr<impl> impl) noexcept;
  std::unique_ptr<impl> impl_;
};

LLMDLQ_END_NAMESPACE
