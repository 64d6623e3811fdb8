// SPDX-License-Identifier: MIT
// One blocking hiredis connection, shared by the Redis sink and reader:
// connect with timeouts, AUTH and SELECT, commands and pipelines, and every
// failure as a redis_error. Internal to llmdlq::redis.
#pragma once

#include <hiredis/hiredis.h>
#include <signal.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "llmdlq/config.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/redis/connection_options.hpp"
#include "llmdlq/redis/error.hpp"
#include "llmdlq/redis/persistence.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace redis_detail {

struct reply_deleter {
  void operator()(redisReply* reply) const noexcept { freeReplyObject(reply); }
};
using reply_ptr = std::unique_ptr<redisReply, reply_deleter>;

/// The text of a string, status or error reply.
[[nodiscard]] inline std::string_view text(const redisReply& reply) noexcept {
  return reply.str ? std::string_view(reply.str, reply.len) : std::string_view();
}

/// Whether an error reply starts with the error code `code` (NOSCRIPT, BUSYGROUP, ...).
[[nodiscard]] bool is_error(const redisReply& reply, std::string_view code) noexcept;

/// An error reply as a redis_error: a server that cannot serve now (LOADING,
/// READONLY, MASTERDOWN, BUSY, TRYAGAIN, CLUSTERDOWN) is unavailable; any
/// other refusal (OOM, WRONGTYPE, NOPERM, ...) is rejected.
[[nodiscard]] redis_error reply_error(const redisReply& reply, std::string_view what);

/// Blocks SIGPIPE in this thread while it lives, and swallows a SIGPIPE that
/// writing to a closed socket raised meanwhile: hiredis writes with write(2),
/// and the default action of SIGPIPE would end the host process.
class sigpipe_guard {
 public:
  sigpipe_guard() noexcept;
  ~sigpipe_guard();
  sigpipe_guard(const sigpipe_guard&) = delete;
  sigpipe_guard& operator=(const sigpipe_guard&) = delete;

 private:
  sigset_t previous_{};
  bool was_pending_ = false;
};

/// A command's arguments; binary-safe.
using arguments = std::span<const std::string_view>;

class connection {
 public:
  explicit connection(redis_connection_options options) : options_(std::move(options)) {}
  ~connection() { drop(); }
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  /// Runs after every successful connect (AUTH and SELECT are done by then),
  /// e.g. to load a script or create a consumer group.
  std::function<expected<void, redis_error>(connection&)> on_connect;

  /// Runs `work` on a live connection, connecting first when there is none.
  /// When `work` fails with redis_errc::unavailable on a connection kept from
  /// an earlier call (the server restarted or closed it meanwhile), it
  /// connects again and runs `work` once more: `work` must be safe to repeat.
  template <class T, class F>
  expected<T, redis_error> run(F&& work) {
    const bool fresh = ctx_ == nullptr;
    if (auto connected = ensure(); !connected) return unexpected(std::move(connected.error()));
    auto result = work();
    if (result || fresh || result.error().code != redis_errc::unavailable || ctx_ != nullptr) return result;
    if (auto connected = ensure(); !connected) return unexpected(std::move(connected.error()));
    return work();
  }

  /// Connects when there is no connection.
  expected<void, redis_error> ensure();
  /// One command and its reply. A server error reply is returned as a reply
  /// (check its type); a connection failure drops the connection.
  expected<reply_ptr, redis_error> command(arguments args);
  /// Queues a command for a pipeline; get_reply() returns the replies in order.
  expected<void, redis_error> append(arguments args);
  expected<reply_ptr, redis_error> get_reply();
  /// Sets the socket's read and write timeout (until the next connect).
  void set_timeout(std::chrono::milliseconds timeout) noexcept;
  /// Closes the connection; the next ensure() connects again.
  void drop() noexcept;

  [[nodiscard]] bool connected() const noexcept { return ctx_ != nullptr; }
  [[nodiscard]] const redis_connection_options& options() const noexcept { return options_; }

 private:
  // The context's I/O failure as a redis_error, after which it is dropped.
  redis_error io_failure(std::string_view what, int saved_errno);

  redis_connection_options options_;
  redisContext* ctx_ = nullptr;
};

/// The server's word on its persistence (`INFO persistence`, `CONFIG GET
/// appendfsync`). A command the server refuses (CONFIG renamed away or
/// forbidden by an ACL, INFO likewise) leaves its part unknown.
[[nodiscard]] expected<redis_persistence, redis_error> read_persistence(connection& c);

/// What keeps a server with `p` from persisting what it acknowledges, if
/// anything: no append-only file, or one it does not sync.
[[nodiscard]] std::optional<std::string> missing_persistence(const redis_persistence& p);

/// Reads the server's persistence into `found`; when `required`, refuses
/// (rejected) a server that would lose what it acknowledged, saying that it
/// would lose `what` ("dead letters") and which `option` accepts that.
[[nodiscard]] expected<void, redis_error> check_persistence(connection& c, redis_persistence& found, bool required,
                                                            std::string_view what, std::string_view option);

}  // namespace redis_detail
LLMDLQ_END_NAMESPACE
