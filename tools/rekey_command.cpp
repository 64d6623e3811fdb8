// SPDX-License-Identifier: MIT
// `llmdlq rekey`: re-seals a DLQ's sealed originals with another key, so
// that an old key can be retired (or shredded) without losing them.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <llmdlq/crypto/file_key_provider.hpp>
#include <llmdlq/detail/counted.hpp>
#include <llmdlq/crypto/sodium_field_cipher.hpp>
#include <llmdlq/envelope.hpp>
#include <llmdlq/sqlite/store.hpp>
#ifdef LLMDLQ_TOOL_WITH_POSTGRES
#  include <llmdlq/postgres/store.hpp>
#endif

#include "cli.hpp"
#include "commands.hpp"
#include "options.hpp"
#include "store_spec.hpp"

namespace llmdlq::cli {
namespace {

constexpr option options[] = {
    {"--keys", option_kind::value, "DIR", "the key directory; required"},
    {"--to", option_kind::value, "NEW_ID", "the key to seal with; required"},
    {"--from", option_kind::value, "OLD_ID", "only the texts sealed with this key"},
    {"--dry-run", option_kind::flag, "", "open the texts but write nothing"},
    {"--batch", option_kind::value, "N", "rows per transaction (default 256)"},
};
constexpr operand operands[] = {{"STORE", "give a STORE, --keys DIR and --to NEW_ID"}};

constexpr store_kinds rekeyable = {store_spec::store_kind::sqlite, store_spec::store_kind::postgres,
                                   store_spec::store_kind::jsonl};

const command_syntax syntax{
    .command = "rekey",
    .operands = operands,
    .groups = {group("", options)},
    .about = "  Opens every sealed original whose key is not NEW_ID (with --from: only OLD_ID's) and seals it\n"
             "  again with NEW_ID, a record at a time. SQLite and PostgreSQL rows are rewritten N (256) per\n"
             "  transaction; a JSON Lines file is rewritten into a new file that replaces it by a rename, under\n"
             "  the lock its sink takes, so that a crash leaves the old file or the new one. A text that does\n"
             "  not open is reported on stderr and left as it is.\n",
    .stores = store_forms(rekeyable),
    .closing = "Exit 0 when every text was re-sealed or its key is shredded, 1 when some did not open for\n"
               "another reason (unknown key, forged, malformed), 2 for usage errors, 3 when the store fails.\n",
};

struct rekey_plan {
  std::string to;
  std::optional<std::string> from;
  bool dry_run = false;
};

struct rekey_tally {
  std::size_t texts = 0;     // re-sealed (or, dry, that would be)
  std::size_t records = 0;   // holding one of them
  std::size_t shredded = 0;  // left: their key is shredded
  std::size_t failed = 0;    // left: any other reason
};

class rekeyer {
 public:
  rekeyer(const sodium_field_cipher& cipher, rekey_plan plan) : cipher_(cipher), plan_(std::move(plan)) {}

  // The envelope with its sealed texts re-sealed, or nothing when none changes.
  std::optional<std::string> operator()(std::string_view dlq_id, std::string_view json) {
    auto e = parse_envelope(json);
    if (!e) {
      complain("rekey", fmt::format("{}: not an envelope ({} at {})", dlq_id, e.error().message, e.error().path));
      ++tally.failed;
      return std::nullopt;
    }
    bool changed = false;
    for (const auto& [field, text] : {std::pair{sealed_raw_response, &e->raw_response},
                                      std::pair{sealed_original_input, e->original_input ? &*e->original_input : nullptr}}) {
      if (!text || !text->sealed || text->sealed->key_id == plan_.to) continue;
      if (plan_.from && text->sealed->key_id != *plan_.from) continue;
      std::optional<cipher_error> error;
      if (plan_.dry_run) {
        if (auto opened = cipher_.open(e->dlq_id, field, *text->sealed); !opened) error = opened.error();
      } else if (auto resealed = cipher_.reseal(e->dlq_id, field, *text->sealed, plan_.to); resealed) {
        text->sealed = std::move(*resealed);
      } else {
        error = resealed.error();
      }
      if (error) {
        complain("rekey", fmt::format("{} {}: {}", e->dlq_id, field, describe(*error)));
        ++(error->code == cipher_failure::key_shredded ? tally.shredded : tally.failed);
        continue;
      }
      ++tally.texts;
      changed = true;
    }
    if (changed) ++tally.records;
    if (!changed || plan_.dry_run) return std::nullopt;
    return serialize(*e);
  }

  rekey_tally tally;

 private:
  const sodium_field_cipher& cipher_;
  rekey_plan plan_;
};

// A file descriptor closed on scope exit.
struct owned_fd {
  int fd = -1;
  ~owned_fd() {
    if (fd >= 0) ::close(fd);
  }
};

// Rewrites a JSON Lines DLQ into PATH.rekey and renames it over PATH, while
// holding the exclusive lock jsonl_file_sink takes: a crash at any moment
// leaves PATH old or new, never a mix.
int rekey_jsonl(const std::filesystem::path& path, rekeyer& change, bool dry_run) {
  owned_fd file{::open(path.c_str(), O_RDWR | O_CLOEXEC)};
  if (file.fd < 0) {
    complain("rekey", fmt::format("{}: {}", path.string(), std::strerror(errno)));
    return exit_usage;
  }
  if (::flock(file.fd, LOCK_EX | LOCK_NB) != 0) {
    complain("rekey", fmt::format("{} is locked by a writer: stop it first", path.string()));
    return exit_sink;
  }
  auto content = read_bounded(file.fd, file_kind::json_lines, path.string());  // the file locked, not its path
  if (!content) {
    complain("rekey", content.error().message);
    return exit_sink;
  }
  std::string rewritten;
  rewritten.reserve(content->size());
  bool changed = false;
  std::string_view rest = *content;
  for (std::size_t number = 1; !rest.empty(); ++number) {
    const std::size_t end = rest.find('\n');
    const std::string_view line = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    auto replaced = line.empty() ? std::nullopt : change(fmt::format("line {}", number), line);
    rewritten.append(replaced ? std::string_view(*replaced) : line);
    if (end != std::string_view::npos) rewritten.push_back('\n');
    changed = changed || replaced;
  }
  if (dry_run || !changed) return exit_ok;
  struct stat status {};
  ::fstat(file.fd, &status);
  const std::filesystem::path temporary = path.string() + ".rekey";
  ::unlink(temporary.c_str());  // a crashed run's
  owned_fd out{::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, status.st_mode & 0777)};
  bool ok = out.fd >= 0 && ::fchmod(out.fd, status.st_mode & 0777) == 0;
  for (std::size_t done = 0; ok && done < rewritten.size();) {
    const ssize_t n = ::write(out.fd, rewritten.data() + done, rewritten.size() - done);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) done += static_cast<std::size_t>(n);
  }
  ok = ok && ::fsync(out.fd) == 0 && ::rename(temporary.c_str(), path.c_str()) == 0;
  if (!ok) {
    complain("rekey", fmt::format("{}: {}", temporary.string(), std::strerror(errno)));
    ::unlink(temporary.c_str());
    return exit_sink;
  }
  const std::filesystem::path folder = path.has_parent_path() ? path.parent_path() : ".";
  owned_fd directory{::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  if (directory.fd < 0 || ::fsync(directory.fd) != 0) {
    complain("rekey", fmt::format("{}: {}", folder.string(), std::strerror(errno)));
    return exit_sink;
  }
  return exit_ok;
}

template <class Store>
int rekey_store(Store& store, rekeyer& change, std::size_t batch) {
  auto changed = store.rewrite_envelopes(std::ref(change), batch);
  if (!changed) {
    complain("rekey", changed.error().message);
    return exit_sink;
  }
  return exit_ok;
}

// Re-seals the texts of the store `spec` names; the exit code.
int rekey_named_store(const store_spec& spec, rekeyer& change, const rekey_plan& plan, std::size_t batch) {
  if (spec.kind == store_spec::store_kind::jsonl) return rekey_jsonl(spec.location, change, plan.dry_run);
  if (spec.kind == store_spec::store_kind::sqlite) {
    if (!std::filesystem::exists(spec.location)) {
      complain("rekey", "no DLQ at " + spec.location);
      return exit_usage;
    }
    sqlite_store_options options;
    if (!spec.table.empty()) options.table = spec.table;
    auto opened = sqlite_store::open(spec.location, std::move(options));
    if (!opened) {
      complain("rekey", opened.error().message);
      return exit_sink;
    }
    return rekey_store(*opened, change, batch);
  }
#ifdef LLMDLQ_TOOL_WITH_POSTGRES
  postgres_store_options options;
  options.migrate = false;
  if (!spec.table.empty()) options.table = spec.table;
  options.schema = spec.schema;
  auto opened = postgres_store::open(spec.location, std::move(options));
  if (!opened) {
    complain("rekey", opened.error().message);
    return exit_sink;
  }
  return rekey_store(*opened, change, batch);
#else
  complain("rekey", "this llmdlq was built without PostgreSQL");
  return exit_usage;
#endif
}

}  // namespace

int rekey_command(arguments args) {
  const auto parsed = parse_arguments(syntax, args);
  if (!parsed) return parsed.error();
  const std::string keys(parsed->value("--keys").value_or(""));
  rekey_plan plan;
  plan.to = std::string(parsed->value("--to").value_or(""));
  if (const auto from = parsed->value("--from")) plan.from = std::string(*from);
  plan.dry_run = parsed->has("--dry-run");
  std::size_t batch = 256;
  if (const auto value = parsed->value("--batch")) {
    const auto n = parse_byte_count(*value);
    if (!n) return usage_error(syntax, "--batch wants a positive number");
    batch = *n;
  }
  if (keys.empty() || plan.to.empty()) return usage_error(syntax, "give a STORE, --keys DIR and --to NEW_ID");
  const auto spec = parse_store_spec(parsed->operand(0), rekeyable);
  if (!spec) return usage_error(syntax, spec.error());
  auto provider = std::make_shared<file_key_provider>(keys);
  if (auto key = provider->key(plan.to); !key) {
    complain("rekey", fmt::format("--to: {}", describe(key.error())));
    return exit_usage;
  }
  const sodium_field_cipher cipher(provider);
  rekeyer change(cipher, plan);
  const int code = rekey_named_store(*spec, change, plan, batch);
  if (code != exit_ok) return code;
  const auto& t = change.tally;
  std::cout << fmt::format("{} {} in {} to key {}; left {} (key shredded: {}, other: {})\n",
                           plan.dry_run ? "would re-seal" : "re-sealed", detail::counted(t.texts, "sealed text"),
                           detail::counted(t.records, "record"), plan.to,
                           t.shredded + t.failed, t.shredded, t.failed);
  return t.failed > 0 ? exit_invalid : exit_ok;
}

}  // namespace llmdlq::cli
