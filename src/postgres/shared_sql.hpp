// SPDX-License-Identifier: MIT
// PostgreSQL's half of the SQL the stores share (llmdlq/detail/store/): its
// dialect, its rows, and statements run with bound values.
#pragma once

#include <libpq-fe.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/store/sql_dialect.hpp"
#include "llmdlq/detail/store/sql_session.hpp"
#include "llmdlq/expected.hpp"
#include "libpq.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail::postgres {

// PostgreSQL's dialect (defined beside postgres_store, in store.cpp).
extern const store::sql_dialect postgres_dialect;

// Row `row` of a result, for the shared algorithms.
class postgres_row final : public store::sql_row {
 public:
  postgres_row(const PGresult* r, int row) noexcept : r_(r), row_(row) {}
  bool is_null(int column) const override { return PQgetisnull(r_, row_, column) != 0; }
  std::string text(int column) const override {
    return std::string(PQgetvalue(r_, row_, column), static_cast<std::size_t>(PQgetlength(r_, row_, column)));
  }
  std::int64_t integer(int column) const override { return std::strtoll(PQgetvalue(r_, row_, column), nullptr, 10); }
  std::uint64_t count(int column) const override { return std::strtoull(PQgetvalue(r_, row_, column), nullptr, 10); }

 private:
  const PGresult* r_;
  int row_;
};

// Runs `sql` with `values` bound as text ($1, $2, ...), calling on_row (when
// set) for each row; what went wrong, for the step `what`, when it fails.
inline expected<void, failure> execute_sql(PGconn* conn, const std::string& sql,
                                           std::span<const store::sql_value> values,
                                           const std::function<void(const store::sql_row&)>& on_row,
                                           std::string_view what) {
  std::vector<std::string> texts;
  texts.reserve(values.size());
  for (const auto& v : values) {
    const auto* text = std::get_if<std::string>(&v);
    texts.push_back(text ? *text : std::to_string(std::get<std::int64_t>(v)));
  }
  std::vector<const char*> pointers;
  pointers.reserve(texts.size());
  for (const auto& t : texts) pointers.push_back(t.c_str());
  const result r(PQexecParams(conn, sql.c_str(), static_cast<int>(pointers.size()), nullptr, pointers.data(), nullptr,
                              nullptr, 0));
  const auto status = r ? PQresultStatus(r.get()) : PGRES_FATAL_ERROR;
  if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) return unexpected(classify(conn, r.get(), what));
  if (on_row) {
    for (int row = 0; row < PQntuples(r.get()); ++row) on_row(postgres_row(r.get(), row));
  }
  return {};
}

}  // namespace detail::postgres
LLMDLQ_END_NAMESPACE
