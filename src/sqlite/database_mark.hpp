// SPDX-License-Identifier: MIT
// How the SQLite stores know a database as llmdlq's before writing to it:
// by its application id, or, in a file an earlier version made, by holding
// llmdlq's own tables alone.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "llmdlq/config.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail::sqlite {

/// llmdlq's `PRAGMA application_id`, "LDLQ" in ASCII (1279544401): set in
/// every database a store or a replay state makes its tables in, so that
/// llmdlq, file(1) and other programs can tell its files from theirs.
inline constexpr std::uint32_t application_id = 0x4C444C51;

/// The statement that marks a database as llmdlq's.
[[nodiscard]] std::string mark_statement();

/// What a database holds, as far as llmdlq is concerned.
struct database_contents {
  bool marked = false;  ///< it carries llmdlq's application id
  /// Why it is not llmdlq's ("it holds the table orders (id INTEGER)");
  /// empty when it is: marked, empty, or holding nothing but llmdlq's tables
  /// in their layouts (a DLQ or replay state an earlier version made).
  std::string foreign;
};

/// Reads `db`'s application id and, when it is not llmdlq's, its schema,
/// writing nothing. Nothing when SQLite fails (sqlite3_errmsg(db) says why).
[[nodiscard]] std::optional<database_contents> read_contents(sqlite3* db);

/// Why the database `path`, which `foreign` says is not llmdlq's, is
/// refused; `kind` is what it was opened as ("a DLQ").
[[nodiscard]] std::string foreign_database_refusal(std::string_view path, std::string_view kind,
                                                   std::string_view foreign);

/// The tables a store makes, `table` holding the dead letters (store.cpp).
[[nodiscard]] std::string store_tables(std::string_view table);

/// The tables a replay state makes, their names starting with `prefix`
/// (replay_state.cpp).
[[nodiscard]] std::string replay_state_tables(std::string_view prefix);

}  // namespace detail::sqlite
LLMDLQ_END_NAMESPACE
