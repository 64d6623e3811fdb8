// SPDX-License-Identifier: MIT
// A moderation_record from a row of a store's record columns.
#pragma once

#include "llmdlq/config.hpp"
#include "llmdlq/detail/store/record_check.hpp"
#include "llmdlq/detail/store/sql_dialect.hpp"
#include "llmdlq/detail/store/sql_session.hpp"
#include "llmdlq/envelope.hpp"
#include "llmdlq/moderation_record.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail::store {

/// The record in `row`, read as `d.record_columns` lists it: dlq_id,
/// status, category, triage, failure_code, [raw_response,] envelope,
/// created_at, updated_at, operator_log, claimed_by, resolution. A record
/// that does not read back (an unknown status, a time or an envelope that
/// is not one) is returned all the same, with its defect (record_check.hpp):
/// no row stops a read of many.
[[nodiscard]] inline moderation_record read_record(const sql_row& row, const sql_dialect& d) {
  moderation_record r;
  r.dlq_id = row.text(0);
  check_status(r, row.text(1));
  r.category = row.text(2);
  r.triage = row.text(3);
  r.failure_code = row.text(4);
  int column = 5;
  if (d.raw_response_column) r.raw_response = row.text(column++);
  r.envelope_json = row.text(column++);
  r.created_at = row.text(column++);
  r.updated_at = row.text(column++);
  r.operator_log = row.text(column++);
  r.claimed_by = row.text(column++);
  if (!row.is_null(column)) r.resolution = row.text(column);
  const auto e = check_times_and_envelope(r);
  if (!d.raw_response_column && e && e->raw_response.text) r.raw_response = *e->raw_response.text;
  return r;
}

}  // namespace detail::store
LLMDLQ_END_NAMESPACE
