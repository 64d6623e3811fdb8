// SPDX-License-Identifier: MIT
// `llmdlq console` as its clients meet it, over real sockets: slow clients
// do not stall it, a form's fields (the access token above all) are read
// from its body only, and no link puts words of its own on a page.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <boost/json/parse.hpp>
#include <httplib.h>

#include "catch.hpp"
#include "support/eventually.hpp"
#include "tools/run_tool.hpp"

namespace console_server_test {

using llmdlq::test::run_llmdlq;
using llmdlq::test::slurp;
using llmdlq::test::start_llmdlq;
using llmdlq::test::temp_dir;
using namespace std::chrono_literals;

namespace {

const std::string form_type = "application/x-www-form-urlencoded";

// `llmdlq console` on a free loopback port over a DLQ of one dead letter,
// stopped when it goes out of scope.
class running_console {
 public:
  running_console() {
    const auto schema = dir_.write("schema.json", R"({"type": "object"})");
    const std::string db = (dir_.path() / "dlq.db").string();
    const auto processed =
        run_llmdlq("process --schema " + schema + " --sink sqlite:" + db, "{\"id\": 1, \"response\": \"nope\"}\n");
    REQUIRE(processed.exit_code == 0);
    dlq_id = std::string(boost::json::parse(processed.out).at("dlq_id").as_string());
    const auto token_file = dir_.write("token", token + "\n");
    REQUIRE(::chmod(token_file.c_str(), 0600) == 0);
    const auto out = (dir_.path() / "console.out").string();
    pid_ = start_llmdlq({"console", "sqlite:" + db, "--listen", "127.0.0.1:0", "--token-file", token_file}, "/dev/null",
                        out, (dir_.path() / "console.err").string());
    const std::regex listening("listening on http://127\\.0\\.0\\.1:(\\d+)/");
    llmdlq::test::eventually(
        [&] {
          std::smatch found;
          const auto printed = slurp(out);
          if (std::regex_search(printed, found, listening)) port = std::stoi(found[1].str());
          return port != 0;
        },
        10s);
    INFO(slurp(dir_.path() / "console.err"));
    REQUIRE(port != 0);
  }

  ~running_console() {
    ::kill(pid_, SIGTERM);
    if (llmdlq::test::eventually([&] { return ::waitpid(pid_, nullptr, WNOHANG) == pid_; }, 10s)) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }

  running_console(const running_console&) = delete;
  running_console& operator=(const running_console&) = delete;

  [[nodiscard]] httplib::Client client() const {
    httplib::Client client("127.0.0.1", port);
    client.set_read_timeout(30, 0);
    return client;
  }

  /// The Cookie header of a browser logged in as `operator_name`.
  [[nodiscard]] std::string log_in(const std::string& operator_name = "alice") const {
    auto answer = client().Post("/login", "operator=" + operator_name + "&token=" + token, form_type);
    REQUIRE(answer);
    REQUIRE(answer->status == 303);
    const auto cookie = answer->get_header_value("Set-Cookie");
    return cookie.substr(0, cookie.find(';'));
  }

  const std::string token = "0123456789abcdef0123456789abcdef";
  std::string dlq_id;
  int port = 0;

 private:
  temp_dir dir_;
  pid_t pid_ = -1;
};

// A TCP connection to the console, written and read without waiting.
class raw_connection {
 public:
  explicit raw_connection(int port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    ::inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
    REQUIRE(::connect(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0);
  }
  raw_connection(raw_connection&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  raw_connection& operator=(raw_connection&&) = delete;
  ~raw_connection() {
    if (fd_ >= 0) ::close(fd_);
  }

  bool send(std::string_view bytes) {
    return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT) == static_cast<ssize_t>(bytes.size());
  }

  /// Appends what has arrived to `answer`; false once the console closed
  /// the connection.
  bool receive(std::string& answer) {
    char buffer[4096];
    for (;;) {
      const auto n = ::recv(fd_, buffer, sizeof buffer, MSG_DONTWAIT);
      if (n > 0) {
        answer.append(buffer, static_cast<std::size_t>(n));
        continue;
      }
      return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
    }
  }

 private:
  int fd_;
};

}  // namespace

TEST_CASE("console: 32 connections trickling their headers do not keep a request from its answer, and are cut off",
          "[console][server][slow]") {
  running_console console;
  const std::string host = "Host: 127.0.0.1:" + std::to_string(console.port) + "\r\n";
  // One byte every half second, well within any wait for a next byte; the
  // last header never ends.
  const std::string trickled = "GET /login HTTP/1.1\r\n" + host + "X-Slow: ";
  std::vector<raw_connection> slow;
  std::vector<bool> open(32, true);
  for (std::size_t i = 0; i < open.size(); ++i) {
    slow.emplace_back(console.port);
    REQUIRE(slow.back().send(trickled.substr(0, 1)));
  }
  // One trickle step: the next byte on each connection still open; how many are.
  const auto trickle = [&](std::size_t step) {
    std::size_t still_open = 0;
    for (std::size_t i = 0; i < slow.size(); ++i) {
      std::string ignored;
      const std::string next = step < trickled.size() ? trickled.substr(step, 1) : "a";
      if (open[i]) open[i] = slow[i].receive(ignored) && slow[i].send(next);
      still_open += open[i];
    }
    return still_open;
  };
  // Two steps before the quick request: a connection of the burst that did
  // not last through them is not counted as trickling.
  std::size_t step = 1;
  std::size_t trickling = 0;
  for (; step <= 2; ++step) {
    trickling = trickle(step);
    std::this_thread::sleep_for(500ms);  // the trickle's pace, the behaviour under test: one byte each half second
  }
  REQUIRE(trickling >= 16);  // more than a pool of threads would hold
  // The quick one connects last: the listener accepts in the order connections arrive.
  raw_connection quick(console.port);
  REQUIRE(quick.send("GET /login HTTP/1.1\r\n" + host + "Connection: close\r\n\r\n"));

  // Counted in trickle steps: the quick answer must come while every
  // trickling connection is still open, not once the console has cut some.
  constexpr std::size_t most_steps = 90;  // far past the request deadline that cuts them
  std::string answer;
  std::optional<std::size_t> answered_at_step;
  std::size_t open_when_answered = 0;
  std::size_t still_open = trickling;
  for (; step <= most_steps; ++step) {
    const bool had_answer = answered_at_step.has_value();
    if (!had_answer) {
      quick.receive(answer);
      if (answer.find("\r\n\r\n") != std::string::npos) answered_at_step = step;
    }
    still_open = trickle(step);
    if (!had_answer && answered_at_step) open_when_answered = still_open;  // looked at after the answer came
    if (answered_at_step && still_open == 0) break;
    std::this_thread::sleep_for(500ms);
  }
  INFO(answer.substr(0, 200));
  if (!answered_at_step) FAIL("the quick request had no answer in " << most_steps << " trickle steps");
  INFO("answered at trickle step " << *answered_at_step);
  CHECK(open_when_answered == trickling);
  CHECK(answer.starts_with("HTTP/1.1 200"));
  // Each has its request's deadline, however steadily its bytes come.
  CHECK(still_open == 0);
}

TEST_CASE("console: the access token is taken from the login form's body only, never from the URL",
          "[console][server][login]") {
  running_console console;
  auto client = console.client();
  const std::vector<std::pair<std::string, std::string>> in_the_url{
      {"/login?operator=alice&token=" + console.token, ""},
      {"/login?token=" + console.token, "operator=alice"},
      {"/login?token=" + console.token, "operator=alice&token="}};
  for (const auto& [path, body] : in_the_url) {
    INFO("POST " << path << " with " << body);
    const auto answer = client.Post(path, body, form_type);
    REQUIRE(answer);
    CHECK(answer->status == 401);
    CHECK_FALSE(answer->has_header("Set-Cookie"));
  }
  const auto page = client.Get("/login?operator=alice&token=" + console.token);
  REQUIRE(page);
  CHECK(page->status == 200);
  CHECK_FALSE(page->has_header("Set-Cookie"));
  // Not a form.
  const auto plain = client.Post("/login", "operator=alice&token=" + console.token, "text/plain");
  REQUIRE(plain);
  CHECK(plain->status == 401);
  CHECK_FALSE(plain->has_header("Set-Cookie"));

  const auto logged_in = client.Post("/login", "operator=alice&token=" + console.token, form_type);
  REQUIRE(logged_in);
  CHECK(logged_in->status == 303);
  CHECK(logged_in->get_header_value("Set-Cookie").starts_with("llmdlq_session="));
}

TEST_CASE("console: an action's CSRF token and operator are read from the form's body, not the URL",
          "[console][server][login]") {
  running_console console;
  auto client = console.client();
  const auto cookie = console.log_in();
  const httplib::Headers session{{"Cookie", cookie}};
  const auto record = client.Get("/records/" + console.dlq_id, session);
  REQUIRE(record);
  std::smatch found;
  REQUIRE(std::regex_search(record->body, found, std::regex("name=\"csrf\" value=\"([0-9a-f]+)\"")));
  const std::string csrf = found[1].str();
  const std::string claim = "/records/" + console.dlq_id + "/claim";

  auto answer = client.Post(claim + "?csrf=" + csrf, session, "", form_type);
  REQUIRE(answer);
  CHECK(answer->status == 403);
  const httplib::Headers bearer{{"Authorization", "Bearer " + console.token}};
  answer = client.Post(claim + "?operator=bob", bearer, "", form_type);
  REQUIRE(answer);
  CHECK(answer->status == 400);

  answer = client.Post(claim, session, "csrf=" + csrf, form_type);
  REQUIRE(answer);
  CHECK(answer->status == 303);
}

TEST_CASE("console: a record page's notice is one of its own, whatever the link's done= or path says",
          "[console][server][notice]") {
  running_console console;
  auto client = console.client();
  const httplib::Headers cookie{{"Cookie", console.log_in()}};
  const std::string record = "/records/" + console.dlq_id;
  const auto forged =
      client.Get(record + "?done=" + httplib::detail::encode_query_param("nothing. Call +1 555 0100 now"), cookie);
  REQUIRE(forged);
  CHECK(forged->status == 200);
  CHECK(forged->body.find("555 0100") == std::string::npos);
  CHECK(forged->body.find("class=\"notice\"") == std::string::npos);

  // Nor does a record's id in the path, when there is no such record.
  const auto missing = client.Get("/records/" + httplib::detail::encode_query_param("Call +1 555 0100 now"), cookie);
  REQUIRE(missing);
  CHECK(missing->status == 404);
  CHECK(missing->body.find("555 0100") == std::string::npos);

  for (const auto& [action, notice] : std::vector<std::pair<std::string, std::string>>{
           {"claim", "Claimed"}, {"resolve", "Resolved"}, {"discard", "Discarded"}, {"requeue", "Requeued"}}) {
    const auto page = client.Get(record + "?done=" + action, cookie);
    REQUIRE(page);
    CHECK(page->body.find("<p class=\"notice\">" + notice) != std::string::npos);
  }
}

}  // namespace console_server_test
