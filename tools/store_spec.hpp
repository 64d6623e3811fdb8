// SPDX-License-Identifier: MIT
// The moderation stores the `llmdlq` commands name on their command line:
// `sqlite:PATH[#TABLE]` and `postgres:CONNINFO[#[SCHEMA.]TABLE]`.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <llmdlq/expected.hpp>
#include <llmdlq/moderation.hpp>

namespace llmdlq::cli {

/// A store named on the command line.
struct store_spec {
  enum class store_kind { sqlite, postgres };
  store_kind kind = store_kind::sqlite;
  std::string location;  ///< the SQLite file, or the libpq connection string
  std::string table;     ///< empty: the store's default table
  std::string schema;    ///< PostgreSQL only; empty: the search_path's first
};

/// The forms open_moderation_store accepts, for usage texts.
inline constexpr std::string_view store_spec_forms = "sqlite:PATH[#TABLE] | postgres:CONNINFO[#[SCHEMA.]TABLE]";

/// The store for a person to read: the SQLite file, or `postgres` (a
/// connection string may hold a password), with the table when named.
[[nodiscard]] std::string display_name(const store_spec& spec);

/// Reads `text`; why not, when it is none of store_spec_forms (a usage error).
[[nodiscard]] expected<store_spec, std::string> parse_store_spec(std::string_view text);

/// Why opening a store failed, and whether the fault is the command line's
/// (a spec that names no store, a SQLite file that is not there: exit_usage)
/// or the store's (exit_sink).
struct store_open_error {
  std::string message;
  bool usage = false;
};

/// Opens the store `spec` names. `read_only`: a SQLite file is opened
/// read-only (it must exist and hold the table) and a PostgreSQL store is
/// not migrated (its table must exist). Without it a PostgreSQL store is
/// migrated and a SQLite file is created when missing.
[[nodiscard]] expected<std::unique_ptr<moderation_store>, store_open_error> open_store(const store_spec& spec,
                                                                                      bool read_only);

/// parse_store_spec and open_store in one, the failure as text.
[[nodiscard]] expected<std::unique_ptr<moderation_store>, std::string> open_moderation_store(std::string_view spec,
                                                                                            bool read_only);

}  // namespace llmdlq::cli
