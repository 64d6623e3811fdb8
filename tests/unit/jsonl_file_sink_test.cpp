// SPDX-License-Identifier: MIT
// The JSON Lines sink under faults: a second writer, a full disk, kill -9
// mid-write, torn and foreign files, and re-published envelopes.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <llmdlq/detail/identifiers.hpp>
#include <llmdlq/jsonl_file_sink.hpp>
#include <llmdlq/process.hpp>

#include "catch.hpp"
#include "support/envelope_check.hpp"
#include "support/file_mode.hpp"
#include "support/temp_dir.hpp"

namespace jsonl_file_sink_test {

namespace {

using llmdlq::jsonl_file_options;
using llmdlq::jsonl_file_sink;
using llmdlq::sink_errc;
using llmdlq::test::mode_of;
using llmdlq::test::slurp;

// An envelope whose dlq_id is a UUIDv7 made from `n` alone: the same `n`
// gives the same id, different ones never collide.
llmdlq::envelope numbered(std::uint64_t n, std::string_view raw = "not json") {
  llmdlq::request_context context;
  context.idempotency_key = "key-" + std::to_string(n);
  auto e = llmdlq::make_envelope({.category = llmdlq::failure_category::syntax, .message = "not JSON"}, raw, context);
  e.created_at = llmdlq::timestamp{std::chrono::milliseconds{1'767'225'600'000}};
  std::array<unsigned char, 16> bytes{};
  for (std::size_t i = 0; i < 6; ++i) bytes[10 + i] = static_cast<unsigned char>(n >> (8 * i));
  e.dlq_id = llmdlq::detail::format_uuid_v7(e.created_at, bytes);
  return e;
}

std::string line_of(const llmdlq::envelope& e) { return llmdlq::serialize(e) + '\n'; }

void write_file(const std::filesystem::path& path, std::string_view content) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
}

// The dlq_ids in a file, in line order; every line must be a whole envelope.
std::vector<std::string> stored_ids(const std::filesystem::path& path) {
  auto contents = llmdlq::read_jsonl_envelopes(path);
  REQUIRE(contents.has_value());
  for (const auto& skipped : contents->skipped) UNSCOPED_INFO("line " << skipped.line << " " << skipped.reason);
  CHECK(contents->skipped.empty());
  const std::string text = slurp(path);
  CHECK((text.empty() || text.back() == '\n'));
  std::vector<std::string> ids;
  for (const auto& e : contents->envelopes) ids.push_back(e.dlq_id);
  return ids;
}

std::size_t count_duplicates(const std::vector<std::string>& ids) {
  return ids.size() - std::set<std::string>(ids.begin(), ids.end()).size();
}

// A pipe from forked children to the test.
struct pipe_ends {
  int read = -1;
  int write = -1;
  pipe_ends() {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    read = fds[0];
    write = fds[1];
  }
  ~pipe_ends() {
    close_read();
    close_write();
  }
  pipe_ends(const pipe_ends&) = delete;
  pipe_ends& operator=(const pipe_ends&) = delete;
  void close_read() {
    if (read >= 0) ::close(std::exchange(read, -1));
  }
  void close_write() {
    if (write >= 0) ::close(std::exchange(write, -1));
  }
};

void send(int fd, std::string_view bytes) {
  // Up to PIPE_BUF bytes arrive whole, even if the writer is killed.
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) ::_exit(90);
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

// Appends to `into` what `fd` holds until `until`; returns false at end of file.
bool receive(int fd, std::string& into, std::chrono::steady_clock::time_point until) {
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::max<std::int64_t>(left.count(), 0)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return true;
    char buffer[4096];
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    into.append(buffer, static_cast<std::size_t>(n));
  }
}

// Waits up to 10 s for `fd` to deliver `byte`; what came after it is appended to `after`.
bool await_byte(int fd, char byte, std::string& after) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  std::string got;
  while (got.find(byte) == std::string::npos && std::chrono::steady_clock::now() < until) {
    if (!receive(fd, got, std::min(until, std::chrono::steady_clock::now() + std::chrono::milliseconds(50)))) break;
  }
  const auto at = got.find(byte);
  if (at == std::string::npos) return false;
  after += got.substr(at + 1);
  return true;
}

bool await_byte(int fd, char byte) {
  std::string ignored;
  return await_byte(fd, byte, ignored);
}

// Runs `body` in a forked child that exits with what it returns, never
// returning into the test runner; a child that hangs dies after 30 s.
template <class Body>
pid_t fork_child(Body&& body) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::alarm(30);
    int code = 99;
    try {
      code = body();
    } catch (...) {
    }
    ::_exit(code);
  }
  REQUIRE(pid > 0);
  return pid;
}

// The child's exit code, or 128 + the signal that ended it.
int wait_for(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// A file the test watches while a child writes it.
class watched_file {
 public:
  explicit watched_file(const std::filesystem::path& path) : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
    REQUIRE(fd_ >= 0);
  }
  ~watched_file() { ::close(fd_); }
  watched_file(const watched_file&) = delete;
  watched_file& operator=(const watched_file&) = delete;

  // Whether the file ends inside a line: a write is under way.
  [[nodiscard]] bool half_written() const {
    struct stat info;
    char last = '\n';
    return ::fstat(fd_, &info) == 0 && info.st_size > 0 && ::pread(fd_, &last, 1, info.st_size - 1) == 1 &&
           last != '\n';
  }

 private:
  int fd_;
};

bool says_locked(const llmdlq::sink_error& error) {
  return error.code == sink_errc::unavailable && error.message.find("locked by another writer") != std::string::npos;
}

}  // namespace

TEST_CASE("jsonl_file_sink: a second writer is refused while the first holds the file", "[jsonl]") {
  llmdlq::test::temp_dir dir;
  const auto path = dir.path() / "dlq.jsonl";
  std::optional<jsonl_file_sink> moved;
  {
    auto first = jsonl_file_sink::open(path);
    REQUIRE(first.has_value());
    REQUIRE(first->publish(numbered(1)).has_value());

    auto second = jsonl_file_sink::open(path);
    REQUIRE_FALSE(second.has_value());
    CHECK(second.error().code == sink_errc::unavailable);
    CHECK(second.error().message.find("locked by another writer") != std::string::npos);
    CHECK(second.error().message.find(path.string()) != std::string::npos);
    moved.emplace(std::move(*first));
  }
  // The lock moved with the sink: destroying the moved-from one kept it.
  auto third = jsonl_file_sink::open(path);
  REQUIRE_FALSE(third.has_value());
  CHECK(says_locked(third.error()));
  moved.reset();

  auto after = jsonl_file_sink::open(path);
  REQUIRE(after.has_value());
  auto r = after->publish(numbered(2));
  REQUIRE(r.has_value());
  CHECK(r->location == path.string() + ":2");
}

TEST_CASE("jsonl_file_sink: open cuts off the start of an envelope a crash left, and keeps a whole one",
          "[jsonl]") {
  llmdlq::test::temp_dir dir;
  const auto path = dir.path() / "dlq.jsonl";
  const auto kept = numbered(1);
  // "Grüße", a quote and a control byte: a cut can fall inside a character or an escape.
  const auto torn = numbered(2, "Gr\xC3\xBC\xC3\x9F" "e \"\x01");
  const std::string torn_text = llmdlq::serialize(torn);
  const auto after = [](std::string_view text, std::string_view part) {
    const auto at = text.find(part);
    REQUIRE(at != std::string_view::npos);
    return at + part.size();
  };

  SECTION("a half-written envelope is cut off") {
    std::size_t cut = 0;
    SECTION("in the middle") { cut = torn_text.size() / 2; }
    SECTION("inside a UTF-8 sequence") { cut = after(torn_text, "\xC3"); }
    SECTION("inside an escape sequence") { cut = after(torn_text, "\\u00"); }
    SECTION("inside a number") { cut = after(torn_text, "\"length\":1"); }
    SECTION("within its first bytes") { cut = 5; }
    SECTION("after its opening brace") { cut = 1; }
    SECTION("before its closing brace") { cut = torn_text.size() - 1; }
    write_file(path, line_of(kept) + torn_text.substr(0, cut));
    auto sink = jsonl_file_sink::open(path);
    REQUIRE(sink.has_value());
    CHECK(sink->recovered_bytes() == cut);
    CHECK(slurp(path) == line_of(kept));
    auto r = sink->publish(torn);  // the host publishes it again
    REQUIRE(r.has_value());
    CHECK_FALSE(r->duplicate);
    CHECK(r->location == path.string() + ":2");
    CHECK(stored_ids(path) == std::vector{kept.dlq_id, torn.dlq_id});
  }

  SECTION("a whole envelope without its newline is kept") {
    write_file(path, line_of(kept) + torn_text);
    auto sink = jsonl_file_sink::open(path);
    REQUIRE(sink.has_value());
    CHECK(sink->recovered_bytes() == 0);
    CHECK(slurp(path) == line_of(kept) + torn_text + "\n");
    auto again = sink->publish(torn);
    REQUIRE(again.has_value());
    CHECK(again->duplicate);
    CHECK(again->location == path.string() + ":2");
    auto next = sink->publish(numbered(3));
    REQUIRE(next.has_value());
    CHECK(next->location == path.string() + ":3");
  }
}

TEST_CASE("jsonl_file_sink: a last line that is not the start of an envelope is refused, not cut", "[jsonl]") {
  llmdlq::test::temp_dir dir;
  const auto path = dir.path() / "dlq.jsonl";
  const std::string tail = GENERATE(as<std::string>{}, "a line another program is writing",
                                    R"({"envelope_version":"1"})",                 // whole JSON, not an envelope
                                    R"({"envelope_version":"1","dlq_id":"x"])",    // not JSON
                                    R"({"envelope_version":"2","dlq_id":"x",)",    // another version
                                    R"({"envelope_version":"1","dlq_id":"x"}})",   // more than one value
                                    std::string(R"({"envelope_version":"1","dlq_id":")") + '\0');
  const std::string before = line_of(numbered(1)) + tail;
  write_file(path, before);
  auto sink = jsonl_file_sink::open(path);
  REQUIRE_FALSE(sink.has_value());
  CHECK(sink.error().code == sink_errc::rejected);
  CHECK(sink.error().message.find("line 2") != std::string::npos);
  CHECK(slurp(path) == before);
}

TEST_CASE("jsonl_file_sink: a file that is not JSON Lines of envelopes is refused and left unchanged",
          "[jsonl]") {
  llmdlq::test::temp_dir dir;
  const auto path = dir.path() / "dlq.db";
  std::string before;
  std::string line = "line 1";
  jsonl_file_options options;

  SECTION("a SQLite database (jsonl:dlq.db for sqlite:dlq.db)") {
    before = std::string("SQLite format 3\0\x10\0\x02\x02\0@  \0\0\0\x05", 24);
    std::mt19937 bytes(7);
    while (before.size() < 8192) before.push_back(static_cast<char>(bytes() & 0xFF));  // holds '\n' bytes
    REQUIRE(before.find('\n') != std::string::npos);
  }
  SECTION("a SQLite database with no newline at all") {
    before = std::string("SQLite format 3\0", 16) + std::string(4080, '\0');
  }
  SECTION("JSON Lines of something else") { before = "{\"id\": 1}\n{\"id\": 2}\n"; }
  SECTION("an envelope file with a foreign line in the middle") {
    before = line_of(numbered(1)) + "{\"id\": 2}\n" + line_of(numbered(3));
    line = "line 2";
  }
  SECTION("an envelope file with an empty line") {
    before = line_of(numbered(1)) + "\n" + line_of(numbered(3));
    line = "line 2";
  }
  SECTION("a line longer than max_line_bytes") {
    options.max_line_bytes = 1000;
    before = line_of(numbered(1, std::string(2000, 'x')));
  }
  write_file(path, before);
  auto sink = jsonl_file_sink::open(path, options);
  REQUIRE_FALSE(sink.has_value());
  CHECK(sink.error().code == sink_errc::rejected);
  CHECK(sink.error().message.find(line) != std::string::npos);
  CHECK(slurp(path) == before);
}

TEST_CASE("jsonl_file_sink: a new file is readable by its owner only, whatever the umask", "[jsonl]") {
  llmdlq::test::temp_dir dir;
  const mode_t mask = GENERATE(mode_t(0), mode_t(022), mode_t(0277));
  CAPTURE(mask);
  const auto path = dir.path() / "dlq.jsonl";
  {
    const llmdlq::test::scoped_umask umask(mask);
    auto sink = jsonl_file_sink::open(path);
    REQUIRE(sink.has_value());
    REQUIRE(sink->publish(numbered(1)).has_value());
  }
  CHECK(mode_of(path) == 0600);

  // An existing file that only its owner can write keeps the mode its owner gave it.
  REQUIRE(::chmod(path.c_str(), 0640) == 0);
  REQUIRE(jsonl_file_sink::open(path).has_value());
  CHECK(mode_of(path) == 0640);
}

TEST_CASE("jsonl_file_sink refuses a file that group or others can write, and leaves it untouched", "[jsonl]") {
  llmdlq::test::temp_dir dir;
  const mode_t mode = GENERATE(mode_t(0666), mode_t(0620), mode_t(0602));
  CAPTURE(mode);
  const auto path = dir.path() / "dlq.jsonl";
  const std::string before = line_of(numbered(1)) + R"({"envelope_version":"1","dl)";  // with a torn last line
  write_file(path, before);
  REQUIRE(::chmod(path.c_str(), mode) == 0);

  auto sink = jsonl_file_sink::open(path);
  REQUIRE_FALSE(sink.has_value());
  CHECK(sink.error().code == sink_errc::unsafe_file);
  CHECK(llmdlq::is_permanent(sink.error().code));
  const auto& message = sink.error().message;
  CHECK(message.find(path.string()) != std::string::npos);
  CHECK(message.find(fmt::format("mode {:04o}", mode)) != std::string::npos);
  CHECK(message.find("chmod 600") != std::string::npos);
  CHECK(slurp(path) == before);  // the torn line is not cut off
  CHECK(mode_of(path) == static_cast<int>(mode));
}

TEST_CASE("jsonl_file_sink refuses a symbolic link to a file, or to nothing", "[jsonl]") {
  llmdlq::test::temp_dir dir;
  const auto target = dir.path() / "elsewhere.jsonl";
  const auto link = dir.path() / "dlq.jsonl";
  const bool dangling = GENERATE(false, true);
  CAPTURE(dangling);
  const std::string stored = line_of(numbered(1));
  if (!dangling) write_file(target, stored);
  std::filesystem::create_symlink(target, link);

  auto sink = jsonl_file_sink::open(link);
  REQUIRE_FALSE(sink.has_value());
  CHECK(sink.error().code == sink_errc::unsafe_file);
  CHECK(sink.error().message.find(link.string() + " is a symbolic link") != std::string::npos);
  CHECK(std::filesystem::exists(target) != dangling);  // nothing created through the link
  if (!dangling) CHECK(slurp(target) == stored);
}

TEST_CASE("jsonl_file_sink stores each dlq_id once, across publishes, batches and re-opens", "[jsonl]") {
  llmdlq::test::temp_dir dir;
  const auto path = dir.path() / "dlq.jsonl";
  const auto at = [&](int line) { return path.string() + ":" + std::to_string(line); };
  const auto a = numbered(1), b = numbered(2), c = numbered(3), d = numbered(4), e = numbered(5);
  llmdlq::test::check_envelope(a);  // the ids made here are valid UUIDv7 text
  {
    auto sink = jsonl_file_sink::open(path);
    REQUIRE(sink.has_value());
    CHECK(sink->publish(a) == llmdlq::receipt{a.dlq_id, false, at(1)});
    CHECK(sink->publish(a) == llmdlq::receipt{a.dlq_id, true, at(1)});
    auto changed = a;  // same identity, other content: the stored record wins
    changed.failure.message = "something else";
    CHECK(sink->publish(changed) == llmdlq::receipt{a.dlq_id, true, at(1)});
    CHECK(sink->publish(b) == llmdlq::receipt{b.dlq_id, false, at(2)});

    const std::vector batch{c, a, c, d};
    auto receipts = sink->publish_batch(batch);
    REQUIRE(receipts.has_value());
    CHECK(*receipts == std::vector<llmdlq::receipt>{
                           {c.dlq_id, false, at(3)}, {a.dlq_id, true, at(1)}, {c.dlq_id, true, at(3)},
                           {d.dlq_id, false, at(4)}});
    auto all_stored = sink->publish_batch(std::vector{b, d});
    REQUIRE(all_stored.has_value());
    CHECK(*all_stored == std::vector<llmdlq::receipt>{{b.dlq_id, true, at(2)}, {d.dlq_id, true, at(4)}});
  }
  CHECK(stored_ids(path) == std::vector{a.dlq_id, b.dlq_id, c.dlq_id, d.dlq_id});
  CHECK(llmdlq::read_jsonl_envelopes(path)->envelopes.front() == a);

  // Opening the file indexes what it holds.
  auto sink = jsonl_file_sink::open(path);
  REQUIRE(sink.has_value());
  CHECK(sink->publish(d) == llmdlq::receipt{d.dlq_id, true, at(4)});
  auto receipts = sink->publish_batch(std::vector{a, e});
  REQUIRE(receipts.has_value());
  CHECK(*receipts == std::vector<llmdlq::receipt>{{a.dlq_id, true, at(1)}, {e.dlq_id, false, at(5)}});
  CHECK(stored_ids(path) == std::vector{a.dlq_id, b.dlq_id, c.dlq_id, d.dlq_id, e.dlq_id});
}

TEST_CASE("jsonl_file_sink: a file already holding an id twice answers with its first line", "[jsonl]") {
  llmdlq::test::temp_dir dir;
  const auto path = dir.path() / "dlq.jsonl";
  std::string spaced = line_of(numbered(2));  // as another tool may write it: any envelope JSON is a line
  spaced.replace(spaced.find(R"(",")"), 3, R"(", ")");
  write_file(path, line_of(numbered(1)) + spaced + line_of(numbered(1)));
  auto sink = jsonl_file_sink::open(path);
  REQUIRE(sink.has_value());
  CHECK(sink->publish(numbered(1)) == llmdlq::receipt{numbered(1).dlq_id, true, path.string() + ":1"});
  CHECK(sink->publish(numbered(3))->location == path.string() + ":4");
}

TEST_CASE("jsonl_file_sink: threads publishing the same envelopes store each once", "[jsonl]") {
  llmdlq::test::temp_dir dir;
  const auto path = dir.path() / "dlq.jsonl";
  std::vector<llmdlq::envelope> envelopes;
  for (std::uint64_t n = 0; n < 60; ++n) envelopes.push_back(numbered(n));
  auto sink = jsonl_file_sink::open(path, {.sync = false});
  REQUIRE(sink.has_value());
  // Catch2's assertions are not thread-safe: the threads only collect.
  std::vector<std::vector<llmdlq::receipt>> receipts(4);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < receipts.size(); ++t) {
    threads.emplace_back([&, t] {
      for (std::size_t i = 0; i < envelopes.size(); i += 3) {
        const std::size_t at = (i + 15 * t) % envelopes.size();  // each thread starts elsewhere
        if (t % 2 == 0) {
          for (std::size_t k = 0; k < 3; ++k) {
            if (auto r = sink->publish(envelopes[(at + k) % envelopes.size()])) receipts[t].push_back(*r);
          }
        } else {
          std::vector batch{envelopes[at], envelopes[(at + 1) % envelopes.size()],
                            envelopes[(at + 2) % envelopes.size()]};
          if (auto r = sink->publish_batch(batch)) receipts[t].insert(receipts[t].end(), r->begin(), r->end());
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();

  std::map<std::string, std::set<std::string>> locations;
  std::size_t stored = 0;
  for (const auto& per_thread : receipts) {
    CHECK(per_thread.size() == envelopes.size());
    for (const auto& r : per_thread) {
      locations[r.dlq_id].insert(r.location);
      if (!r.duplicate) ++stored;
    }
  }
  CHECK(stored == envelopes.size());
  CHECK(locations.size() == envelopes.size());
  for (const auto& [id, where] : locations) CHECK(where.size() == 1);
  const auto ids = stored_ids(path);
  CHECK(ids.size() == envelopes.size());
  CHECK(count_duplicates(ids) == 0);
}

TEST_CASE("jsonl_file_sink refuses an envelope the file could not give back, writing nothing", "[jsonl]") {
  llmdlq::test::temp_dir dir;
  const auto path = dir.path() / "dlq.jsonl";
  auto sink = jsonl_file_sink::open(path, {.max_line_bytes = 4096});
  REQUIRE(sink.has_value());
  auto no_id = numbered(1);
  no_id.dlq_id.clear();
  auto other_version = numbered(2);
  other_version.envelope_version = "2";
  const auto too_long = numbered(3, std::string(5000, 'x'));
  for (const auto& e : {no_id, other_version, too_long}) {
    auto r = sink->publish(e);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == sink_errc::rejected);
    auto batch = sink->publish_batch(std::vector{numbered(4), e});
    REQUIRE_FALSE(batch.has_value());
    CHECK(batch.error().code == sink_errc::rejected);
  }
  CHECK(slurp(path).empty());
  auto r = sink->publish(numbered(4));
  REQUIRE(r.has_value());
  CHECK(r->location == path.string() + ":1");
}

TEST_CASE("read_jsonl_envelopes names every line it skipped, and why", "[jsonl]") {
  llmdlq::test::temp_dir dir;
  const auto path = dir.path() / "dlq.jsonl";
  const auto one = numbered(1), three = numbered(3), five = numbered(5);
  const std::string torn = llmdlq::serialize(numbered(6));
  write_file(path, line_of(one) + "garbage\n" + line_of(three) + line_of(numbered(4, std::string(3000, 'x'))) +
                       llmdlq::serialize(five) + "\n" + torn.substr(0, 40));
  auto contents = llmdlq::read_jsonl_envelopes(path, 2000);
  REQUIRE(contents.has_value());
  CHECK(contents->envelopes == std::vector{one, three, five});
  REQUIRE(contents->skipped.size() == 3);
  CHECK(contents->skipped_lines == 3);
  CHECK(contents->skipped[0].line == 2);
  CHECK(contents->skipped[0].reason.find("is not an envelope: not JSON") != std::string::npos);
  CHECK(contents->skipped[1].line == 4);
  CHECK(contents->skipped[1].reason.find("longer than 2000 bytes") != std::string::npos);
  CHECK(contents->skipped[2].line == 6);
  CHECK(contents->skipped[2].reason.find("has no newline") != std::string::npos);

  // A whole last envelope without its newline is one of the envelopes, as the sink keeps it.
  write_file(path, line_of(one) + llmdlq::serialize(three));
  contents = llmdlq::read_jsonl_envelopes(path);
  REQUIRE(contents.has_value());
  CHECK(contents->envelopes == std::vector{one, three});
  CHECK(contents->skipped.empty());
}

TEST_CASE("jsonl_file_sink, two processes on one file: the second waits its turn and nothing is lost",
          "[jsonl][fault]") {
  llmdlq::test::temp_dir dir;
  const auto path = dir.path() / "dlq.jsonl";
  pipe_ends from_first, to_first, from_second, to_second;

  const pid_t first = fork_child([&] {
    auto sink = jsonl_file_sink::open(path);
    if (!sink) return 10;
    for (std::uint64_t n = 0; n < 25; ++n) {
      auto r = sink->publish(numbered(n));
      if (!r || r->duplicate) return 11;
    }
    send(from_first.write, "H");  // half written, and holding the file
    char go = 0;
    if (::read(to_first.read, &go, 1) != 1) return 12;
    for (std::uint64_t n = 25; n < 50; ++n) {
      auto r = sink->publish(numbered(n));
      if (!r || r->duplicate) return 13;
    }
    return 0;  // closing the sink releases the file
  });
  REQUIRE(await_byte(from_first.read, 'H'));

  const pid_t second = fork_child([&] {
    {
      auto refused = jsonl_file_sink::open(path);
      if (refused) return 21;
      if (!says_locked(refused.error())) return 20;
    }
    send(from_second.write, "R");
    char go = 0;  // the parent says when the first writer has exited
    if (::read(to_second.read, &go, 1) != 1) return 24;
    {
      auto sink = jsonl_file_sink::open(path);
      if (!sink) return 25;
      for (std::uint64_t n = 50; n < 100; n += 10) {
        std::vector<llmdlq::envelope> batch;
        for (std::uint64_t k = n; k < n + 10; ++k) batch.push_back(numbered(k));
        auto receipts = sink->publish_batch(batch);
        if (!receipts) return 22;
        for (std::size_t k = 0; k < batch.size(); ++k) {
          if ((*receipts)[k].duplicate || (*receipts)[k].location != path.string() + ":" + std::to_string(n + k + 1)) {
            return 23;
          }
        }
      }
      return 0;
    }
  });
  REQUIRE(await_byte(from_second.read, 'R'));
  auto third = jsonl_file_sink::open(path);  // this process is a writer too
  REQUIRE_FALSE(third.has_value());
  CHECK(says_locked(third.error()));

  send(to_first.write, "G");
  CHECK(wait_for(first) == 0);
  send(to_second.write, "G");
  CHECK(wait_for(second) == 0);

  std::vector<std::string> expected;
  for (std::uint64_t n = 0; n < 100; ++n) expected.push_back(numbered(n).dlq_id);
  CHECK(stored_ids(path) == expected);
}

TEST_CASE("jsonl_file_sink on a full disk: what was acknowledged is stored, what failed is not", "[jsonl][fault]") {
  llmdlq::test::temp_dir dir;
  const auto path = dir.path() / "dlq.jsonl";
  // Envelopes of one size, so that the file limit falls in the middle of the 11th line.
  const auto envelope_of = [](std::uint64_t n) { return numbered(100 + n); };
  const std::size_t line_bytes = line_of(envelope_of(0)).size();
  REQUIRE(line_of(envelope_of(99)).size() == line_bytes);
  pipe_ends results;

  // Each envelope tried is reported as "A<id>" (acknowledged), "F<id>" (failed
  // with EFBIG, as a full disk fails) or "X<id>" (anything else).
  const pid_t child = fork_child([&] {
    ::signal(SIGXFSZ, SIG_IGN);
    auto sink = jsonl_file_sink::open(path);
    if (!sink) return 10;
    const rlimit limit{10 * line_bytes + line_bytes / 2, 10 * line_bytes + line_bytes / 2};
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) return 11;
    const auto report = [&](const llmdlq::sink_error* error, const llmdlq::envelope& e) {
      char status = 'A';
      if (error) {
        const bool full = error->code == sink_errc::io_error &&
                          error->message.find(std::strerror(EFBIG)) != std::string::npos;
        status = full ? 'F' : 'X';
      }
      send(results.write, status + e.dlq_id + "\n");
    };
    std::uint64_t n = 0;
    for (int round = 0; round < 6; ++round) {
      for (int single = 0; single < 3; ++single, ++n) {
        const auto e = envelope_of(n);
        auto r = sink->publish(e);
        report(r ? nullptr : &r.error(), e);
      }
      std::vector<llmdlq::envelope> batch;
      for (int k = 0; k < 3; ++k, ++n) batch.push_back(envelope_of(n));
      auto receipts = sink->publish_batch(batch);
      for (const auto& e : batch) {
        report(receipts ? nullptr : &receipts.error(), e);
      }
    }
    return 0;
  });
  results.close_write();
  std::string reports;
  while (receive(results.read, reports, std::chrono::steady_clock::now() + std::chrono::seconds(10))) {
  }
  REQUIRE(wait_for(child) == 0);

  std::set<std::string> acknowledged, failed;
  std::size_t other = 0;
  for (std::size_t at = 0; at + 38 <= reports.size(); at += 38) {
    const std::string id = reports.substr(at + 1, 36);
    switch (reports[at]) {
      case 'A': acknowledged.insert(id); break;
      case 'F': failed.insert(id); break;
      default: ++other;
    }
  }
  CHECK(reports.size() == 36 * 38);
  CHECK(other == 0);
  // Ten lines fit; a failed write is cut back, so later ones still fill the room left.
  CHECK(acknowledged.size() == 10);
  CHECK(failed.size() == 26);

  const auto ids = stored_ids(path);
  CHECK(std::set<std::string>(ids.begin(), ids.end()) == acknowledged);
  CHECK(ids.size() == acknowledged.size());
  CHECK(slurp(path).size() == 10 * line_bytes);

  // With room again, the file opens untouched and takes the failed envelopes.
  auto sink = jsonl_file_sink::open(path);
  REQUIRE(sink.has_value());
  CHECK(sink->recovered_bytes() == 0);
  std::size_t stored_now = 0, duplicates = 0;
  for (std::uint64_t n = 0; n < 36; ++n) {
    auto r = sink->publish(envelope_of(n));
    REQUIRE(r.has_value());
    (r->duplicate ? duplicates : stored_now) += 1;
    CHECK(r->duplicate == acknowledged.contains(r->dlq_id));
  }
  CHECK(duplicates == 10);
  CHECK(stored_now == 26);
  CHECK(count_duplicates(stored_ids(path)) == 0);
}

TEST_CASE("jsonl_file_sink killed mid-write again and again: every acknowledged envelope is stored once",
          "[jsonl][fault]") {
  llmdlq::test::temp_dir dir;
  const auto path = dir.path() / "dlq.jsonl";
  constexpr std::size_t batch_size = 8;
  const std::string raw(2048, 'r');  // a batch is one write of several pages
  std::mt19937 random(20261201);
  std::set<std::string> acknowledged;
  // Each kind of round four times, however slow the machine.
  constexpr std::size_t rounds = 12;
  std::size_t torn_tails = 0, republished = 0, killed_inside_a_line = 0;
  std::uint64_t last_acknowledged = 0;

  for (std::size_t round = 0; round < rounds; ++round) {
    // Round kinds, in turn: SIGKILL at a random moment with fdatasync (most
    // land inside it), the same without it (faster writes; the kill waits
    // for a write seen half done), and death inside a line: a file size
    // limit stops a write part way and its SIGXFSZ ends the process, as
    // abruptly as SIGKILL but at a byte chosen here.
    const int kind = static_cast<int>(round % 3);
    const bool sync = kind == 0;
    const auto limit = static_cast<rlim_t>(std::uniform_int_distribution<int>(1, 60'000)(random));
    const std::uint64_t first = (round + 1) * 1'000'000;
    const bool republishes = last_acknowledged != 0;
    pipe_ends reports;
    const pid_t child = fork_child([&] {
      reports.close_read();
      auto sink = jsonl_file_sink::open(path, {.sync = sync});
      if (!sink) return 10;
      if (republishes) {  // a retry of something stored before a crash is recognised
        auto r = sink->publish(numbered(last_acknowledged, raw));
        if (!r || !r->duplicate) return 11;
      }
      if (kind == 2) {
        struct stat info;
        const rlimit no_core{0, 0};
        if (::stat(path.c_str(), &info) != 0 || ::setrlimit(RLIMIT_CORE, &no_core) != 0) return 15;
        const rlimit file_size{info.st_size + limit, info.st_size + limit};
        if (::setrlimit(RLIMIT_FSIZE, &file_size) != 0) return 16;
      }
      send(reports.write, "O");
      for (std::uint64_t n = first;; n += batch_size) {
        std::vector<llmdlq::envelope> batch;
        for (std::uint64_t k = n; k < n + batch_size; ++k) batch.push_back(numbered(k, raw));
        std::string acknowledged_ids;
        if (n % 3 == 0) {
          auto receipts = sink->publish_batch(batch);
          if (!receipts) return 12;
          for (const auto& r : *receipts) {
            if (r.duplicate) return 13;
            acknowledged_ids += r.dlq_id + "\n";
          }
        } else {
          for (const auto& e : batch) {
            auto r = sink->publish(e);
            if (!r || r->duplicate) return 14;
            send(reports.write, r->dlq_id + "\n");
          }
        }
        send(reports.write, acknowledged_ids);  // one write of at most PIPE_BUF bytes arrives whole
      }
    });
    reports.close_write();
    std::string received;
    REQUIRE(await_byte(reports.read, 'O', received));
    if (republishes) ++republished;
    if (kind == 2) {
      while (receive(reports.read, received, std::chrono::steady_clock::now() + std::chrono::seconds(5))) {
      }
      REQUIRE(wait_for(child) == 128 + SIGXFSZ);
    } else {
      const auto kill_at =
          std::chrono::steady_clock::now() +
          std::chrono::microseconds(std::uniform_int_distribution<int>(300, sync ? 8'000 : 2'000)(random));
      const watched_file file(path);
      while (std::chrono::steady_clock::now() < kill_at && (sync || !file.half_written())) {
        receive(reports.read, received, std::chrono::steady_clock::now());  // the child must not block on a full pipe
      }
      REQUIRE(::kill(child, SIGKILL) == 0);
      REQUIRE(wait_for(child) == 128 + SIGKILL);
      while (receive(reports.read, received, std::chrono::steady_clock::now() + std::chrono::seconds(5))) {
      }
    }
    REQUIRE(received.size() % 37 == 0);
    for (std::size_t at = 0; at < received.size(); at += 37) {
      CHECK(acknowledged.insert(received.substr(at, 36)).second);
    }
    if (!received.empty()) last_acknowledged = first + received.size() / 37 - 1;
    if (watched_file(path).half_written()) ++killed_inside_a_line;

    // The next writer finds the file whole, or with the start of one line to cut.
    auto sink = jsonl_file_sink::open(path);
    REQUIRE(sink.has_value());
    if (sink->recovered_bytes() > 0) ++torn_tails;
  }

  const auto ids = stored_ids(path);
  const std::set<std::string> stored(ids.begin(), ids.end());
  std::size_t missing = 0;
  for (const auto& id : acknowledged) missing += stored.contains(id) ? 0 : 1;
  INFO("rounds " << rounds << ", acknowledged " << acknowledged.size() << ", stored " << ids.size()
                 << ", died inside a line " << killed_inside_a_line << ", torn tails cut " << torn_tails
                 << ", re-publishes recognised " << republished);
  CHECK(missing == 0);
  CHECK(count_duplicates(ids) == 0);
  CHECK(torn_tails <= killed_inside_a_line);  // a whole envelope missing only its newline is kept
  CHECK(torn_tails >= rounds / 3 / 2);        // nearly every size limit falls inside a line
  // Only the publish a kill interrupted may be stored without an acknowledgement.
  CHECK(ids.size() - acknowledged.size() <= rounds * batch_size);
  CHECK(acknowledged.size() > rounds);
  CHECK(republished > 0);  // a retry after a crash was tried
}

}  // namespace jsonl_file_sink_test
