// SPDX-License-Identifier: MIT
// How a store's SQL (a moderation store's, a replay state's) spells what the
// shared algorithms need, and which tables they read: the differences
// between back-ends, as data.
#pragma once

#include <string>
#include <string_view>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/store/query_filter.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail::store {

/// How one back-end spells what the replay state's SQL (replay_state_sql.hpp)
/// needs beside the rest of its dialect.
struct replay_sql_spelling {
  std::string_view backend;           ///< the back-end, as its messages begin: `sqlite`, `postgres`
  std::string_view true_literal;      ///< a boolean column's true: `1`, `true`
  std::string_view false_literal;     ///< its false, as the partial index on undelivered entries spells it
  std::string_view greatest;          ///< the function giving the greater of two values: `max`, `GREATEST`
  std::string_view share_rows;        ///< appended to a SELECT of rows that must not change until its statement ends
  std::string_view ledger_tie_break;  ///< orders the ledger's entries written at one time: `rowid` (as written), a key
};

/// The placeholders, casts and expressions of one back-end (beside those a
/// moderation_query's filter needs, from moderation_sql_dialect).
struct sql_dialect : moderation_sql_dialect {
  std::string_view integer_cast;  ///< appended to an integer parameter: `::bigint`, or nothing
  std::string_view json_cast;     ///< appended to a JSON text parameter: `::jsonb`, or nothing
  std::string (*time_text)(std::string_view column);  ///< a time as RFC 3339 text, NULL staying NULL
  /// The bucket of a time column: its milliseconds since parameter 1 over
  /// parameter 2 (both integers), rounded down.
  std::string (*time_bucket)(std::string_view column);
  std::string_view envelope_text;  ///< the envelope column read as text
  std::string_view lock_rows;      ///< appended to a SELECT of rows about to be updated
  /// A SELECT of one integer, not 0 when the table that parameter 1 names exists.
  std::string_view table_exists;
  /// The columns of a moderation_record, in read_record()'s order.
  std::string_view record_columns;
  /// Whether record_columns hold raw_response (after failure_code); without
  /// it the record takes raw_response from its envelope.
  bool raw_response_column = false;
  /// A text compared with stored text, as the store can hold it (nothing: as it is).
  std::string (*storable)(std::string_view text) = nullptr;
  replay_sql_spelling replay;  ///< what only the replay state's SQL needs
};

/// The tables of one DLQ, as the SQL names them.
struct store_tables {
  std::string dlq;      ///< the DLQ's table, quoted or qualified as needed
  std::string traffic;  ///< the traffic table, named the same way (and so looked up)
  std::string name;     ///< the DLQ as the traffic table's dlq_table column names it
};

}  // namespace detail::store
LLMDLQ_END_NAMESPACE
