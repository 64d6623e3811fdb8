// SPDX-License-Identifier: MIT
#include "llmdlq/stores/open.hpp"

#include <unistd.h>

#include <cerrno>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "llmdlq/detail/bounded_read.hpp"
#include "llmdlq/detail/private_file.hpp"
#include "llmdlq/jsonl_replay_target.hpp"
#ifdef LLMDLQ_STORES_WITH_SQLITE
#include "llmdlq/sqlite/store.hpp"
#endif
#ifdef LLMDLQ_STORES_WITH_POSTGRES
#include "llmdlq/postgres/store.hpp"
#endif
#ifdef LLMDLQ_STORES_WITH_KAFKA
#include "llmdlq/kafka/topic_store.hpp"
#endif

LLMDLQ_BEGIN_NAMESPACE

namespace {

unexpected<open_error> failure(open_errc code, std::string message) {
  return unexpected(open_error{code, std::move(message)});
}

// The kind's library is not part of this build.
[[maybe_unused]] unexpected<open_error> not_built(const store_spec& spec) {
  return failure(open_errc::not_built, fmt::format("{} names a {} store, and this llmdlq was built without llmdlq::{}",
                                                   display_name(spec), to_string(spec.kind), to_string(spec.kind)));
}

// A transport's failure to open: one that will refuse again, or one that may not.
template <class Code>
[[maybe_unused]] unexpected<open_error> transport_failure(Code code, std::string message) {
  return failure(is_permanent(code) ? open_errc::refused : open_errc::unavailable, std::move(message));
}

expected<std::unique_ptr<moderation_store>, open_error> open_sqlite(const store_spec& spec, bool read_only) {
#ifdef LLMDLQ_STORES_WITH_SQLITE
  const std::filesystem::path path(spec.location);
  std::error_code ec;
  if (read_only && !std::filesystem::exists(path, ec)) {
    return failure(open_errc::not_found, "no DLQ at " + spec.location);
  }
  sqlite_store_options options;
  options.read_only = read_only;
  if (!spec.table.empty()) options.table = spec.table;
  auto store = sqlite_store::open(path, std::move(options));
  if (!store) return transport_failure(store.error().code, std::move(store.error().message));
  return std::unique_ptr<moderation_store>(std::make_unique<sqlite_store>(std::move(*store)));
#else
  (void)read_only;
  return not_built(spec);
#endif
}

expected<std::unique_ptr<moderation_store>, open_error> open_postgres(const store_spec& spec, bool read_only) {
#ifdef LLMDLQ_STORES_WITH_POSTGRES
  postgres_store_options options;
  options.migrate = !read_only;
  if (!spec.table.empty()) options.table = spec.table;
  options.schema = spec.schema;
  auto store = postgres_store::open(spec.location, std::move(options));
  if (!store) return transport_failure(store.error().code, std::move(store.error().message));
  return std::unique_ptr<moderation_store>(std::make_unique<postgres_store>(std::move(*store)));
#else
  (void)read_only;
  return not_built(spec);
#endif
}

expected<std::unique_ptr<moderation_store>, open_error> open_topic(const store_spec& spec, bool read_only) {
#ifdef LLMDLQ_STORES_WITH_KAFKA
  if (!read_only) {
    return failure(open_errc::read_only,
                   fmt::format("{} is a Kafka topic, which is read only: open it read-only", display_name(spec)));
  }
  kafka_topic_options options;
  options.properties = {{"bootstrap.servers", spec.location}};
  options.topic = spec.topic;
  auto topic = kafka_topic_store::open(std::move(options));
  if (!topic) return transport_failure(topic.error().code, std::move(topic.error().message));
  return std::unique_ptr<moderation_store>(std::move(*topic));
#else
  (void)read_only;
  return not_built(spec);
#endif
}

// Whether `target` is on the allowlist in `allowlist_file`.
expected<void, open_error> check_allowlist(std::string_view target, const std::filesystem::path& allowlist_file) {
  // Whoever could write the allowlist could send payloads anywhere: it is
  // judged as the stores are, on the descriptor that is then read.
  std::string refusal;
  const int fd = detail::open_private_file_to_read(allowlist_file, refusal, "an allowlist", "its entries");
  if (fd < 0) {
    if (!refusal.empty()) return failure(open_errc::allowlist_refused, "the allowlist is refused: " + refusal);
    return failure(open_errc::allowlist_refused,
                   detail::make_read_error(detail::read_errc::cannot_open, detail::file_kind::allowlist,
                                           allowlist_file.string(), detail::limit_of(detail::file_kind::allowlist),
                                           errno)
                       .message);
  }
  auto text = detail::read_bounded(fd, detail::file_kind::allowlist, allowlist_file.string());
  ::close(fd);
  if (!text) return failure(open_errc::allowlist_refused, std::move(text.error().message));
  std::string_view rest = *text;
  while (!rest.empty()) {
    const auto end = rest.find('\n');
    std::string_view line = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    if (const auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string_view::npos) continue;
    const auto last = line.find_last_not_of(" \t\r");
    const std::string_view entry = line.substr(first, last - first + 1);
    if (entry == target) return {};
    if (entry.size() > 1 && entry.back() == '*' && target.starts_with(entry.substr(0, entry.size() - 1))) return {};
  }
  return failure(open_errc::not_allowed, fmt::format("{} is not on the allowlist {}", target, allowlist_file.string()));
}

// The file a `jsonl:` target names, as the allowlist sees it: absolute, with
// `.`, `..` and symbolic links resolved.
expected<std::filesystem::path, open_error> resolve_target_file(const std::string& path) {
  std::error_code ec;
  const auto absolute = std::filesystem::absolute(std::filesystem::path(path), ec);
  if (ec) return failure(open_errc::unavailable, fmt::format("cannot resolve {}: {}", path, ec.message()));
  auto resolved = std::filesystem::weakly_canonical(absolute, ec);
  if (ec) return failure(open_errc::unavailable, fmt::format("cannot resolve {}: {}", path, ec.message()));
  return resolved;
}

unexpected<open_error> no_target(const store_spec& spec) {
  return failure(open_errc::not_a_target, fmt::format("{} is not a replay target: give {}", display_name(spec),
                                                      store_forms(replay_target_kinds)));
}

}  // namespace

expected<std::unique_ptr<moderation_store>, open_error> open_store(const store_spec& spec, store_open_options options) {
  switch (spec.kind) {
    case store_kind::sqlite: return open_sqlite(spec, options.read_only);
    case store_kind::postgres: return open_postgres(spec, options.read_only);
    case store_kind::kafka: return open_topic(spec, options.read_only);
    case store_kind::jsonl:
    case store_kind::redis: break;
  }
  return failure(open_errc::not_a_store, display_name(spec) + " is not a moderation store");
}

expected<std::unique_ptr<moderation_store>, open_error> open_store(std::string_view text, store_open_options options) {
  auto spec = parse_store_spec(text, moderation_store_kinds);
  if (!spec) return failure(open_errc::bad_spec, std::move(spec.error().message));
  return open_store(*spec, options);
}

expected<store_spec, open_error> allowed_target(const store_spec& spec, const std::filesystem::path& allowlist) {
  if (spec.kind != store_kind::jsonl) return no_target(spec);
  auto path = resolve_target_file(spec.location);
  if (!path) return unexpected(std::move(path.error()));
  if (auto allowed = check_allowlist("jsonl:" + path->string(), allowlist); !allowed) {
    return unexpected(std::move(allowed.error()));
  }
  store_spec matched = spec;
  matched.location = path->string();
  return matched;
}

expected<std::unique_ptr<replay_target>, open_error> open_target(const store_spec& spec, target_open_options options) {
  if (spec.kind != store_kind::jsonl) return no_target(spec);
  std::filesystem::path path = spec.location;
  if (!options.allowlist.empty()) {
    auto allowed = allowed_target(spec, options.allowlist);
    if (!allowed) return unexpected(std::move(allowed.error()));
    path = allowed->location;
  }
  auto target = jsonl_replay_target::open(path);
  if (!target) {
    const bool refused = target.error().code == replay_errc::target_refused;
    return failure(refused ? open_errc::refused : open_errc::unavailable, std::move(target.error().message));
  }
  return std::unique_ptr<replay_target>(std::make_unique<jsonl_replay_target>(std::move(*target)));
}

LLMDLQ_END_NAMESPACE
