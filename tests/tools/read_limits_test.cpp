// SPDX-License-Identifier: MIT
// Every file `llmdlq` reads whole is read up to the limit of its kind, and
// no further: /dev/zero, a FIFO that never ends and a sparse file one byte
// over the limit are each refused, naming the file and the limit, by a run
// whose address space is capped well below what reading them whole would
// take.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <llmdlq/sqlite/store.hpp>

#include "catch.hpp"
#include "support/replay_letters.hpp"
#include "support/temp_dir.hpp"
#include "tools/run_tool.hpp"

namespace read_limits_test {

using llmdlq::test::run_llmdlq_reading;
using llmdlq::test::temp_dir;

namespace {

// A run may map 1 GiB: reading /dev/zero without a bound fails at once
// (std::bad_alloc), not after filling the machine's memory. Under
// AddressSanitizer, which maps terabytes of shadow memory, runs are not capped.
#if defined(__SANITIZE_ADDRESS__)
const std::string capped;
#else
const std::string capped = "/usr/bin/prlimit --as=1073741824";
#endif

constexpr std::size_t mib = std::size_t{1} << 20;

// Where the bytes come from: /dev/zero, a FIFO a writer fills without end,
// or a sparse file one byte over `limit`.
enum class source { zeros, fifo, sparse };

std::string source_name(source s) {
  return s == source::zeros ? "/dev/zero" : s == source::fifo ? "a FIFO" : "a sparse file";
}

// A file of `s` at `path` (for zeros, a link to /dev/zero where a directory
// must hold it), and a writer that feeds a FIFO until its reader leaves.
class endless_file {
 public:
  endless_file(source s, const std::filesystem::path& path, std::size_t limit, bool as_path = false)
      : path_(s == source::zeros && !as_path ? std::filesystem::path("/dev/zero") : path) {
    if (s == source::zeros && as_path) std::filesystem::create_symlink("/dev/zero", path);
    if (s == source::sparse) {
      const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
      REQUIRE(fd >= 0);
      REQUIRE(::ftruncate(fd, static_cast<off_t>(limit + 1)) == 0);
      ::close(fd);
    }
    if (s == source::fifo) {
      REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
      writer_ = ::fork();
      REQUIRE(writer_ >= 0);
      if (writer_ == 0) {
        ::signal(SIGPIPE, SIG_DFL);
        const int fd = ::open(path.c_str(), O_WRONLY);
        static const char zeros[1 << 16] = {};
        while (fd >= 0 && ::write(fd, zeros, sizeof zeros) > 0) {
        }
        ::_exit(0);
      }
    }
  }
  ~endless_file() {
    if (writer_ > 0) {
      ::kill(writer_, SIGKILL);
      ::waitpid(writer_, nullptr, 0);
    }
  }
  endless_file(const endless_file&) = delete;
  endless_file& operator=(const endless_file&) = delete;

  [[nodiscard]] std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
  pid_t writer_ = -1;
};

// A scratch folder with what the commands need besides the file under test.
struct workspace {
  temp_dir dir;
  std::string schema = dir.write("schema.json", R"({"type": "object"})");
  std::string document = dir.write("doc.json", R"({"total": 1})");
  std::string db = (dir.path() / "dlq.db").string();
  workspace() {
    auto store = llmdlq::sqlite_store::open(db);
    REQUIRE(store.has_value());
    for (const auto& letter : llmdlq::test::cut_off_letters(1)) REQUIRE(store->publish(letter).has_value());
  }
};

void check_refused(const llmdlq::test::tool_run& run, int exit_code, const std::string& message) {
  INFO(run.err);
  CHECK(run.exit_code == exit_code);
  CHECK(run.err.find(message) != std::string::npos);
}

bool tool_has(const std::string& command) {
  return run_llmdlq_reading(command + " --help", "/dev/null").exit_code == 0;
}

}  // namespace

TEST_CASE("every command reads a schema up to 64 MiB, and names the file and the limit when it holds more",
          "[tools][limits]") {
  const auto from = GENERATE(source::zeros, source::fifo, source::sparse);
  workspace w;
  std::vector<std::string> commands = {"process --sink none --schema {}", "validate --schema {} " + w.document,
                                       "replay sqlite:" + w.db + " --schema {}",
                                       "resolve sqlite:" + w.db + " some-id --schema {} --corrected " + w.document};
  if (tool_has("console")) commands.push_back("console sqlite:" + w.db + " --listen 127.0.0.1:0 --schema {}");
  for (const auto& command : commands) {
    const endless_file file(from, w.dir.path() / "big.json", 64 * mib);
    const std::string line = fmt::format(fmt::runtime(command), file.path());
    INFO(source_name(from) << ": llmdlq " << line);
    check_refused(run_llmdlq_reading(line, "/dev/null", capped), 2,
                  "the schema " + file.path() + " is larger than the limit of 64 MiB");
    std::filesystem::remove(w.dir.path() / "big.json");
  }
}

TEST_CASE("the schemas a schema refers to are read up to 64 MiB, from --remote and --catalog",
          "[tools][validate][limits]") {
  const auto from = GENERATE(source::zeros, source::sparse);
  workspace w;
  std::filesystem::create_directory(w.dir.path() / "defs");
  const endless_file file(from, w.dir.path() / "defs" / "big.json", 64 * mib, true);
  const auto remote = w.dir.write("remote.json", R"({"$ref": "http://localhost:1234/big.json"})");
  const auto local = w.dir.write("local.json", R"({"$ref": "big.json"})");
  const std::string limit = "(the schema " + file.path() + " is larger than the limit of 64 MiB)";
  INFO(source_name(from));
  check_refused(run_llmdlq_reading("validate --schema " + remote + " --remote http://localhost:1234/=" +
                                       (w.dir.path() / "defs").string() + " " + w.document,
                                   "/dev/null", capped),
                2, limit);
  if (from == source::sparse) {  // a catalogue reads only regular files
    check_refused(run_llmdlq_reading("validate --schema " + local + " --catalog " + (w.dir.path() / "defs").string() +
                                         " " + w.document,
                                     "/dev/null", capped),
                  2, limit);
  }
}

TEST_CASE("documents are read up to 16 MiB, from a file or standard input", "[tools][limits]") {
  const auto from = GENERATE(source::zeros, source::fifo, source::sparse);
  workspace w;
  INFO(source_name(from));
  const std::vector<std::string> commands = {"validate --schema " + w.schema + " {}", "repair {}",
                                             "resolve sqlite:" + w.db + " some-id --schema " + w.schema +
                                                 " --corrected {}"};
  for (const auto& command : commands) {
    {
      const endless_file file(from, w.dir.path() / "big.json", 16 * mib);
      const std::string line = fmt::format(fmt::runtime(command), file.path());
      INFO("llmdlq " << line);
      check_refused(run_llmdlq_reading(line, "/dev/null", capped), 2,
                    "the document " + file.path() + " is larger than the limit of 16 MiB");
    }
    std::filesystem::remove(w.dir.path() / "big.json");
    {
      // The same document on standard input.
      const endless_file file(from, w.dir.path() / "big.json", 16 * mib);
      const std::string line = fmt::format(fmt::runtime(command), command.starts_with("validate") ? "" : "-");
      INFO("llmdlq " << line << " < " << file.path());
      check_refused(run_llmdlq_reading(line, file.path(), capped), 2,
                    "the document on standard input is larger than the limit of 16 MiB");
    }
    std::filesystem::remove(w.dir.path() / "big.json");
  }
}

TEST_CASE("key files are read up to 4 KiB: the redaction key, a sealing key, the console's token",
          "[tools][limits]") {
  workspace w;
  const endless_file redaction_key(source::sparse, w.dir.path() / "redaction.key", 4096);
  check_refused(run_llmdlq_reading("process --sink none --schema " + w.schema + " --redaction-key " +
                                       redaction_key.path(),
                                   "/dev/null", capped),
                2, "the key file " + redaction_key.path() + " is larger than the limit of 4 KiB");

  const auto keys = w.dir.path() / "keys";
  REQUIRE(run_llmdlq_reading("keys generate k0 --keys " + keys.string(), "/dev/null").exit_code == 0);
  const endless_file key(source::sparse, keys / "k1.key", 4096);
  check_refused(run_llmdlq_reading("keys use k1 --keys " + keys.string(), "/dev/null", capped), 1,
                "the key file " + key.path() + " is larger than the limit of 4 KiB");

  if (tool_has("console")) {
    const endless_file token(source::sparse, w.dir.path() / "token", 4096);
    check_refused(run_llmdlq_reading("console sqlite:" + w.db + " --listen 127.0.0.1:0 --token-file " + token.path(),
                                     "/dev/null", capped),
                  2, "the key file " + token.path() + " is larger than the limit of 4 KiB");
  }
}

TEST_CASE("an allowlist is read up to 1 MiB, a JSON Lines file read whole up to 1 GiB", "[tools][limits]") {
  workspace w;
  const auto root = std::filesystem::canonical(w.dir.path());
  const endless_file allowlist(source::sparse, root / "targets.allow", mib);
  const auto target = (root / "out.jsonl").string();
  check_refused(run_llmdlq_reading("deliver sqlite:" + w.db + " --to jsonl:" + target + " --allowlist " +
                                       allowlist.path(),
                                   "/dev/null", capped),
                2, "the allowlist " + allowlist.path() + " is larger than the limit of 1 MiB");
  CHECK_FALSE(std::filesystem::exists(target));

  // A replay target's earlier lines, read for the keys already delivered.
  const auto allowed = w.dir.write("ok.allow", "jsonl:" + target + "\n");
  const endless_file earlier(source::sparse, target, std::size_t{1} << 30);
  check_refused(run_llmdlq_reading("deliver sqlite:" + w.db + " --to jsonl:" + target + " --allowlist " + allowed,
                                   "/dev/null", capped),
                2, "the JSON Lines file " + target + " is larger than the limit of 1 GiB");

  // A JSON Lines DLQ, re-sealed whole.
  const auto keys = w.dir.path() / "keys";
  REQUIRE(run_llmdlq_reading("keys generate k0 --keys " + keys.string(), "/dev/null").exit_code == 0);
  const endless_file dlq(source::sparse, root / "dlq.jsonl", std::size_t{1} << 30);
  check_refused(run_llmdlq_reading("rekey jsonl:" + dlq.path() + " --keys " + keys.string() + " --to k0",
                                   "/dev/null", capped),
                3, "the JSON Lines file " + dlq.path() + " is larger than the limit of 1 GiB");
}

}  // namespace read_limits_test
