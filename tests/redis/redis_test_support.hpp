// SPDX-License-Identifier: MIT
// What the Redis tests share: the server from LLMDLQ_TEST_REDIS (a test
// reports itself Skipped without it), a unique stream key per test, deleted
// with its dedupe keys at the end, and a plain hiredis client to look at the
// server as an operator would.
#pragma once

#include <arpa/inet.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <llmdlq/process.hpp>
#include <llmdlq/redis/stream_reader.hpp>
#include <llmdlq/redis/stream_sink.hpp>

#include "catch.hpp"
#include "support/eventually.hpp"
#include "support/skip.hpp"
#include "support/temp_dir.hpp"

namespace llmdlq::test {

/// The test server's address, or nothing when none is given.
inline std::optional<redis_connection_options> test_redis() {
  const char* address = std::getenv("LLMDLQ_TEST_REDIS");
  if (!address || !*address) return std::nullopt;
  const std::string text(address);
  const auto colon = text.rfind(':');
  REQUIRE(colon != std::string::npos);
  redis_connection_options options;
  options.host = text.substr(0, colon);
  options.port = std::atoi(text.c_str() + colon + 1);
  return options;
}

/// The test server as `name`, or the test case skipped, first thing.
#define LLMDLQ_REDIS_OR_SKIP(name)                                                                     \
  const auto name##_found = llmdlq::test::test_redis();                                                \
  if (!name##_found) LLMDLQ_SKIP("LLMDLQ_TEST_REDIS is not set (scripts/test starts a redis-server)"); \
  const llmdlq::redis_connection_options& name = *name##_found

struct reply_deleter {
  void operator()(redisReply* reply) const noexcept { freeReplyObject(reply); }
};
using reply_ptr = std::unique_ptr<redisReply, reply_deleter>;

/// A plain hiredis connection for looking at, and meddling with, the server.
class redis_client {
 public:
  explicit redis_client(const redis_connection_options& options) {
    ctx_ = redisConnectWithTimeout(options.host.c_str(), options.port, timeval{5, 0});
    REQUIRE(ctx_ != nullptr);
    INFO(ctx_->errstr);
    REQUIRE(ctx_->err == 0);
  }
  ~redis_client() { redisFree(ctx_); }
  redis_client(const redis_client&) = delete;
  redis_client& operator=(const redis_client&) = delete;

  reply_ptr command(std::initializer_list<std::string_view> args) {
    return command(std::vector<std::string_view>(args));
  }

  reply_ptr command(const std::vector<std::string_view>& args) {
    std::vector<const char*> pointers;
    std::vector<std::size_t> lengths;
    for (const auto arg : args) {
      pointers.push_back(arg.data());
      lengths.push_back(arg.size());
    }
    auto* reply = static_cast<redisReply*>(
        redisCommandArgv(ctx_, static_cast<int>(pointers.size()), pointers.data(), lengths.data()));
    INFO(ctx_->errstr);
    REQUIRE(reply != nullptr);
    return reply_ptr(reply);
  }

  long long integer(std::initializer_list<std::string_view> args) {
    auto reply = command(args);
    INFO((reply->str ? reply->str : ""));
    REQUIRE(reply->type == REDIS_REPLY_INTEGER);
    return reply->integer;
  }

  std::string string(std::initializer_list<std::string_view> args) {
    auto reply = command(args);
    REQUIRE((reply->type == REDIS_REPLY_STRING || reply->type == REDIS_REPLY_STATUS ||
             reply->type == REDIS_REPLY_NIL));
    return reply->str ? std::string(reply->str, reply->len) : std::string();
  }

  /// The value of `field` in every entry of `stream`, in order.
  std::vector<std::string> stream_field(std::string_view stream, std::string_view field) {
    auto reply = command({"XRANGE", stream, "-", "+"});
    REQUIRE(reply->type == REDIS_REPLY_ARRAY);
    std::vector<std::string> values;
    for (std::size_t i = 0; i < reply->elements; ++i) {
      const redisReply* fields = reply->element[i]->element[1];
      for (std::size_t j = 0; j + 1 < fields->elements; j += 2) {
        if (std::string_view(fields->element[j]->str, fields->element[j]->len) == field) {
          values.emplace_back(fields->element[j + 1]->str, fields->element[j + 1]->len);
        }
      }
    }
    return values;
  }

  /// Deletes every key that starts with `prefix`.
  void delete_prefix(std::string_view prefix) {
    const std::string pattern = std::string(prefix) + "*";
    std::string cursor = "0";
    do {
      auto reply = command({"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"});
      REQUIRE(reply->type == REDIS_REPLY_ARRAY);
      cursor.assign(reply->element[0]->str, reply->element[0]->len);
      const redisReply* keys = reply->element[1];
      std::vector<std::string_view> del{"DEL"};  // one command per page: each write is an fsync
      for (std::size_t i = 0; i < keys->elements; ++i) del.emplace_back(keys->element[i]->str, keys->element[i]->len);
      if (del.size() > 1) command(del);
    } while (cursor != "0");
  }

 private:
  redisContext* ctx_ = nullptr;
};

/// Whether a redis-server program is on the PATH, for a test that starts its own.
inline bool redis_server_installed() {
  const char* path = std::getenv("PATH");
  std::string_view folders = path ? path : "";
  while (!folders.empty()) {
    const auto colon = folders.find(':');
    const std::string folder(folders.substr(0, colon));
    if (!folder.empty() && ::access((folder + "/redis-server").c_str(), X_OK) == 0) return true;
    folders = colon == std::string_view::npos ? std::string_view() : folders.substr(colon + 1);
  }
  return false;
}

/// A redis-server of the test's own, on a free loopback port with its own
/// folder, started with `settings` (`--appendonly no`, ...) and stopped when
/// this goes. started() is false when it did not start (log() says why).
class scoped_redis_server {
 public:
  explicit scoped_redis_server(std::vector<std::string> settings) {
    options_.port = free_port();
    std::vector<std::string> words{"redis-server", "--port", std::to_string(options_.port), "--bind", "127.0.0.1",
                                   "--dir", dir_.path().string(), "--logfile", (dir_.path() / "redis.log").string()};
    words.insert(words.end(), settings.begin(), settings.end());
    pid_ = ::fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      std::vector<char*> argv;
      for (auto& word : words) argv.push_back(word.data());
      argv.push_back(nullptr);
      ::execvp(argv[0], argv.data());
      ::_exit(127);
    }
    // Until it answers, or ends (no redis-server, or it refused the settings).
    (void)eventually(
        [&] {
          if ((started_ = answers())) return true;
          int status = 0;
          if (::waitpid(pid_, &status, WNOHANG) != pid_) return false;
          pid_ = -1;
          return true;
        },
        std::chrono::seconds(10));
  }
  ~scoped_redis_server() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  scoped_redis_server(const scoped_redis_server&) = delete;
  scoped_redis_server& operator=(const scoped_redis_server&) = delete;

  [[nodiscard]] bool started() const noexcept { return started_; }
  [[nodiscard]] std::string log() const { return slurp(dir_.path() / "redis.log"); }
  [[nodiscard]] const redis_connection_options& options() const noexcept { return options_; }

 private:
  static int free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(fd >= 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof address;
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&address), size) == 0);
    REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) == 0);
    ::close(fd);
    return ntohs(address.sin_port);
  }

  bool answers() const {
    redisContext* probe = redisConnectWithTimeout(options_.host.c_str(), options_.port, timeval{1, 0});
    bool pong = false;
    if (probe && probe->err == 0) {
      auto* reply = static_cast<redisReply*>(redisCommand(probe, "PING"));
      pong = reply && reply->type == REDIS_REPLY_STATUS;
      if (reply) freeReplyObject(reply);
    }
    redisFree(probe);
    return pong;
  }

  temp_dir dir_;
  redis_connection_options options_;
  pid_t pid_ = -1;
  bool started_ = false;
};

/// A stream key no other test or run uses; the stream, its groups and its
/// dedupe keys are deleted when this goes.
class scoped_stream {
 public:
  scoped_stream(const redis_connection_options& server, std::string_view name) : server_(server) {
    std::random_device seed;
    key_ = "llmdlq-test:" + std::to_string(::getpid()) + ":" + std::to_string(seed()) + ":" + std::string(name);
  }
  ~scoped_stream() {
    // The server may be down when a fault test failed half-way: leave it then.
    redisContext* probe = redisConnectWithTimeout(server_.host.c_str(), server_.port, timeval{1, 0});
    const bool up = probe && probe->err == 0;
    redisFree(probe);
    if (up) redis_client(server_).delete_prefix(key_);
  }
  scoped_stream(const scoped_stream&) = delete;
  scoped_stream& operator=(const scoped_stream&) = delete;

  [[nodiscard]] const std::string& key() const noexcept { return key_; }

 private:
  redis_connection_options server_;
  std::string key_;
};

inline redis_stream_sink_options sink_options(const redis_connection_options& server, const scoped_stream& stream) {
  redis_stream_sink_options options;
  options.connection = server;
  options.stream = stream.key();
  return options;
}

inline redis_stream_reader_options reader_options(const redis_connection_options& server,
                                                  const scoped_stream& stream, std::string consumer = "replayer-1") {
  redis_stream_reader_options options;
  options.connection = server;
  options.stream = stream.key();
  options.group = "replay";
  options.consumer = std::move(consumer);
  return options;
}

/// An envelope as a worker makes it.
inline envelope sample(std::string key, std::uint32_t attempt = 1,
                       failure_category category = failure_category::syntax, std::string_view raw = "{\"total\": ") {
  request_context context;
  context.idempotency_key = std::move(key);
  context.attempt = attempt;
  process_options options;
  options.failure_code_prefix = "ocr";
  return make_envelope({.category = category, .message = "test failure"}, raw, context, options);
}

}  // namespace llmdlq::test
