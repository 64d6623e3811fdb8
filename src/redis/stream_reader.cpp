// SPDX-License-Identifier: MIT
// redis_stream_reader on hiredis: XREADGROUP (pending entries first, then
// new ones), XACK, XAUTOCLAIM, one connection behind a mutex.
#include "llmdlq/config.hpp"
#include "llmdlq/redis/stream_reader.hpp"

#include <array>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "connection.hpp"

LLMDLQ_BEGIN_NAMESPACE

namespace {

using redis_detail::arguments;
using redis_detail::reply_ptr;
using redis_detail::text;

redis_error unexpected_reply(std::string_view what) {
  return {redis_errc::protocol_error, fmt::format("redis: {}: unexpected reply", what)};
}

// One [id, [field, value, ...]] of a stream reply; [id, nil] is an entry
// deleted after it was delivered.
expected<redis_stream_entry, redis_error> entry_of(const redisReply& reply, std::string_view what) {
  if (reply.type != REDIS_REPLY_ARRAY || reply.elements != 2 || reply.element[0]->type != REDIS_REPLY_STRING) {
    return unexpected(unexpected_reply(what));
  }
  redis_stream_entry entry;
  entry.id = std::string(text(*reply.element[0]));
  const redisReply& fields = *reply.element[1];
  if (fields.type == REDIS_REPLY_NIL) {
    entry.parsed = unexpected(envelope_error{"", "the entry was deleted (trimmed) before it was acknowledged"});
    return entry;
  }
  if (fields.type != REDIS_REPLY_ARRAY || fields.elements % 2 != 0) return unexpected(unexpected_reply(what));
  entry.fields.reserve(fields.elements / 2);
  for (std::size_t i = 0; i < fields.elements; i += 2) {
    const redisReply& key = *fields.element[i];
    const redisReply& value = *fields.element[i + 1];
    if (key.type != REDIS_REPLY_STRING || value.type != REDIS_REPLY_STRING) return unexpected(unexpected_reply(what));
    entry.fields.emplace_back(std::string(text(key)), std::string(text(value)));
  }
  if (const auto json = entry.field("envelope")) {
    entry.parsed = parse_envelope(*json);
  } else {
    entry.parsed = unexpected(envelope_error{"", "the entry has no envelope field"});
  }
  return entry;
}

// An array of entries.
expected<std::vector<redis_stream_entry>, redis_error> entries_of(const redisReply& reply, std::string_view what) {
  if (reply.type != REDIS_REPLY_ARRAY) return unexpected(unexpected_reply(what));
  std::vector<redis_stream_entry> entries;
  entries.reserve(reply.elements);
  for (std::size_t i = 0; i < reply.elements; ++i) {
    auto entry = entry_of(*reply.element[i], what);
    if (!entry) return unexpected(std::move(entry.error()));
    entries.push_back(std::move(*entry));
  }
  return entries;
}

}  // namespace

struct redis_stream_reader::impl {
  redis_stream_reader_options options;
  redis_detail::connection conn;
  // While true, read() returns this consumer's pending entries after
  // `pending_cursor`; set again on every (re)connect.
  bool pending_phase = true;
  std::string pending_cursor = "0";
  std::string claim_cursor = "0-0";
  std::mutex mutex;

  explicit impl(redis_stream_reader_options o) : options(std::move(o)), conn(options.connection) {
    conn.on_connect = [this](redis_detail::connection& c) -> expected<void, redis_error> {
      pending_phase = true;  // a reply lost with the old connection left its entries pending
      pending_cursor.assign(1, '0');
      return create_group(c);
    };
  }

  expected<void, redis_error> create_group(redis_detail::connection& c) {
    const std::array<std::string_view, 6> args{"XGROUP", "CREATE", options.stream, options.group, options.group_start,
                                               "MKSTREAM"};
    auto reply = c.command(args);
    if (!reply) return unexpected(std::move(reply.error()));
    if ((*reply)->type == REDIS_REPLY_ERROR && !redis_detail::is_error(**reply, "BUSYGROUP")) {
      return unexpected(redis_detail::reply_error(**reply, "XGROUP CREATE"));
    }
    return {};
  }

  // XREADGROUP from `from` ("0"-style ids: pending entries; ">": new ones).
  expected<std::vector<redis_stream_entry>, redis_error> read_group(std::size_t count, std::string_view from,
                                                                   std::chrono::milliseconds block) {
    const std::string count_text = std::to_string(count);
    const std::string block_text = std::to_string(block.count());
    std::vector<std::string_view> args{"XREADGROUP", "GROUP", options.group, options.consumer, "COUNT", count_text};
    if (block.count() > 0) {
      args.push_back("BLOCK");
      args.push_back(block_text);
    }
    args.push_back("STREAMS");
    args.push_back(options.stream);
    args.push_back(from);
    for (int attempt = 0;; ++attempt) {
      if (block.count() > 0) conn.set_timeout(block + options.connection.command_timeout);
      auto reply = conn.command(args);
      if (block.count() > 0) conn.set_timeout(options.connection.command_timeout);
      if (!reply) return unexpected(std::move(reply.error()));
      const redisReply& r = **reply;
      if (attempt == 0 && redis_detail::is_error(r, "NOGROUP")) {  // the stream or group was deleted
        if (auto created = create_group(conn); !created) return unexpected(std::move(created.error()));
        continue;
      }
      if (r.type == REDIS_REPLY_ERROR) return unexpected(redis_detail::reply_error(r, "XREADGROUP"));
      if (r.type == REDIS_REPLY_NIL) return std::vector<redis_stream_entry>{};  // BLOCK ran out
      // [[stream, [entries...]]]
      if (r.type != REDIS_REPLY_ARRAY) return unexpected(unexpected_reply("XREADGROUP"));
      if (r.elements == 0) return std::vector<redis_stream_entry>{};
      const redisReply& stream = *r.element[0];
      if (stream.type != REDIS_REPLY_ARRAY || stream.elements != 2) return unexpected(unexpected_reply("XREADGROUP"));
      return entries_of(*stream.element[1], "XREADGROUP");
    }
  }

  expected<std::vector<redis_stream_entry>, redis_error> read_once(std::size_t count, std::chrono::milliseconds block) {
    if (pending_phase) {
      auto pending = read_group(count, pending_cursor, std::chrono::milliseconds(0));
      if (!pending) return pending;
      if (!pending->empty()) {
        pending_cursor = pending->back().id;
        return pending;
      }
      pending_phase = false;
    }
    return read_group(count, ">", block);
  }

  expected<std::size_t, redis_error> ack_ids(std::span<const std::string_view> ids) {
    std::vector<std::string_view> args{"XACK", options.stream, options.group};
    args.insert(args.end(), ids.begin(), ids.end());
    auto reply = conn.command(args);
    if (!reply) return unexpected(std::move(reply.error()));
    if ((*reply)->type == REDIS_REPLY_ERROR) return unexpected(redis_detail::reply_error(**reply, "XACK"));
    if ((*reply)->type != REDIS_REPLY_INTEGER) return unexpected(unexpected_reply("XACK"));
    return static_cast<std::size_t>((*reply)->integer);
  }

  expected<std::vector<redis_stream_entry>, redis_error> claim_once(std::chrono::milliseconds min_idle,
                                                                   std::size_t count) {
    const std::string idle = std::to_string(min_idle.count());
    const std::string count_text = std::to_string(count);
    const std::array<std::string_view, 8> args{
        "XAUTOCLAIM", options.stream, options.group, options.consumer, idle, claim_cursor, "COUNT", count_text};
    auto reply = conn.command(args);
    if (!reply) return unexpected(std::move(reply.error()));
    const redisReply& r = **reply;
    if (r.type == REDIS_REPLY_ERROR) return unexpected(redis_detail::reply_error(r, "XAUTOCLAIM"));
    // [next cursor, [entries...]] (6.2), and [deleted ids...] since 7.0.
    if (r.type != REDIS_REPLY_ARRAY || r.elements < 2 || r.element[0]->type != REDIS_REPLY_STRING) {
      return unexpected(unexpected_reply("XAUTOCLAIM"));
    }
    auto claimed = entries_of(*r.element[1], "XAUTOCLAIM");
    if (!claimed) return claimed;
    // The third element (7.0+) lists entries deleted from the stream, which
    // XAUTOCLAIM dropped from the pending list itself.
    claim_cursor = std::string(text(*r.element[0]));
    return claimed;
  }

  expected<std::uint64_t, redis_error> pending_once() {
    const std::array<std::string_view, 3> args{"XPENDING", options.stream, options.group};
    auto reply = conn.command(args);
    if (!reply) return unexpected(std::move(reply.error()));
    const redisReply& r = **reply;
    if (r.type == REDIS_REPLY_ERROR) return unexpected(redis_detail::reply_error(r, "XPENDING"));
    if (r.type != REDIS_REPLY_ARRAY || r.elements < 1 || r.element[0]->type != REDIS_REPLY_INTEGER) {
      return unexpected(unexpected_reply("XPENDING"));
    }
    return static_cast<std::uint64_t>(r.element[0]->integer);
  }
};

redis_stream_reader::redis_stream_reader(std::unique_ptr<impl> impl) noexcept : impl_(std::move(impl)) {}
redis_stream_reader::redis_stream_reader(redis_stream_reader&&) noexcept = default;
redis_stream_reader& redis_stream_reader::operator=(redis_stream_reader&&) noexcept = default;
redis_stream_reader::~redis_stream_reader() = default;

namespace {
const redis_error moved_from{redis_errc::closed, "redis: the reader was moved from"};
}

expected<redis_stream_reader, redis_error> redis_stream_reader::open(redis_stream_reader_options options) {
  if (options.stream.empty() || options.group.empty() || options.consumer.empty()) {
    return unexpected(redis_error{redis_errc::rejected, "redis: stream, group and consumer must not be empty"});
  }
  auto state = std::make_unique<impl>(std::move(options));
  std::lock_guard lock(state->mutex);
  const redis_detail::sigpipe_guard no_sigpipe;
  if (auto connected = state->conn.ensure(); !connected) return unexpected(std::move(connected.error()));
  return redis_stream_reader(std::move(state));
}

expected<std::vector<redis_stream_entry>, redis_error> redis_stream_reader::read(std::size_t count,
                                                                                 std::chrono::milliseconds block) {
  if (!impl_) return unexpected(moved_from);
  if (count == 0) return std::vector<redis_stream_entry>{};
  std::lock_guard lock(impl_->mutex);
  const redis_detail::sigpipe_guard no_sigpipe;
  // Safe to repeat: entries whose delivery was lost are pending, and a new
  // connection starts with the pending ones.
  return impl_->conn.run<std::vector<redis_stream_entry>>([&] { return impl_->read_once(count, block); });
}

expected<std::size_t, redis_error> redis_stream_reader::ack(std::string_view id) {
  const std::array<std::string_view, 1> ids{id};
  if (!impl_) return unexpected(moved_from);
  std::lock_guard lock(impl_->mutex);
  const redis_detail::sigpipe_guard no_sigpipe;
  return impl_->conn.run<std::size_t>([&] { return impl_->ack_ids(ids); });
}

expected<std::size_t, redis_error> redis_stream_reader::ack(std::span<const std::string> ids) {
  if (!impl_) return unexpected(moved_from);
  if (ids.empty()) return std::size_t{0};
  const std::vector<std::string_view> views(ids.begin(), ids.end());
  std::lock_guard lock(impl_->mutex);
  const redis_detail::sigpipe_guard no_sigpipe;
  return impl_->conn.run<std::size_t>([&] { return impl_->ack_ids(views); });
}

expected<std::vector<redis_stream_entry>, redis_error> redis_stream_reader::claim_idle(
    std::chrono::milliseconds min_idle, std::size_t count) {
  if (!impl_) return unexpected(moved_from);
  if (count == 0) return std::vector<redis_stream_entry>{};
  std::lock_guard lock(impl_->mutex);
  const redis_detail::sigpipe_guard no_sigpipe;
  return impl_->conn.run<std::vector<redis_stream_entry>>([&] { return impl_->claim_once(min_idle, count); });
}

expected<std::uint64_t, redis_error> redis_stream_reader::pending_count() {
  if (!impl_) return unexpected(moved_from);
  std::lock_guard lock(impl_->mutex);
  const redis_detail::sigpipe_guard no_sigpipe;
  return impl_->conn.run<std::uint64_t>([&] { return impl_->pending_once(); });
}

const redis_stream_reader_options& redis_stream_reader::options() const noexcept { return impl_->options; }

LLMDLQ_END_NAMESPACE
