// SPDX-License-Identifier: MIT
// redis_stream_sink on hiredis: one Lua script per envelope (dedupe + XADD),
// pipelined for batches, one connection behind a mutex.
#include "llmdlq/config.hpp"
#include "llmdlq/redis/stream_sink.hpp"

#include <algorithm>
#include <array>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include <boost/json/serialize.hpp>
#include <fmt/format.h>

#include "connection.hpp"
#include "llmdlq/detail/store/record_check.hpp"

LLMDLQ_BEGIN_NAMESPACE

namespace {

using redis_detail::arguments;
using redis_detail::reply_ptr;

// KEYS: the stream, the dlq_id's dedupe key, optionally the idempotency
// key's. ARGV: dedupe TTL in seconds, MAXLEN (0: none), then the values of
// dlq_id, category, triage, failure_code and envelope. Returns {1, new entry
// id, dlq_id} or {0, the entry id stored before, the stored dlq_id} (dedupe
// keys hold "<entry id> <dlq_id>"). It reads before it writes, so an XADD
// that fails (OOM, a key of another type) leaves no dedupe key behind.
constexpr std::string_view publish_script = R"lua(
local id = redis.call('GET', KEYS[2])
if not id and #KEYS > 2 then id = redis.call('GET', KEYS[3]) end
if id then
  local space = string.find(id, ' ', 1, true)
  if space then return {0, string.sub(id, 1, space - 1), string.sub(id, space + 1)} end
  return {0, id, ARGV[3]}
end
if ARGV[2] == '0' then
  id = redis.call('XADD', KEYS[1], '*', 'dlq_id', ARGV[3], 'category', ARGV[4], 'triage', ARGV[5],
                  'failure_code', ARGV[6], 'envelope', ARGV[7])
else
  id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], '*', 'dlq_id', ARGV[3], 'category', ARGV[4],
                  'triage', ARGV[5], 'failure_code', ARGV[6], 'envelope', ARGV[7])
end
redis.call('SET', KEYS[2], id .. ' ' .. ARGV[3], 'EX', ARGV[1])
if #KEYS > 2 then redis.call('SET', KEYS[3], id .. ' ' .. ARGV[3], 'EX', ARGV[1]) end
return {1, id, ARGV[3]}
)lua";

sink_errc sink_code(redis_errc code) noexcept {
  switch (code) {
    case redis_errc::unavailable: return sink_errc::unavailable;
    case redis_errc::timeout: return sink_errc::timeout;
    case redis_errc::protocol_error: return sink_errc::io_error;
    case redis_errc::rejected: return sink_errc::rejected;
    case redis_errc::closed: return sink_errc::closed;
  }
  return sink_errc::unavailable;
}

sink_error to_sink_error(redis_error&& e) { return {sink_code(e.code), std::move(e.message)}; }

// Everything one EVALSHA sends, owned, so the views in args() stay valid.
struct publish_call {
  std::string id_key, idempotency_key, dlq_id, category, triage, code, json;
  bool with_idempotency_key = false;
};

}  // namespace

struct redis_stream_sink::impl {
  redis_stream_sink_options options;
  redis_detail::connection conn;
  std::string sha;  // the script's SHA1, from SCRIPT LOAD
  std::string ttl, max_length, location_prefix;
  redis_persistence persistence;  // as of the last connect
  std::mutex mutex;

  explicit impl(redis_stream_sink_options o)
      : options(std::move(o)),
        conn(options.connection),
        ttl(std::to_string(options.dedupe_ttl.count())),
        max_length(std::to_string(options.max_length)),
        location_prefix(fmt::format("redis:{}:{}/{}#{}@", options.connection.host, options.connection.port,
                                    options.connection.db, options.stream)) {
    if (options.dedupe_prefix.empty()) options.dedupe_prefix = options.stream + ":dedupe:";
    conn.on_connect = [this](redis_detail::connection& c) -> expected<void, redis_error> {
      if (auto checked = check_persistence(c); !checked) return checked;
      return load_script(c);
    };
  }

  expected<void, redis_error> check_persistence(redis_detail::connection& c) {
    return redis_detail::check_persistence(c, persistence, options.require_persistence, "dead letters",
                                           "redis_stream_sink_options::require_persistence");
  }

  expected<void, redis_error> load_script(redis_detail::connection& c) {
    const std::array<std::string_view, 3> args{"SCRIPT", "LOAD", publish_script};
    auto reply = c.command(args);
    if (!reply) return unexpected(std::move(reply.error()));
    if ((*reply)->type == REDIS_REPLY_ERROR) return unexpected(redis_detail::reply_error(**reply, "SCRIPT LOAD"));
    if ((*reply)->type != REDIS_REPLY_STRING) {
      return unexpected(redis_error{redis_errc::protocol_error, "redis: SCRIPT LOAD: unexpected reply"});
    }
    sha = std::string(redis_detail::text(**reply));
    return {};
  }

  publish_call call_for(const envelope& e) const {
    publish_call call;
    call.id_key = options.dedupe_prefix + "id:" + e.dlq_id;
    call.with_idempotency_key = options.dedupe_idempotency_key && !e.idempotency_key.empty();
    if (call.with_idempotency_key) {
      call.idempotency_key = fmt::format("{}key:{}:{}", options.dedupe_prefix, e.attempts.count, e.idempotency_key);
    }
    call.dlq_id = e.dlq_id;
    call.category = std::string(to_string(e.failure.category));
    call.triage = std::string(to_string(e.triage.kind));
    call.code = e.failure.code;
    call.json = serialize(e);
    return call;
  }

  // EVALSHA sha numkeys KEYS... ARGV...
  std::array<std::string_view, 13> args_of(const publish_call& call) const {
    if (call.with_idempotency_key) {
      return {"EVALSHA", sha,        "3",         options.stream, call.id_key, call.idempotency_key,
              ttl,       max_length, call.dlq_id, call.category,  call.triage, call.code,
              call.json};
    }
    return {"EVALSHA",   sha,           "2",         options.stream, call.id_key, ttl, max_length,
            call.dlq_id, call.category, call.triage, call.code,      call.json,   {}};
  }

  static arguments used(const publish_call& call, const std::array<std::string_view, 13>& args) {
    return arguments(args.data(), call.with_idempotency_key ? 13 : 12);
  }

  // The script's reply as a receipt.
  expected<receipt, redis_error> receipt_of(const redisReply& reply) const {
    if (reply.type == REDIS_REPLY_ERROR) return unexpected(redis_detail::reply_error(reply, "publish"));
    if (reply.type != REDIS_REPLY_ARRAY || reply.elements != 3 || reply.element[0]->type != REDIS_REPLY_INTEGER ||
        reply.element[1]->type != REDIS_REPLY_STRING || reply.element[2]->type != REDIS_REPLY_STRING) {
      return unexpected(redis_error{redis_errc::protocol_error, "redis: publish: unexpected reply from the script"});
    }
    return receipt{std::string(redis_detail::text(*reply.element[2])), reply.element[0]->integer == 0,
                   location_prefix + std::string(redis_detail::text(*reply.element[1]))};
  }

  // WAIT for the replicas, when asked to.
  expected<void, redis_error> wait_for_replicas() {
    if (options.replicas <= 0) return {};
    const std::string replicas = std::to_string(options.replicas);
    const std::string timeout = std::to_string(options.replica_timeout.count());
    const std::array<std::string_view, 3> args{"WAIT", replicas, timeout};
    conn.set_timeout(options.replica_timeout + options.connection.command_timeout);
    auto reply = conn.command(args);
    conn.set_timeout(options.connection.command_timeout);
    if (!reply) return unexpected(std::move(reply.error()));
    if ((*reply)->type == REDIS_REPLY_ERROR) return unexpected(redis_detail::reply_error(**reply, "WAIT"));
    if ((*reply)->type != REDIS_REPLY_INTEGER) {
      return unexpected(redis_error{redis_errc::protocol_error, "redis: WAIT: unexpected reply"});
    }
    if ((*reply)->integer < options.replicas) {
      return unexpected(redis_error{redis_errc::timeout,
                                    fmt::format("redis: WAIT: {} of {} replicas acknowledged within {} ms; the entry "
                                                "is on the primary",
                                                (*reply)->integer, options.replicas, options.replica_timeout.count())});
    }
    return {};
  }

  expected<receipt, redis_error> publish_one(const publish_call& call) {
    auto args = args_of(call);
    auto reply = conn.command(used(call, args));
    if (!reply) return unexpected(std::move(reply.error()));
    if (redis_detail::is_error(**reply, "NOSCRIPT")) {  // SCRIPT FLUSH, or a failover to a server without it
      if (auto loaded = load_script(conn); !loaded) return unexpected(std::move(loaded.error()));
      args = args_of(call);
      reply = conn.command(used(call, args));
      if (!reply) return unexpected(std::move(reply.error()));
    }
    auto stored = receipt_of(**reply);
    if (!stored) return stored;
    if (auto waited = wait_for_replicas(); !waited) return unexpected(std::move(waited.error()));
    return stored;
  }

  expected<std::vector<receipt>, redis_error> publish_many(std::span<const envelope> batch,
                                                           const std::vector<publish_call>& calls) {
    std::vector<std::size_t> todo(batch.size());
    for (std::size_t i = 0; i < todo.size(); ++i) todo[i] = i;
    std::vector<receipt> receipts(batch.size());
    std::optional<redis_error> first_error;
    // At most twice: a second round only for scripts the server had lost.
    for (int round = 0; round < 2 && !todo.empty(); ++round) {
      if (round > 0) {
        if (auto loaded = load_script(conn); !loaded) return unexpected(std::move(loaded.error()));
      }
      for (const std::size_t i : todo) {
        const auto args = args_of(calls[i]);
        if (auto queued = conn.append(used(calls[i], args)); !queued) return unexpected(std::move(queued.error()));
      }
      std::vector<std::size_t> lost_script;
      for (const std::size_t i : todo) {
        auto reply = conn.get_reply();
        if (!reply) return unexpected(std::move(reply.error()));
        if (round == 0 && redis_detail::is_error(**reply, "NOSCRIPT")) {
          lost_script.push_back(i);
          continue;
        }
        auto stored = receipt_of(**reply);
        if (!stored) {
          if (!first_error) first_error = std::move(stored.error());
          continue;  // read every reply, so the connection stays in step
        }
        receipts[i] = std::move(*stored);
      }
      todo = std::move(lost_script);
    }
    if (first_error) return unexpected(std::move(*first_error));
    if (auto waited = wait_for_replicas(); !waited) return unexpected(std::move(waited.error()));
    return receipts;
  }
};

redis_stream_sink::redis_stream_sink(std::unique_ptr<impl> impl) noexcept : impl_(std::move(impl)) {}
redis_stream_sink::redis_stream_sink(redis_stream_sink&&) noexcept = default;
redis_stream_sink& redis_stream_sink::operator=(redis_stream_sink&&) noexcept = default;
redis_stream_sink::~redis_stream_sink() = default;

expected<redis_stream_sink, sink_error> redis_stream_sink::open(redis_stream_sink_options options) {
  if (options.stream.empty()) return unexpected(sink_error{sink_errc::rejected, "redis: the stream key is empty"});
  if (options.dedupe_ttl.count() < 1) {
    return unexpected(sink_error{sink_errc::rejected, "redis: dedupe_ttl must be at least one second"});
  }
  auto state = std::make_unique<impl>(std::move(options));
  std::lock_guard lock(state->mutex);
  const redis_detail::sigpipe_guard no_sigpipe;
  if (auto connected = state->conn.ensure(); !connected) return unexpected(to_sink_error(std::move(connected.error())));
  return redis_stream_sink(std::move(state));
}

expected<receipt, sink_error> redis_stream_sink::publish(const envelope& e) {
  if (!impl_) return unexpected(sink_error{sink_errc::closed, "redis: the sink was moved from"});
  if (e.dlq_id.empty()) return unexpected(sink_error{sink_errc::rejected, "redis: the envelope has no dlq_id"});
  const publish_call call = impl_->call_for(e);
  std::lock_guard lock(impl_->mutex);
  const redis_detail::sigpipe_guard no_sigpipe;
  // Safe to run twice: a second run finds the first one's dedupe key.
  auto stored = impl_->conn.run<receipt>([&] { return impl_->publish_one(call); });
  if (!stored) return unexpected(to_sink_error(std::move(stored.error())));
  return std::move(*stored);
}

expected<std::vector<receipt>, sink_error> redis_stream_sink::publish_batch(std::span<const envelope> batch) {
  if (!impl_) return unexpected(sink_error{sink_errc::closed, "redis: the sink was moved from"});
  if (batch.empty()) return std::vector<receipt>{};
  std::vector<publish_call> calls;
  calls.reserve(batch.size());
  for (const auto& e : batch) {
    if (e.dlq_id.empty()) return unexpected(sink_error{sink_errc::rejected, "redis: an envelope has no dlq_id"});
    calls.push_back(impl_->call_for(e));
  }
  std::lock_guard lock(impl_->mutex);
  const redis_detail::sigpipe_guard no_sigpipe;
  auto stored = impl_->conn.run<std::vector<receipt>>([&] { return impl_->publish_many(batch, calls); });
  if (!stored) return unexpected(to_sink_error(std::move(stored.error())));
  return std::move(*stored);
}

expected<purge_report, sink_error> redis_stream_sink::purge(const purge_request& request, std::size_t page_size) {
  if (!impl_) return unexpected(sink_error{sink_errc::closed, "redis: the sink was moved from"});
  if (request.operator_name.empty()) {
    return unexpected(sink_error{sink_errc::rejected, "redis: a purge needs an operator name for its audit"});
  }
  const std::string& stream = impl_->options.stream;
  const std::string count = std::to_string(std::max<std::size_t>(page_size, 1));
  std::lock_guard lock(impl_->mutex);
  const redis_detail::sigpipe_guard no_sigpipe;
  // Safe to repeat: a page read again finds its expired entries gone.
  auto purged = impl_->conn.run<purge_report>([&]() -> expected<purge_report, redis_error> {
    auto report = purge_report::for_request(request);
    std::string start = "-";
    for (;;) {
      const std::array<std::string_view, 6> range{"XRANGE", stream, start, "+", "COUNT", count};
      auto page = impl_->conn.command(range);
      if (!page) return unexpected(std::move(page.error()));
      const redisReply& entries = **page;
      if (entries.type == REDIS_REPLY_ERROR) return unexpected(redis_detail::reply_error(entries, "XRANGE"));
      if (entries.type != REDIS_REPLY_ARRAY) {
        return unexpected(redis_error{redis_errc::protocol_error, "redis: XRANGE: unexpected reply"});
      }
      std::vector<std::string> doomed;
      for (std::size_t i = 0; i < entries.elements; ++i) {
        const redisReply& entry = *entries.element[i];
        if (entry.type != REDIS_REPLY_ARRAY || entry.elements != 2) continue;
        const std::string id(redis_detail::text(*entry.element[0]));
        start = "(" + id;
        const redisReply& fields = *entry.element[1];
        std::optional<expected<envelope, envelope_error>> e;
        for (std::size_t f = 0; f + 1 < fields.elements && !e; f += 2) {
          if (redis_detail::text(*fields.element[f]) == "envelope") {
            e = parse_envelope(redis_detail::text(*fields.element[f + 1]));
          }
        }
        // Kept, never taken as expired: named by its entry id, which is all it has for sure.
        if (!e) {
          report.add_unreadable("entry " + id, "no envelope field");
        } else if (!*e) {
          report.add_unreadable("entry " + id, detail::store::envelope_reason(e->error()));
        } else if (expired(**e, request.now)) {
          report.add(*(*e)->expires_at);
          doomed.push_back(id);
        }
      }
      if (!request.dry_run && !doomed.empty()) {
        std::vector<std::string_view> del{"XDEL", stream};
        del.insert(del.end(), doomed.begin(), doomed.end());
        auto done = impl_->conn.command(del);
        if (!done) return unexpected(std::move(done.error()));
        if ((*done)->type == REDIS_REPLY_ERROR) return unexpected(redis_detail::reply_error(**done, "XDEL"));
      }
      if (request.on_piece) request.on_piece(report);
      if (entries.elements < std::max<std::size_t>(page_size, 1)) break;
    }
    if (request.dry_run) return report;
    const auto json = to_json(report);
    std::vector<std::string> values;
    for (const auto& [key, value] : json) {
      values.emplace_back(key);
      values.push_back(value.is_string() ? std::string(value.get_string()) : boost::json::serialize(value));
    }
    const std::string audit_stream = stream + ":audit";
    std::vector<std::string_view> add{"XADD", audit_stream, "*"};
    add.insert(add.end(), values.begin(), values.end());
    auto added = impl_->conn.command(add);
    if (!added) return unexpected(std::move(added.error()));
    if ((*added)->type == REDIS_REPLY_ERROR) return unexpected(redis_detail::reply_error(**added, "XADD audit"));
    return report;
  });
  if (!purged) return unexpected(to_sink_error(std::move(purged.error())));
  return std::move(*purged);
}

const redis_stream_sink_options& redis_stream_sink::options() const noexcept { return impl_->options; }

redis_persistence redis_stream_sink::persistence() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->persistence;
}

LLMDLQ_END_NAMESPACE
