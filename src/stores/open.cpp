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
#include "llmdlq/postgres/replay_target.hpp"
#include "llmdlq/postgres/store.hpp"
#endif
#ifdef LLMDLQ_STORES_WITH_KAFKA
#include "llmdlq/kafka/replay_target.hpp"
#include "llmdlq/kafka/topic_store.hpp"
#endif
#ifdef LLMDLQ_STORES_WITH_REDIS
#include "llmdlq/redis/stream_target.hpp"
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

// The target as the allowlist matches it: the spec's text, with its parts
// as the spec read them (a `jsonl:` file as it was resolved).
std::string target_text(const store_spec& spec) {
  switch (spec.kind) {
    case store_kind::jsonl: return "jsonl:" + spec.location;
    case store_kind::postgres: {
      std::string text = "postgres:" + spec.location;
      if (!spec.table.empty()) text += "#" + (spec.schema.empty() ? spec.table : spec.schema + "." + spec.table);
      return text;
    }
    case store_kind::kafka:
    case store_kind::redis:
    case store_kind::sqlite: break;
  }
  return display_name(spec);
}

// The target for a person: a `jsonl:` file and a topic or a stream as
// their specs read, a PostgreSQL target without its connection string
// (which may hold a password).
std::string target_name(const store_spec& spec) {
  return spec.kind == store_kind::postgres ? display_name(spec) : target_text(spec);
}

// Whether the allowlist's `entry` allows `spec`. A `jsonl:` entry is a file,
// or a prefix of files ending in `*`. A Kafka or Redis entry names its
// cluster (brokers; host and port) exactly, and its topic (stream) exactly
// or by a prefix ending in `*`, so that no spelling of a spec reaches
// another cluster. A PostgreSQL entry names its target exactly: in a
// connection string a later keyword overrides an earlier one, so no
// prefix of one can be trusted.
bool allows(std::string_view entry, const store_spec& spec) {
  const bool prefix = entry.size() > 1 && entry.back() == '*';
  const std::string_view stem = prefix ? entry.substr(0, entry.size() - 1) : entry;
  switch (spec.kind) {
    case store_kind::jsonl: {
      const std::string text = target_text(spec);
      return prefix ? std::string_view(text).starts_with(stem) : text == stem;
    }
    case store_kind::postgres: return !prefix && entry == target_text(spec);
    case store_kind::kafka:
    case store_kind::redis: {
      // The entry read as a spec of the kind; a prefix's topic gets a letter to be one, then loses it.
      auto allowed = parse_store_spec(prefix ? std::string(stem) + "x" : std::string(stem), store_kinds{spec.kind});
      if (!allowed) return false;
      if (prefix) allowed->topic.pop_back();
      if (allowed->location != spec.location || allowed->port != spec.port) return false;
      return prefix ? spec.topic.starts_with(allowed->topic) : spec.topic == allowed->topic;
    }
    case store_kind::sqlite: break;
  }
  return false;
}

// Whether `target` is on the allowlist in `allowlist_file`.
expected<void, open_error> check_allowlist(const store_spec& spec, const std::filesystem::path& allowlist_file) {
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
    // A comment starts the line or follows a blank: the `#` of `postgres:...#table` names a table.
    for (std::size_t hash = line.find('#'); hash != std::string_view::npos; hash = line.find('#', hash + 1)) {
      if (hash == 0 || line[hash - 1] == ' ' || line[hash - 1] == '\t') {
        line = line.substr(0, hash);
        break;
      }
    }
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string_view::npos) continue;
    const auto last = line.find_last_not_of(" \t\r");
    if (allows(line.substr(first, last - first + 1), spec)) return {};
  }
  return failure(open_errc::not_allowed,
                 fmt::format("{} is not on the allowlist {}", target_name(spec), allowlist_file.string()));
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

// A target's failure to open: one that will fail again, or one that may not.
unexpected<open_error> target_open_failure(replay_error&& e) {
  return failure(is_permanent(e.code) ? open_errc::refused : open_errc::unavailable, std::move(e.message));
}

template <class Target>
expected<std::unique_ptr<replay_target>, open_error> opened(expected<Target, replay_error>&& target) {
  if (!target) return target_open_failure(std::move(target.error()));
  return std::unique_ptr<replay_target>(std::make_unique<Target>(std::move(*target)));
}

expected<std::unique_ptr<replay_target>, open_error> open_target_as_named(const store_spec& spec) {
  switch (spec.kind) {
    case store_kind::jsonl: return opened(jsonl_replay_target::open(spec.location));
    case store_kind::kafka: {
#ifdef LLMDLQ_STORES_WITH_KAFKA
      kafka_target_options options;
      options.properties = {{"bootstrap.servers", spec.location}};
      options.topic = spec.topic;
      return opened(kafka_replay_target::open(std::move(options)));
#else
      return not_built(spec);
#endif
    }
    case store_kind::postgres: {
#ifdef LLMDLQ_STORES_WITH_POSTGRES
      postgres_target_options options;
      if (!spec.table.empty()) options.table = spec.table;
      options.schema = spec.schema;
      return opened(postgres_replay_target::open(spec.location, std::move(options)));
#else
      return not_built(spec);
#endif
    }
    case store_kind::redis: {
#ifdef LLMDLQ_STORES_WITH_REDIS
      redis_stream_target_options options;
      options.connection.host = spec.location;
      options.connection.port = spec.port;
      options.stream = spec.topic;
      return opened(redis_stream_target::open(std::move(options)));
#else
      return not_built(spec);
#endif
    }
    case store_kind::sqlite: break;
  }
  return no_target(spec);
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
  if (!replay_target_kinds.contains(spec.kind)) return no_target(spec);
  store_spec matched = spec;
  if (spec.kind == store_kind::jsonl) {
    auto path = resolve_target_file(spec.location);
    if (!path) return unexpected(std::move(path.error()));
    matched.location = path->string();
  }
  if (auto allowed = check_allowlist(matched, allowlist); !allowed) {
    return unexpected(std::move(allowed.error()));
  }
  return matched;
}

expected<std::unique_ptr<replay_target>, open_error> open_target(const store_spec& spec, target_open_options options) {
  if (!replay_target_kinds.contains(spec.kind)) return no_target(spec);
  if (options.allowlist.empty()) return open_target_as_named(spec);
  // Opened as the allowlist matched it: a `jsonl:` file resolved.
  auto allowed = allowed_target(spec, options.allowlist);
  if (!allowed) return unexpected(std::move(allowed.error()));
  return open_target_as_named(*allowed);
}

LLMDLQ_END_NAMESPACE
