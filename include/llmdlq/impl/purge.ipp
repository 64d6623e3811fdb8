// SPDX-License-Identifier: MIT
// Definitions for purge.hpp.
#pragma once

#include <boost/json/value.hpp>

#include "llmdlq/config.hpp"
#include "llmdlq/purge.hpp"

LLMDLQ_BEGIN_NAMESPACE

LLMDLQ_INLINE boost::json::object to_json(const purge_report& report) {
  boost::json::object out;
  out["count"] = report.count;
  if (report.oldest_expires_at) out["oldest_expires_at"] = format_rfc3339(*report.oldest_expires_at);
  if (report.newest_expires_at) out["newest_expires_at"] = format_rfc3339(*report.newest_expires_at);
  out["operator"] = report.operator_name;
  out["at"] = format_rfc3339(report.at);
  out["dry_run"] = report.dry_run;
  return out;
}

LLMDLQ_END_NAMESPACE
