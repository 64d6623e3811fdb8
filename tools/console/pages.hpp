// SPDX-License-Identifier: MIT
// The console's server-rendered pages. Every piece of record text goes
// through html_escape; no page holds a script or a style of its own.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "access.hpp"
#include "../record_view.hpp"
#include "store_access.hpp"

namespace llmdlq::cli {

std::string login_page(std::string_view refusal = {});

std::string queue_page_html(const console_session& session, const queue_filter& filter, const moderation_page& page,
                            const dlq_overview& overview, timestamp now);

/// What the last action on a record page did or why it was refused.
struct action_outcome {
  std::string notice;                       ///< done: what happened
  std::string refusal;                      ///< refused: why (nothing was changed)
  std::vector<validation_error> errors;     ///< the refused correction's errors
  std::string correction;                   ///< the refused correction, to edit again
};

std::string record_page_html(const console_session& session, const moderation_record& record,
                             const action_outcome& outcome);

/// The notice a record page shows after `action_name` (claim, resolve,
/// discard, requeue) was carried out; nothing for any other text, so no
/// link can put words of its own on the console's page.
std::string action_notice(std::string_view action_name);

std::string charts_page_html(const console_session& session, const dlq_overview& overview, int days, timestamp now);

/// A whole page around `body`, with the navigation and the logout form.
std::string console_page(const console_session& session, std::string_view title, std::string_view body);

/// A page for an error that is not about a record (not found, bad request).
std::string message_page(const console_session* session, std::string_view title, std::string_view message);

/// `value` indented two spaces per level; a text that is not JSON unchanged.
std::string pretty_json(std::string_view text);

/// `raw` as HTML, each span in a <mark> whose title is its label (a span
/// inside or across one already marked is left out).
std::string highlighted_html(std::string_view raw, const std::vector<error_span>& spans);

}  // namespace llmdlq::cli
