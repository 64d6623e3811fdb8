// SPDX-License-Identifier: MIT
// The counts tables and the charts of a DLQ, as HTML with inline SVG: drawn
// on the server, no script, no fetch. The console's /charts page and
// `llmdlq report --html` both show them.
#pragma once

#include <string>
#include <vector>

#include "store_access.hpp"

namespace llmdlq::cli {

/// Tables of the counts by status, category, triage class and failure code,
/// with the total and the age of the oldest pending letter at `now`, and the
/// records that do not read back, each with its dlq_id and why.
std::string counts_tables_html(const dlq_overview& overview, timestamp now);

/// The colour a failure category is drawn in, on every page and chart:
/// one fixed colour per category of the taxonomy (colour-blind-safe), grey
/// for a name the taxonomy does not have.
std::string_view category_colour(std::string_view category);

/// A small square in `category`'s colour, to stand before its name.
std::string category_swatch_html(std::string_view category);

/// Dead letters per day, stacked by category, with a legend.
std::string timeline_chart_svg(const std::vector<dlq_timeline_bucket>& timeline);

/// Dead letters per processed response, per day, with the DLQ-rate alarm's
/// default threshold (2 %) as a dashed line; each line labelled on the chart
/// and in a legend. A sentence instead when the store counted no traffic.
std::string dlq_rate_chart_svg(const std::vector<dlq_timeline_bucket>& timeline);

/// "3 d 4 h", "5 min": how long ago `created_at` (RFC 3339) was at `now`.
std::string age_text(std::string_view created_at, timestamp now);

}  // namespace llmdlq::cli
