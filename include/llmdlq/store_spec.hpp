// SPDX-License-Identifier: MIT
// Stores and targets named as text, in one grammar for every command and
// host: `sqlite:PATH[#TABLE]`, `postgres:CONNINFO[#[SCHEMA.]TABLE]`,
// `kafka:BROKERS/TOPIC`, `jsonl:PATH` and `redis:HOST:PORT/STREAM`. Reading
// one needs no transport; opening what it names is llmdlq::stores'
// (llmdlq/stores/open.hpp), which links the transports that were built.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/error_category.hpp"
#include "llmdlq/expected.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// What a spec names, by its prefix.
enum class store_kind : std::uint8_t {
  sqlite,    ///< `sqlite:PATH[#TABLE]`: a SQLite file (llmdlq::sqlite)
  postgres,  ///< `postgres:CONNINFO[#[SCHEMA.]TABLE]`: a PostgreSQL database (llmdlq::postgres)
  kafka,     ///< `kafka:BROKERS/TOPIC`: a Kafka topic (llmdlq::kafka)
  jsonl,     ///< `jsonl:PATH`: a JSON Lines file (the core)
  redis,     ///< `redis:HOST:PORT/STREAM`: a Redis stream (llmdlq::redis)
};

/// The kind's prefix without its colon: "sqlite", "postgres", "kafka", "jsonl", "redis".
[[nodiscard]] constexpr std::string_view to_string(store_kind kind) noexcept {
  switch (kind) {
    case store_kind::sqlite: return "sqlite";
    case store_kind::postgres: return "postgres";
    case store_kind::kafka: return "kafka";
    case store_kind::jsonl: return "jsonl";
    case store_kind::redis: return "redis";
  }
  return "unknown";
}

/// The kind's form, for a person: "sqlite:PATH[#TABLE]", "kafka:BROKERS/TOPIC", ...
[[nodiscard]] constexpr std::string_view store_form(store_kind kind) noexcept {
  switch (kind) {
    case store_kind::sqlite: return "sqlite:PATH[#TABLE]";
    case store_kind::postgres: return "postgres:CONNINFO[#[SCHEMA.]TABLE]";
    case store_kind::kafka: return "kafka:BROKERS/TOPIC";
    case store_kind::jsonl: return "jsonl:PATH";
    case store_kind::redis: return "redis:HOST:PORT/STREAM";
  }
  return "unknown";
}

/// A set of kinds: those a command or a host takes.
class store_kinds {
 public:
  constexpr store_kinds() noexcept = default;
  constexpr store_kinds(std::initializer_list<store_kind> kinds) noexcept {
    for (const store_kind kind : kinds) bits_ = static_cast<std::uint8_t>(bits_ | bit(kind));
  }
  [[nodiscard]] constexpr bool contains(store_kind kind) const noexcept { return (bits_ & bit(kind)) != 0; }
  [[nodiscard]] constexpr bool empty() const noexcept { return bits_ == 0; }
  friend constexpr bool operator==(store_kinds, store_kinds) noexcept = default;

 private:
  static constexpr std::uint8_t bit(store_kind kind) noexcept {
    return static_cast<std::uint8_t>(1U << static_cast<unsigned>(kind));
  }
  std::uint8_t bits_ = 0;
};

/// Every kind.
inline constexpr store_kinds every_store_kind = {store_kind::sqlite, store_kind::postgres, store_kind::kafka,
                                                 store_kind::jsonl, store_kind::redis};
/// The kinds that hold a moderation queue (open_store() opens them; a Kafka topic read only).
inline constexpr store_kinds moderation_store_kinds = {store_kind::sqlite, store_kind::postgres, store_kind::kafka};
/// The kinds a replay delivers to (open_target() opens them).
inline constexpr store_kinds replay_target_kinds = {store_kind::jsonl, store_kind::kafka, store_kind::postgres,
                                                    store_kind::redis};

/// A store or target named as text.
struct store_spec {
  using store_kind = ::llmdlq::store_kind;  ///< so that `store_spec::store_kind::sqlite` reads too
  store_kind kind = store_kind::sqlite;
  /// The SQLite or JSON Lines file, the libpq connection string (or URI),
  /// the Kafka brokers, or the Redis host.
  std::string location;
  std::string topic;   ///< the Kafka topic or the Redis stream
  int port = 0;        ///< Redis only
  std::string table;   ///< SQLite and PostgreSQL; empty: the store's default table
  std::string schema;  ///< PostgreSQL only; empty: the search_path's first
};

/// Why a text is no spec.
enum class store_spec_errc : std::uint8_t {
  unknown_kind,       ///< it starts with none of the forms' prefixes
  kind_not_accepted,  ///< its prefix is a form the caller does not take here
  malformed,          ///< what follows the prefix is not the form (`kafka:` without a topic, `redis:` without a port)
  no_location,        ///< the form names nothing (`sqlite:` alone)
};

LLMDLQ_END_NAMESPACE
template <>
struct std::is_error_code_enum<llmdlq::store_spec_errc> : std::true_type {};
LLMDLQ_BEGIN_NAMESPACE

namespace detail {
template <>
struct errc_table<store_spec_errc> {
  static constexpr const char* category = "llmdlq.store_spec";
  static constexpr std::string_view unknown = "unknown";
  static constexpr errc_entry<store_spec_errc> entries[] = {
      {store_spec_errc::unknown_kind, "unknown_kind"},
      {store_spec_errc::kind_not_accepted, "kind_not_accepted"},
      {store_spec_errc::malformed, "malformed"},
      {store_spec_errc::no_location, "no_location"},
  };
};
}  // namespace detail

/// The enumerator's name ("malformed"), also the message() of its
/// std::error_code, whose category is named "llmdlq.store_spec".
[[nodiscard]] constexpr std::string_view to_string(store_spec_errc code) noexcept { return detail::errc_name(code); }

struct store_spec_error {
  store_spec_errc code = store_spec_errc::unknown_kind;
  std::string message;  ///< quotes the text and names the forms `kinds` takes
};

/// Reads `text` as one of the forms of `kinds`. A trailing `#TABLE` (or,
/// for PostgreSQL, `#SCHEMA.TABLE`) of identifiers names the table; a `#`
/// anywhere else (in a password, say) stays in the location.
[[nodiscard]] LLMDLQ_INLINE expected<store_spec, store_spec_error> parse_store_spec(
    std::string_view text, store_kinds kinds = every_store_kind);

/// The forms of `kinds` for a person, ` | ` between them, a Kafka topic
/// among stores marked read only: `sqlite:PATH[#TABLE] | postgres:... |
/// kafka:BROKERS/TOPIC (read only)` (as a target, a topic is written).
[[nodiscard]] LLMDLQ_INLINE std::string store_forms(store_kinds kinds = every_store_kind);

/// The store for a person to read, never a connection string (it may hold a
/// password): the SQLite or JSON Lines file, `postgres`, with the table when
/// named (`dlq.db#letters`, `postgres#ops.letters`); a topic or a stream
/// as its spec (`kafka:BROKERS/TOPIC`, `redis:HOST:PORT/STREAM`).
[[nodiscard]] LLMDLQ_INLINE std::string display_name(const store_spec& spec);

LLMDLQ_END_NAMESPACE

#ifdef LLMDLQ_HEADER_ONLY
#include "llmdlq/impl/store_spec.ipp"
#endif
