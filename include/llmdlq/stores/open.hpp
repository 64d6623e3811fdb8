// SPDX-License-Identifier: MIT
// Opens what a store spec (llmdlq/store_spec.hpp) names: a moderation store
// (SQLite, PostgreSQL, a Kafka topic read only) or a replay target (a JSON
// Lines file, a Kafka topic, a PostgreSQL table, a Redis stream), through
// whichever transport library was built; a kind whose library was not built
// is an error (not_built), not a link failure.
// Part of the llmdlq::stores library, which links every transport built.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/error_category.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/moderation.hpp"
#include "llmdlq/replay_target.hpp"
#include "llmdlq/store_spec.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// Why what a spec names did not open.
enum class open_errc : std::uint8_t {
  bad_spec,           ///< the text is none of the forms asked for (the message says why, as store_spec_error does)
  not_built,          ///< the kind's library (llmdlq::sqlite, postgres, kafka) was not built
  not_a_store,        ///< the kind keeps no moderation queue (`jsonl:`, `redis:`)
  not_a_target,       ///< the kind is not a replay target (`sqlite:`)
  read_only,          ///< asked to write what can only be read: a Kafka topic
  not_found,          ///< a SQLite file opened read-only is not there
  not_allowed,        ///< the target is not on the allowlist
  allowlist_refused,  ///< the allowlist cannot be trusted or read (see allowed_target())
  refused,            ///< the store or target refuses to be opened until it is fixed: a file another user could have
                      ///< written, a database that is no DLQ, a topic the cluster refuses, a bad property
  unavailable,        ///< the store or target could not be reached or read: try again
};

LLMDLQ_END_NAMESPACE
template <>
struct std::is_error_code_enum<llmdlq::open_errc> : std::true_type {};
LLMDLQ_BEGIN_NAMESPACE

namespace detail {
template <>
struct errc_table<open_errc> {
  static constexpr const char* category = "llmdlq.open";
  static constexpr std::string_view unknown = "unknown";
  static constexpr bool has_permanence = true;
  static constexpr errc_entry<open_errc> entries[] = {
      // The caller's (is_usage_error): what was asked cannot be opened.
      {open_errc::bad_spec, "bad_spec", true},
      {open_errc::not_built, "not_built", true},
      {open_errc::not_a_store, "not_a_store", true},
      {open_errc::not_a_target, "not_a_target", true},
      {open_errc::read_only, "read_only", true},
      {open_errc::not_found, "not_found", true},
      {open_errc::not_allowed, "not_allowed", true},
      {open_errc::allowlist_refused, "allowlist_refused", true},
      // The store's or the target's.
      {open_errc::refused, "refused", true},
      {open_errc::unavailable, "unavailable"},
  };
};
}  // namespace detail

/// Whether opening the same spec again can never succeed (all but
/// `unavailable`). A std::error_code of it says the same by comparing equal
/// to failure_condition::permanent.
[[nodiscard]] constexpr bool is_permanent(open_errc code) noexcept { return detail::errc_permanent(code); }

/// Whether the fault is in what was asked (the spec, the options, the
/// allowlist), not in the store: a command line reports these as usage
/// errors. `refused` and `unavailable` are the store's (or the target's).
[[nodiscard]] constexpr bool is_usage_error(open_errc code) noexcept {
  return code != open_errc::refused && code != open_errc::unavailable;
}

/// The enumerator's name ("not_built"), also the message() of its
/// std::error_code, whose category is named "llmdlq.open".
[[nodiscard]] constexpr std::string_view to_string(open_errc code) noexcept { return detail::errc_name(code); }

struct open_error {
  open_errc code = open_errc::unavailable;
  std::string message;
};

struct store_open_options {
  /// Opens without changing anything: a SQLite file must exist and hold the
  /// table (not_found when it is missing), a PostgreSQL table is not
  /// migrated (it must exist), and a Kafka topic may be opened (read whole,
  /// in memory). Without it a SQLite file is created when missing, a
  /// PostgreSQL store migrated, and a Kafka topic refused (read_only).
  bool read_only = false;
};

/// Opens the moderation store `spec` names: sqlite_store, postgres_store
/// (its `#[SCHEMA.]TABLE` as the table), or kafka_topic_store (read only).
/// The transports' failures become `refused` (is_permanent) or `unavailable`.
[[nodiscard]] expected<std::unique_ptr<moderation_store>, open_error> open_store(const store_spec& spec,
                                                                                 store_open_options options = {});

/// parse_store_spec(text, moderation_store_kinds) and open_store() in one;
/// a text that is no such spec is `bad_spec`.
[[nodiscard]] expected<std::unique_ptr<moderation_store>, open_error> open_store(std::string_view text,
                                                                                 store_open_options options = {});

struct target_open_options {
  /// When set, the target must be on this allowlist (allowed_target()):
  /// else not_allowed, and nothing is opened or created.
  std::filesystem::path allowlist;
};

/// Whether the target `spec` names is on the allowlist in `allowlist`, and
/// the spec as it was matched. The allowlist holds one target per line,
/// exactly, or a prefix ending in `*`; a `#` at the start of a line or after
/// a blank starts a comment (the `#` of `postgres:CONNINFO#TABLE` does not).
/// A `jsonl:` target is matched as `jsonl:` and its absolute path with `.`,
/// `..` and symbolic links resolved (so no spelling of a path leads out of an
/// allowed prefix), and the spec returned names that path. A Kafka or Redis
/// entry names its cluster (the brokers; the host and port) exactly and its
/// topic or stream exactly or by a prefix ending in `*`. A PostgreSQL entry
/// names `postgres:CONNINFO[#[SCHEMA.]TABLE]` exactly, never by a prefix (a
/// later keyword of a connection string overrides an earlier one). A refusal
/// names a PostgreSQL target without its connection string. Whoever could write the
/// allowlist could send payloads anywhere: it is refused
/// (allowlist_refused) when it is a symbolic link to a file, when group or
/// others may write it, when another user than this one or root owns it or
/// a directory above it, when it is missing or larger than 1 MiB.
/// Fails with not_a_target for a kind that is no target.
[[nodiscard]] expected<store_spec, open_error> allowed_target(const store_spec& spec,
                                                              const std::filesystem::path& allowlist);

/// Opens the replay target `spec` names: a jsonl_replay_target, a
/// kafka_replay_target (the brokers and topic), a postgres_replay_target
/// (its `#[SCHEMA.]TABLE`, else `llmdlq_deliveries`, created when missing) or a
/// redis_stream_target (the host, port and stream). Its failures become
/// `refused` (is_permanent) and `unavailable`; a SQLite file is
/// not_a_target, a kind whose library was not built not_built.
[[nodiscard]] expected<std::unique_ptr<replay_target>, open_error> open_target(const store_spec& spec,
                                                                               target_open_options options = {});

LLMDLQ_END_NAMESPACE
