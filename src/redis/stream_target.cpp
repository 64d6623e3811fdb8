// SPDX-License-Identifier: MIT
// redis_stream_target on hiredis: one Lua script per delivery (the delivered
// hash checked, then XADD and the hash set).
#include "llmdlq/config.hpp"
#include "llmdlq/redis/stream_target.hpp"

#include <array>
#include <string_view>
#include <utility>

#include "connection.hpp"
#include "llmdlq/detail/deliverable.hpp"

LLMDLQ_BEGIN_NAMESPACE

namespace {

// KEYS: the stream, the delivered hash. ARGV: MAXLEN (0: none), the
// idempotency key, then field-value pairs. Returns {1, new entry id} or
// {0, the entry id delivered before}. It reads before it writes, so an XADD
// that fails leaves the key undelivered.
constexpr std::string_view deliver_script = R"lua(
local id = redis.call('HGET', KEYS[2], ARGV[2])
if id then return {0, id} end
local fields = {}
for i = 3, #ARGV do fields[#fields + 1] = ARGV[i] end
if ARGV[1] == '0' then
  id = redis.call('XADD', KEYS[1], '*', unpack(fields))
else
  id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', unpack(fields))
end
redis.call('HSET', KEYS[2], ARGV[2], id)
return {1, id}
)lua";

// A server that cannot take the delivery now, or one that never will.
replay_error to_replay_error(redis_error&& e) {
  const bool refused = e.code == redis_errc::rejected;
  return {refused ? replay_errc::target_refused : replay_errc::target_unavailable, std::move(e.message), {}, {}};
}

}  // namespace

struct redis_stream_target::impl {
  redis_stream_target_options options;
  redis_detail::connection conn;
  std::string max_length;
  redis_persistence persistence;  // as of the last connect

  explicit impl(redis_stream_target_options o)
      : options(std::move(o)), conn(options.connection), max_length(std::to_string(options.max_length)) {
    if (options.delivered_key.empty()) options.delivered_key = options.stream + ":delivered";
    conn.on_connect = [this](redis_detail::connection& c) { return check_persistence(c); };
  }

  expected<void, redis_error> check_persistence(redis_detail::connection& c) {
    return redis_detail::check_persistence(c, persistence, options.require_persistence, "deliveries",
                                           "redis_stream_target_options::require_persistence");
  }

  expected<void, redis_error> deliver(const ledger_entry& entry) {
    std::array<std::string_view, 19> args{"EVAL",
                                          deliver_script,
                                          "2",
                                          options.stream,
                                          options.delivered_key,
                                          max_length,
                                          entry.idempotency_key,
                                          "idempotency_key",
                                          entry.idempotency_key,
                                          "source",
                                          entry.source,
                                          "output",
                                          entry.output};
    std::size_t used = 13;
    const auto add = [&](std::string_view field, const std::string& value) {
      if (value.empty()) return;
      args[used++] = field;
      args[used++] = value;
    };
    add("dlq_id", entry.dlq_id);
    add("resolved_by", entry.resolved_by);
    add("note", entry.note);
    return conn.run<void>([&]() -> expected<void, redis_error> {
      auto reply = conn.command(redis_detail::arguments(args.data(), used));
      if (!reply) return unexpected(std::move(reply.error()));
      const redisReply& r = **reply;
      if (r.type == REDIS_REPLY_ERROR) return unexpected(redis_detail::reply_error(r, "deliver"));
      if (r.type != REDIS_REPLY_ARRAY || r.elements != 2 || r.element[0]->type != REDIS_REPLY_INTEGER) {
        return unexpected(redis_error{redis_errc::protocol_error, "redis: deliver: unexpected reply from the script"});
      }
      return {};
    });
  }
};

redis_stream_target::redis_stream_target(std::unique_ptr<impl> impl) noexcept : impl_(std::move(impl)) {}
redis_stream_target::redis_stream_target(redis_stream_target&&) noexcept = default;
redis_stream_target& redis_stream_target::operator=(redis_stream_target&&) noexcept = default;
redis_stream_target::~redis_stream_target() = default;

const redis_stream_target_options& redis_stream_target::options() const noexcept { return impl_->options; }

expected<redis_stream_target, replay_error> redis_stream_target::open(redis_stream_target_options options) {
  if (options.stream.empty())
    return detail::target_failure(replay_errc::target_refused, "redis: the stream's key is empty");
  auto state = std::make_unique<impl>(std::move(options));
  const redis_detail::sigpipe_guard guard;
  if (auto connected = state->conn.ensure(); !connected)
    return unexpected(to_replay_error(std::move(connected.error())));
  return redis_stream_target(std::move(state));
}

expected<void, replay_error> redis_stream_target::deliver(const ledger_entry& entry) {
  if (auto json = detail::deliverable(entry); !json) return json;
  const redis_detail::sigpipe_guard guard;
  if (auto delivered = impl_->deliver(entry); !delivered)
    return unexpected(to_replay_error(std::move(delivered.error())));
  return {};
}

LLMDLQ_END_NAMESPACE
