// SPDX-License-Identifier: MIT
// SQLite's half of the SQL the stores share (llmdlq/detail/store/): its
// dialect, its rows, and statements run with bound values.
#pragma once

#include <sqlite3.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include <fmt/format.h>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/store/sql_dialect.hpp"
#include "llmdlq/detail/store/sql_session.hpp"
#include "llmdlq/expected.hpp"
#include "connection.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail::sqlite {

// SQLite's dialect (defined beside sqlite_store, in store.cpp).
extern const store::sql_dialect sqlite_dialect;

// The row a statement stands on, for the shared algorithms.
class sqlite_row final : public store::sql_row {
 public:
  explicit sqlite_row(sqlite3_stmt* s) noexcept : s_(s) {}
  bool is_null(int column) const override { return sqlite3_column_type(s_, column) == SQLITE_NULL; }
  std::string text(int column) const override { return column_text(s_, column); }
  std::int64_t integer(int column) const override { return sqlite3_column_int64(s_, column); }
  std::uint64_t count(int column) const override {
    return static_cast<std::uint64_t>(sqlite3_column_int64(s_, column));
  }

 private:
  sqlite3_stmt* s_;
};

inline void bind_value(sqlite3_stmt* s, int index, const store::sql_value& value) {
  if (const auto* text = std::get_if<std::string>(&value)) {
    bind_text(s, index, *text);
  } else {
    sqlite3_bind_int64(s, index, std::get<std::int64_t>(value));
  }
}

// What SQLite last said on `db`, for the step `what`.
inline std::string failure_message(sqlite3* db, std::string_view what) {
  return fmt::format("sqlite: {}: {}", what, db ? sqlite3_errmsg(db) : "cannot open");
}

// Runs `sql` with `values` bound to ?1, ?2, ..., calling on_row (when set)
// for each row; failure_message(db, what) when SQLite fails.
inline expected<void, std::string> execute_sql(sqlite3* db, const std::string& sql,
                                               std::span<const store::sql_value> values,
                                               const std::function<void(const store::sql_row&)>& on_row,
                                               std::string_view what) {
  statement s;
  if (!s.prepare(db, sql)) return unexpected(failure_message(db, what));
  for (std::size_t i = 0; i < values.size(); ++i) bind_value(s.get(), static_cast<int>(i + 1), values[i]);
  int rc;
  while ((rc = sqlite3_step(s.get())) == SQLITE_ROW) {
    if (on_row) on_row(sqlite_row(s.get()));
  }
  if (rc != SQLITE_DONE) return unexpected(failure_message(db, what));
  return {};
}

}  // namespace detail::sqlite
LLMDLQ_END_NAMESPACE
