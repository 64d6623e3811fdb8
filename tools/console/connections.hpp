// SPDX-License-Identifier: MIT
// How the console's HTTP server holds its connections, so that no client,
// however slow, can stall it: each connection on a thread of its own, a
// bounded number of them at once and from one client address, and deadlines
// for a request to arrive whole and for its response to be taken.
//
// cpp-httplib serves connections from a pool of max(8, cores - 1) threads,
// and its timeouts bound the wait for each byte, not for a request: eight
// clients sending a byte every few seconds hold every thread, and each
// request after them waits in the pool's queue for good.
#pragma once

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>

#include <httplib.h>

namespace llmdlq::cli {

struct connection_limits {
  std::size_t at_once = 128;          ///< connections served at once; more are refused (503)
  std::size_t per_address = 64;       ///< of those, from one client address
  std::chrono::seconds stall{5};      ///< without a byte moving, either way
  std::chrono::seconds request{10};   ///< for a whole request, head and body, from its first byte
  std::chrono::seconds response{30};  ///< for the client to take a whole response
  std::chrono::seconds idle{5};       ///< a kept-alive connection waits for its next request
  std::size_t requests_per_connection = 100;
};

namespace detail {

using clock = std::chrono::steady_clock;

// Set while the accepting thread refuses a connection it has no thread for.
inline thread_local bool refusing_connection = false;

// Each connection on a thread of its own, at most `at_once` of them; the
// accepting thread refuses any connection beyond, at once, rather than
// queue it behind the ones being served.
class connection_threads final : public httplib::TaskQueue {
 public:
  explicit connection_threads(std::size_t at_once) : at_once_(at_once) {}

  void enqueue(std::function<void()> serve) override {
    {
      const std::lock_guard lock(mutex_);
      if (running_ == at_once_) return refuse(serve);
      ++running_;
    }
    try {
      std::thread([this, serve] {
        serve();
        const std::lock_guard lock(mutex_);
        --running_;
        finished_.notify_all();
      }).detach();
    } catch (const std::system_error&) {
      {
        const std::lock_guard lock(mutex_);
        --running_;
      }
      refuse(serve);
    }
  }

  void shutdown() override {
    std::unique_lock lock(mutex_);
    finished_.wait(lock, [this] { return running_ == 0; });
  }

 private:
  static void refuse(const std::function<void()>& serve) {
    refusing_connection = true;
    serve();
    refusing_connection = false;
  }

  const std::size_t at_once_;
  std::mutex mutex_;
  std::condition_variable finished_;
  std::size_t running_ = 0;
};

// A connection's socket as cpp-httplib reads and writes it, each request
// within its deadlines: a client that sends or takes a byte now and then is
// cut off all the same.
class deadline_stream final : public httplib::Stream {
 public:
  deadline_stream(socket_t sock, const connection_limits& limits) : sock_(sock), limits_(limits) {}

  /// A request has begun to arrive: it has `limits.request` to arrive whole.
  void begin_request() {
    read_by_ = clock::now() + limits_.request;
    write_by_.reset();
  }

  [[nodiscard]] bool buffered() const noexcept { return begin_ < end_; }
  /// Whether the connection can carry no further request: a deadline was
  /// missed, or the client closed its end.
  [[nodiscard]] bool spent() const noexcept { return missed_ || ended_; }

  bool is_readable() const override { return buffered() || ready(POLLIN, read_by_); }

  bool is_writable() const override {
    if (!write_by_) write_by_ = clock::now() + limits_.response;
    return ready(POLLOUT, *write_by_);
  }

  ssize_t read(char* ptr, size_t size) override {
    if (!buffered()) {
      if (!is_readable()) return -1;
      ssize_t n;
      do n = ::recv(sock_, buffer_.data(), buffer_.size(), 0);
      while (n < 0 && errno == EINTR);
      if (n <= 0) {
        ended_ = n == 0;
        return n;
      }
      begin_ = 0;
      end_ = static_cast<std::size_t>(n);
    }
    const std::size_t n = std::min(size, end_ - begin_);
    std::memcpy(ptr, buffer_.data() + begin_, n);
    begin_ += n;
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (!is_writable()) return -1;
    ssize_t n;
    do n = ::send(sock_, ptr, size, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    return n;
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override { address_of(::getpeername, ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { address_of(::getsockname, ip, port); }
  socket_t socket() const override { return sock_; }

 private:
  // Whether the socket is ready for `events` before `deadline`, with no
  // wait longer than `limits.stall`.
  bool ready(short events, clock::time_point deadline) const {
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now());
      if (left.count() <= 0) {
        missed_ = true;
        return false;
      }
      pollfd watched{sock_, events, 0};
      const auto wait = std::min<std::chrono::milliseconds>(left, limits_.stall);
      const int waited = ::poll(&watched, 1, static_cast<int>(wait.count()));
      if (waited > 0) return true;
      if (waited == 0 || errno != EINTR) return false;
    }
  }

  template <class Lookup>
  void address_of(Lookup lookup, std::string& ip, int& port) const {
    sockaddr_storage address{};
    socklen_t length = sizeof address;
    std::array<char, NI_MAXHOST> host{};
    std::array<char, NI_MAXSERV> service{};
    ip.clear();
    port = 0;
    if (lookup(sock_, reinterpret_cast<sockaddr*>(&address), &length) != 0) return;
    if (::getnameinfo(reinterpret_cast<sockaddr*>(&address), length, host.data(), host.size(), service.data(),
                      service.size(), NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
      return;
    }
    ip = host.data();
    port = std::atoi(service.data());
  }

  socket_t sock_;
  const connection_limits& limits_;
  std::array<char, 16384> buffer_{};
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
  clock::time_point read_by_ = clock::now();
  mutable std::optional<clock::time_point> write_by_;
  mutable bool missed_ = false;
  bool ended_ = false;
};

}  // namespace detail

/// An httplib::Server that serves each connection within `limits`.
class guarded_server : public httplib::Server {
 public:
  explicit guarded_server(connection_limits limits = {}) : limits_(limits) {
    set_read_timeout(limits_.stall);
    set_write_timeout(limits_.stall);
    set_keep_alive_timeout(limits_.idle.count());
    set_keep_alive_max_count(limits_.requests_per_connection);
    new_task_queue = [at_once = limits_.at_once] { return new detail::connection_threads(at_once); };
  }

 private:
  // Called on the connection's own thread (or, to refuse it, on the
  // accepting thread) for each connection accepted.
  bool process_and_close_socket(socket_t sock) override {
    detail::deadline_stream stream(sock, limits_);
    std::string address;
    int port = 0;
    stream.get_remote_ip_and_port(address, port);
    bool served = false;
    if (!detail::refusing_connection && enter(address)) {
      served = serve(stream);
      leave(address);
    } else {
      // A short answer that cannot block the thread giving it.
      constexpr std::string_view busy =
          "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 5\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
      [[maybe_unused]] const auto sent = ::send(sock, busy.data(), busy.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    ::shutdown(sock, SHUT_RDWR);
    httplib::detail::close_socket(sock);
    return served;
  }

  // The connection's requests, one after the other, while the server runs.
  bool serve(detail::deadline_stream& stream) {
    bool served = false;
    for (std::size_t left = limits_.requests_per_connection; left > 0 && next_request_arrives(stream); --left) {
      stream.begin_request();
      bool connection_closed = false;
      served = process_request(stream, left == 1, connection_closed, nullptr);
      if (!served || connection_closed || stream.spent()) break;
    }
    return served;
  }

  // Whether a kept-alive connection's next request begins within
  // `limits.idle`, while the server still runs.
  bool next_request_arrives(const detail::deadline_stream& stream) const {
    if (stream.buffered()) return true;
    const auto until = detail::clock::now() + limits_.idle;
    while (svr_sock_ != INVALID_SOCKET && detail::clock::now() < until) {
      pollfd watched{stream.socket(), POLLIN, 0};
      const int waited = ::poll(&watched, 1, 100);
      if (waited > 0) return true;
      if (waited < 0 && errno != EINTR) return false;
    }
    return false;
  }

  bool enter(const std::string& address) {
    const std::lock_guard lock(mutex_);
    auto& count = per_address_[address];
    if (count >= limits_.per_address) return false;
    ++count;
    return true;
  }

  void leave(const std::string& address) {
    const std::lock_guard lock(mutex_);
    if (const auto found = per_address_.find(address); found != per_address_.end() && --found->second == 0) {
      per_address_.erase(found);
    }
  }

  const connection_limits limits_;
  std::mutex mutex_;
  std::map<std::string, std::size_t> per_address_;
};

}  // namespace llmdlq::cli
