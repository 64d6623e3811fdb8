// SPDX-License-Identifier: MIT
// A dead-letter queue in a Redis stream: one entry per envelope, written by
// XADD with an approximate MAXLEN, deduplicated by dlq_id.
// Part of the llmdlq::redis library (hiredis).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/envelope.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/purge.hpp"
#include "llmdlq/redis/connection_options.hpp"
#include "llmdlq/redis/persistence.hpp"
#include "llmdlq/sink.hpp"

LLMDLQ_BEGIN_NAMESPACE

struct redis_stream_sink_options {
  redis_connection_options connection;
  std::string stream = "llmdlq:dead-letters";  ///< the stream's key
  /// `XADD key MAXLEN ~ max_length`: Redis trims whole internal nodes, so the
  /// stream keeps at least this many entries and a little more. 0: no trimming.
  std::uint64_t max_length = 1'000'000;
  /// Dedupe keys are `<dedupe_prefix>id:<dlq_id>` and
  /// `<dedupe_prefix>key:<attempt>:<idempotency key>`; empty means `<stream>:dedupe:`.
  std::string dedupe_prefix;
  /// How long a dedupe key lives: a re-publish after this is a new entry.
  std::chrono::seconds dedupe_ttl = std::chrono::hours(24 * 7);
  /// Also treat an envelope with the idempotency key and attempt of a stored
  /// one as a duplicate (one made by an older version, with another dlq_id,
  /// for the same input), as sqlite_store does.
  bool dedupe_idempotency_key = true;
  /// When > 0, each publish then runs `WAIT replicas replica_timeout` and
  /// fails with sink_errc::timeout unless that many replicas acknowledged.
  int replicas = 0;
  std::chrono::milliseconds replica_timeout{1000};
  /// Refuse a server that would lose what it acknowledged in a crash: on
  /// every connect the sink asks it (`INFO persistence`, `CONFIG GET
  /// appendfsync`) and fails with `rejected`, saying what is missing, unless
  /// it keeps an append-only file (`appendonly yes`) that it syncs
  /// (`appendfsync` always or everysec; unknown when CONFIG is renamed or
  /// forbidden, which is accepted). A server that does not answer INFO (an
  /// ACL user without `+info`) cannot show it persists and is refused too.
  /// false accepts any server: receipts then only say that the server holds
  /// the entry in memory (see persistence()).
  bool require_persistence = true;
};

/// Publishes each envelope as one entry of a Redis stream, with the fields
///
///   dlq_id, category, triage, failure_code  (to filter on without parsing)
///   envelope                                (its JSON, as serialize() writes it)
///
/// A Lua script (EVALSHA) makes the publish atomic and idempotent: when the
/// dedupe key of the envelope's dlq_id (or of its idempotency key and attempt)
/// exists, nothing is added and the receipt is `duplicate`, naming the entry
/// first written and its dlq_id; otherwise it XADDs and stores the new entry
/// id and the dlq_id ("<entry id> <dlq_id>") under the dedupe keys, which
/// expire after `dedupe_ttl`. The script checks before it
/// writes, so a failed XADD leaves no dedupe key behind. Receipts' location
/// is `redis:<host>:<port>/<db>#<stream>@<entry id>`.
///
/// Durable here means: the server replied to the script. With the server's
/// `appendonly yes` and `appendfsync always` that reply comes after the entry
/// is fsynced to the append-only file; with `appendfsync everysec` (Redis's
/// default) up to a second of entries can be lost in a server crash, and
/// without AOF, everything since the last snapshot: such a server is refused
/// unless `require_persistence` is false. `replicas` > 0 adds `WAIT`: the
/// publish also waits for that many replicas to have the entry.
///
/// publish_batch sends all scripts in one pipeline (one round trip). Each
/// envelope is its own atomic step: on an error, some of the batch may be
/// stored; retrying the batch is safe, the stored ones come back `duplicate`.
///
/// A lost connection, a refused connection or a timeout is a sink_error
/// (unavailable or timeout; a reply it cannot read is io_error, a refusal
/// rejected); the next call connects again, and a call that
/// finds the previous connection dead reconnects once on its own. Nothing
/// throws but std::bad_alloc; nothing is printed; SIGPIPE from a closed
/// socket is kept from the process. Thread-safe: one connection behind a
/// mutex, so concurrent publishes are serialized. Not for Redis Cluster.
class redis_stream_sink final : public sink {
 public:
  /// Connects, authenticates, selects the database, checks the server's
  /// persistence and loads the script; unavailable when the server cannot be
  /// reached, rejected when it does not persist (see require_persistence).
  [[nodiscard]] static expected<redis_stream_sink, sink_error> open(redis_stream_sink_options options = {});

  redis_stream_sink(redis_stream_sink&&) noexcept;
  redis_stream_sink& operator=(redis_stream_sink&&) noexcept;
  ~redis_stream_sink() override;

  [[nodiscard]] expected<receipt, sink_error> publish(const envelope& e) override;
  [[nodiscard]] expected<std::vector<receipt>, sink_error> publish_batch(std::span<const envelope> batch) override;

  /// Deletes the stream's entries whose envelope expires at or before
  /// `request.now` (entries without expires_at, or whose envelope field does
  /// not read back, stay): XRANGE in pages of `page_size`, XDEL of the
  /// expired ones in each page. The audit is one entry of `<stream>:audit`
  /// with the fields of to_json(report), added after the deletes (a crash
  /// between them loses the audit entry, not the purge). The purged entries'
  /// dedupe keys are left to expire (`dedupe_ttl`): until they do, publishing
  /// a purged envelope again is still reported `duplicate`. MAXLEN trimming
  /// and the dedupe TTL bound the stream and its keys between purges. A dry
  /// run reads and writes nothing. Errors: `rejected` for an empty operator
  /// name, the rest as publish().
  [[nodiscard]] expected<purge_report, sink_error> purge(const purge_request& request, std::size_t page_size = 500);

  [[nodiscard]] const redis_stream_sink_options& options() const noexcept;
  /// What the server said about its persistence when the sink last connected
  /// (on open() and after every reconnect).
  [[nodiscard]] redis_persistence persistence() const;

  [[nodiscard]] std::string_view kind() const noexcept override { return "redis"; }

 private:
  struct impl;
  explicit redis_stream_sink(std::unique_ptr<impl> impl) noexcept;
  std::unique_ptr<impl> impl_;
};

LLMDLQ_END_NAMESPACE
