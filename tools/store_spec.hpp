// SPDX-License-Identifier: MIT
// The stores the `llmdlq` commands name on their command line, read by one
// parser: `sqlite:PATH[#TABLE]`, `postgres:CONNINFO[#[SCHEMA.]TABLE]`,
// `kafka:BROKERS/TOPIC`, `jsonl:PATH` and `redis:HOST:PORT/STREAM`; each
// command says which of them it takes.
#pragma once

#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>

#include <llmdlq/expected.hpp>
#include <llmdlq/moderation.hpp>

namespace llmdlq::cli {

/// A store named on the command line.
struct store_spec {
  enum class store_kind { sqlite, postgres, kafka, jsonl, redis };
  store_kind kind = store_kind::sqlite;
  /// The SQLite or JSON Lines file, the libpq connection string, the Kafka
  /// brokers, or the Redis host.
  std::string location;
  std::string topic;     ///< the Kafka topic or the Redis stream
  int port = 0;          ///< Redis only
  std::string table;     ///< empty: the store's default table
  std::string schema;    ///< PostgreSQL only; empty: the search_path's first
};

using store_kinds = std::initializer_list<store_spec::store_kind>;

/// The stores a moderation command reads: SQLite, PostgreSQL and Kafka.
inline constexpr store_kinds moderation_stores = {store_spec::store_kind::sqlite, store_spec::store_kind::postgres,
                                                  store_spec::store_kind::kafka};

/// The stores an operator acts on: SQLite and PostgreSQL (a Kafka topic is read only).
inline constexpr store_kinds writable_moderation_stores = {store_spec::store_kind::sqlite,
                                                           store_spec::store_kind::postgres};

/// The forms of `kinds` for a person, `|` between them: `sqlite:PATH[#TABLE] | …`.
[[nodiscard]] std::string store_forms(store_kinds kinds = moderation_stores);

/// The store for a person to read: the SQLite file, or `postgres` (a
/// connection string may hold a password), with the table when named.
[[nodiscard]] std::string display_name(const store_spec& spec);

/// Reads `text`; why not, when it is none of the forms of `kinds` (a usage error).
[[nodiscard]] expected<store_spec, std::string> parse_store_spec(std::string_view text,
                                                                 store_kinds kinds = moderation_stores);

/// Why opening a store failed, and whether the fault is the command line's
/// (a spec that names no store, a SQLite file that is not there: exit_usage)
/// or the store's (exit_sink).
struct store_open_error {
  std::string message;
  bool usage = false;
};

/// Opens the store `spec` names. `read_only`: a SQLite file is opened
/// read-only (it must exist and hold the table), a PostgreSQL store is not
/// migrated (its table must exist), and a Kafka topic is read whole (it is
/// read only: anything else is a usage error). Without it a PostgreSQL
/// store is migrated and a SQLite file is created when missing.
[[nodiscard]] expected<std::unique_ptr<moderation_store>, store_open_error> open_store(const store_spec& spec,
                                                                                      bool read_only);

/// parse_store_spec and open_store in one, the failure as text.
[[nodiscard]] expected<std::unique_ptr<moderation_store>, std::string> open_moderation_store(std::string_view spec,
                                                                                            bool read_only);

}  // namespace llmdlq::cli
