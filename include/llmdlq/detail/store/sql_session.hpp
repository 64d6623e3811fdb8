// SPDX-License-Identifier: MIT
// What a SQL back-end supplies to the stores' shared algorithms: statements
// run with bound values, rows read column by column, and, for the
// moderation stores, units of work (one attempt, or one transaction).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "llmdlq/config.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/moderation.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail::store {

/// A value bound to a placeholder: text (bound as it is, an empty text
/// included, never NULL), or a 64-bit integer.
using sql_value = std::variant<std::string, std::int64_t>;

/// The current row of a result. Columns are numbered from 0; the row is
/// valid only during the call it is passed to.
class sql_row {
 public:
  virtual ~sql_row() = default;
  [[nodiscard]] virtual bool is_null(int column) const = 0;
  /// The column as text; empty when NULL.
  [[nodiscard]] virtual std::string text(int column) const = 0;
  /// The column as a signed integer; 0 when NULL.
  [[nodiscard]] virtual std::int64_t integer(int column) const = 0;
  /// The column as a count (a non-negative integer); 0 when NULL.
  [[nodiscard]] virtual std::uint64_t count(int column) const = 0;
};

/// Statements on one connection of a back-end, failing with `Error` (its
/// store_unavailable).
template <class Error>
class sql_statements {
 public:
  using row_handler = std::function<void(const sql_row&)>;

  virtual ~sql_statements() = default;

  /// Runs `sql` with `values` bound to its placeholders 1, 2, ... and calls
  /// `on_row` (when set) for each row it yields. `what` names the step in
  /// the error (store_unavailable) when it fails.
  [[nodiscard]] virtual expected<void, Error> execute(const std::string& sql, std::span<const sql_value> values,
                                                      const row_handler& on_row, std::string_view what) = 0;
};

/// One connection of a back-end, held (with its store's lock) for the
/// duration of one shared algorithm.
class sql_session : public sql_statements<moderation_error> {
 public:
  using work = std::function<expected<void, moderation_error>()>;

  /// Runs `body` once on a ready connection; a back-end that reconnects
  /// runs it a second time when the connection broke, so `body` starts from
  /// scratch each time and must be safe to repeat.
  [[nodiscard]] virtual expected<void, moderation_error> attempt(const work& body) = 0;

  /// Runs `body` inside one write transaction, with attempt()'s retry:
  /// committed when it succeeds, rolled back when it or the commit fails.
  [[nodiscard]] virtual expected<void, moderation_error> transaction(const work& body) = 0;
};

}  // namespace detail::store
LLMDLQ_END_NAMESPACE
