// SPDX-License-Identifier: MIT
// The hiredis connection shared by the Redis sink and reader.
#include "connection.hpp"

#include <pthread.h>

#include <array>
#include <cerrno>
#include <ctime>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "llmdlq/config.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace redis_detail {

namespace {

timeval to_timeval(std::chrono::milliseconds duration) noexcept {
  const auto ms = duration.count() > 0 ? duration.count() : 1;
  timeval tv{};
  tv.tv_sec = static_cast<decltype(tv.tv_sec)>(ms / 1000);
  tv.tv_usec = static_cast<decltype(tv.tv_usec)>((ms % 1000) * 1000);
  return tv;
}

// hiredis wants parallel arrays of pointers and lengths.
struct argv_arrays {
  std::vector<const char*> pointers;
  std::vector<std::size_t> lengths;
  explicit argv_arrays(arguments args) {
    pointers.reserve(args.size());
    lengths.reserve(args.size());
    for (const std::string_view arg : args) {
      pointers.push_back(arg.data() ? arg.data() : "");
      lengths.push_back(arg.size());
    }
  }
  [[nodiscard]] int argc() const noexcept { return static_cast<int>(pointers.size()); }
};

}  // namespace

bool is_error(const redisReply& reply, std::string_view code) noexcept {
  if (reply.type != REDIS_REPLY_ERROR) return false;
  const std::string_view message = text(reply);
  return message.starts_with(code) && (message.size() == code.size() || message[code.size()] == ' ');
}

redis_error reply_error(const redisReply& reply, std::string_view what) {
  static constexpr std::array<std::string_view, 6> busy_codes = {"LOADING", "READONLY", "MASTERDOWN",
                                                                 "BUSY",    "TRYAGAIN", "CLUSTERDOWN"};
  redis_errc code = redis_errc::rejected;
  for (const std::string_view busy : busy_codes) {
    if (is_error(reply, busy)) code = redis_errc::unavailable;
  }
  return {code, fmt::format("redis: {}: {}", what, text(reply))};
}

sigpipe_guard::sigpipe_guard() noexcept {
  sigset_t block;
  sigemptyset(&block);
  sigaddset(&block, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &block, &previous_);
  sigset_t pending;
  sigemptyset(&pending);
  sigpending(&pending);
  was_pending_ = sigismember(&pending, SIGPIPE) == 1;
}

sigpipe_guard::~sigpipe_guard() {
  // A SIGPIPE that was pending before belongs to someone else: leave it.
  if (!was_pending_) {
    sigset_t pending;
    sigemptyset(&pending);
    sigpending(&pending);
    if (sigismember(&pending, SIGPIPE) == 1) {
      sigset_t only;
      sigemptyset(&only);
      sigaddset(&only, SIGPIPE);
      const timespec no_wait{};
      while (sigtimedwait(&only, nullptr, &no_wait) < 0 && errno == EINTR) {
      }
    }
  }
  pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
}

expected<void, redis_error> connection::ensure() {
  if (ctx_) return {};
  const std::string where = fmt::format("{}:{}", options_.host, options_.port);
  ctx_ = redisConnectWithTimeout(options_.host.c_str(), options_.port, to_timeval(options_.connect_timeout));
  if (!ctx_) return unexpected(redis_error{redis_errc::unavailable, "redis: connect " + where + ": out of memory"});
  if (ctx_->err) {
    redis_error error{redis_errc::unavailable, fmt::format("redis: connect {}: {}", where, ctx_->errstr)};
    drop();
    return unexpected(std::move(error));
  }
  redisSetTimeout(ctx_, to_timeval(options_.command_timeout));
  redisEnableKeepAlive(ctx_);

  const auto expect_ok = [this](arguments args, std::string_view what) -> expected<void, redis_error> {
    auto reply = command(args);
    if (!reply) return unexpected(std::move(reply.error()));
    if ((*reply)->type == REDIS_REPLY_ERROR) {
      redis_error error = reply_error(**reply, what);
      drop();
      return unexpected(std::move(error));
    }
    return {};
  };
  if (!options_.password.empty()) {
    std::vector<std::string_view> args{"AUTH"};
    if (!options_.username.empty()) args.push_back(options_.username);
    args.push_back(options_.password);
    if (auto ok = expect_ok(args, "AUTH"); !ok) return ok;
  }
  if (options_.db != 0) {
    const std::string db = std::to_string(options_.db);
    const std::array<std::string_view, 2> args{"SELECT", db};
    if (auto ok = expect_ok(args, "SELECT " + db); !ok) return ok;
  }
  if (on_connect) {
    auto ready = on_connect(*this);
    if (!ready) {
      drop();
      return ready;
    }
  }
  return {};
}

redis_error connection::io_failure(std::string_view what, int saved_errno) {
  redis_error error{redis_errc::unavailable, "redis: " + std::string(what) + ": connection lost"};
  if (ctx_) {
    const bool timed_out = ctx_->err == REDIS_ERR_IO &&
                           (saved_errno == EAGAIN || saved_errno == EWOULDBLOCK || saved_errno == ETIMEDOUT);
    error.code = timed_out                         ? redis_errc::timeout
                 : ctx_->err == REDIS_ERR_PROTOCOL ? redis_errc::protocol_error
                 : ctx_->err == REDIS_ERR_OOM      ? redis_errc::protocol_error
                                                   : redis_errc::unavailable;
    error.message = timed_out ? fmt::format("redis: {}: no reply within the timeout ({})", what, ctx_->errstr)
                              : fmt::format("redis: {}: {}", what, ctx_->errstr);
  }
  drop();  // a context that failed once is unusable: the next call connects again
  return error;
}

expected<reply_ptr, redis_error> connection::command(arguments args) {
  if (!ctx_) return unexpected(redis_error{redis_errc::unavailable, "redis: not connected"});
  argv_arrays argv(args);
  errno = 0;
  void* reply = redisCommandArgv(ctx_, argv.argc(), argv.pointers.data(), argv.lengths.data());
  const int saved_errno = errno;
  if (!reply) return unexpected(io_failure(args.empty() ? "command" : args.front(), saved_errno));
  return reply_ptr(static_cast<redisReply*>(reply));
}

expected<void, redis_error> connection::append(arguments args) {
  if (!ctx_) return unexpected(redis_error{redis_errc::unavailable, "redis: not connected"});
  argv_arrays argv(args);
  errno = 0;
  if (redisAppendCommandArgv(ctx_, argv.argc(), argv.pointers.data(), argv.lengths.data()) != REDIS_OK) {
    return unexpected(io_failure("pipeline", errno));
  }
  return {};
}

expected<reply_ptr, redis_error> connection::get_reply() {
  if (!ctx_) return unexpected(redis_error{redis_errc::unavailable, "redis: not connected"});
  void* reply = nullptr;
  errno = 0;
  if (redisGetReply(ctx_, &reply) != REDIS_OK || !reply) return unexpected(io_failure("pipeline", errno));
  return reply_ptr(static_cast<redisReply*>(reply));
}

void connection::set_timeout(std::chrono::milliseconds timeout) noexcept {
  if (ctx_) redisSetTimeout(ctx_, to_timeval(timeout));
}

void connection::drop() noexcept {
  if (ctx_) redisFree(ctx_);
  ctx_ = nullptr;
}

expected<redis_persistence, redis_error> read_persistence(connection& c) {
  redis_persistence found;
  const std::array<std::string_view, 2> info{"INFO", "persistence"};
  auto reply = c.command(info);
  if (!reply) return unexpected(std::move(reply.error()));
  if ((*reply)->type == REDIS_REPLY_STRING) {
    constexpr std::string_view field = "\naof_enabled:";
    std::string lines(1, '\n');  // so that the first line matches "\n" + name too
    lines += text(**reply);
    if (const auto at = lines.find(field); at != std::string::npos && at + field.size() < lines.size()) {
      found.append_only = lines[at + field.size()] == '1';
    }
  }
  const std::array<std::string_view, 3> config{"CONFIG", "GET", "appendfsync"};
  reply = c.command(config);
  if (!reply) return unexpected(std::move(reply.error()));
  const redisReply& r = **reply;
  if (r.type == REDIS_REPLY_ARRAY && r.elements == 2 && r.element[1]->type == REDIS_REPLY_STRING) {
    found.appendfsync = std::string(text(*r.element[1]));
  }
  return found;
}

std::optional<std::string> missing_persistence(const redis_persistence& p) {
  if (!p.append_only)
    return "it does not say whether it keeps an append-only file (INFO persistence has no aof_enabled)";
  if (!*p.append_only) {
    return "it keeps no append-only file (appendonly no), so a crash loses every entry since its last snapshot";
  }
  if (p.appendfsync == "no") {
    return "it does not sync its append-only file (appendfsync no): entries reach the disk when the operating system "
           "decides";
  }
  return std::nullopt;
}

expected<void, redis_error> check_persistence(connection& c, redis_persistence& found, bool required,
                                              std::string_view what, std::string_view option) {
  auto read = read_persistence(c);
  if (!read) return unexpected(std::move(read.error()));
  found = std::move(*read);
  const auto missing = missing_persistence(found);
  if (!missing || !required) return {};
  return unexpected(redis_error{
      redis_errc::rejected,
      fmt::format("redis: {}:{} would lose {} it acknowledged: {}; configure appendonly yes with appendfsync always "
                  "(or everysec), or set {} = false to accept that",
                  c.options().host, c.options().port, what, *missing, option)});
}

}  // namespace redis_detail
LLMDLQ_END_NAMESPACE
