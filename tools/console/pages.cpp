// SPDX-License-Identifier: MIT
#include "pages.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <fmt/format.h>
#include <httplib.h>
#include <llmdlq/detail/counted.hpp>

#include "charts.hpp"
#include "html.hpp"

namespace llmdlq::cli {
namespace {

constexpr moderation_action operator_actions[] = {moderation_action::claim, moderation_action::discard,
                                                  moderation_action::requeue};

std::string csrf_field(const console_session& session) {
  return fmt::format("<input type=\"hidden\" name=\"csrf\" value=\"{}\">", html_escape(session.csrf));
}

std::string document(std::string_view title, std::string_view header, std::string_view body) {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<title>{} – llmdlq console</title><link rel=\"stylesheet\" href=\"/assets/console.css\">"
      "<script src=\"/assets/console.js\" defer></script></head><body>{}<main>{}</main></body></html>\n",
      html_escape(title), header, body);
}

std::string select_html(std::string_view name, std::string_view label, const std::vector<std::string>& options,
                        std::string_view chosen, bool any) {
  std::string out = fmt::format("<label>{} <select name=\"{}\">", html_escape(label), html_escape(name));
  if (any) out += fmt::format("<option value=\"\"{}>any</option>", chosen.empty() ? " selected" : "");
  for (const auto& option : options) {
    out += fmt::format("<option value=\"{}\"{}>{}</option>", html_escape(option),
                       option == chosen ? " selected" : "", html_escape(option));
  }
  return out + "</select></label>";
}

std::vector<std::string> keys_of(const std::map<std::string, std::uint64_t>& counts) {
  std::vector<std::string> keys;
  for (const auto& [key, count] : counts) keys.push_back(key);
  return keys;
}

httplib::Params filter_params(const queue_filter& filter) {
  httplib::Params params{{"status", std::string(to_string(filter.status))}};
  if (!filter.category.empty()) params.emplace("category", filter.category);
  if (!filter.triage.empty()) params.emplace("triage", filter.triage);
  if (!filter.failure_code.empty()) params.emplace("code", filter.failure_code);
  return params;
}

std::string record_link(std::string_view dlq_id) {
  return "/records/" + httplib::detail::encode_query_param(std::string(dlq_id));
}

void pretty(const boost::json::value& v, std::string& out, int depth) {
  const std::string indent(static_cast<std::size_t>(depth + 1) * 2, ' ');
  const std::string close(static_cast<std::size_t>(depth) * 2, ' ');
  if (const auto* object = v.if_object(); object && !object->empty()) {
    out += "{\n";
    bool first = true;
    for (const auto& [key, value] : *object) {
      if (!first) out += ",\n";
      first = false;
      out += indent + boost::json::serialize(boost::json::string_view(key)) + ": ";
      pretty(value, out, depth + 1);
    }
    out += "\n" + close + "}";
  } else if (const auto* array = v.if_array(); array && !array->empty()) {
    out += "[\n";
    for (std::size_t i = 0; i < array->size(); ++i) {
      if (i) out += ",\n";
      out += indent;
      pretty((*array)[i], out, depth + 1);
    }
    out += "\n" + close + "]";
  } else {
    out += boost::json::serialize(v);
  }
}

// The stored text of the raw response or original input, as the page shows it.
std::string captured_html(const captured_text& text, const std::vector<error_span>& spans) {
  std::string out;
  if (text.sealed) {
    out += fmt::format("<p class=\"sealed\">The original is sealed with key {} ({}); what is shown is the stored, "
                       "redacted text.</p>",
                       html_escape(text.sealed->key_id), html_escape(text.sealed->algorithm));
  }
  if (!text.text) return out + fmt::format("<p class=\"sealed\">No text stored ({}, sha256 {}).</p>",
                                           detail::counted(text.length, "byte"), html_escape(text.sha256));
  if (text.base64) out += "<p class=\"sealed\">Not valid UTF-8: stored as base64.</p>";
  if (text.cut) {
    out += fmt::format("<p class=\"sealed\">Only the start of {} is stored.</p>", detail::counted(text.length, "byte"));
  }
  return out + "<pre class=\"raw\">" + highlighted_html(*text.text, text.base64 ? std::vector<error_span>{} : spans) +
         "</pre>";
}

std::string errors_table(const std::vector<validation_error>& errors) {
  if (errors.empty()) return "<p>No validation errors recorded.</p>";
  std::string out = "<table class=\"errors\"><thead><tr><th>JSON Pointer</th><th>keyword</th><th>message</th>"
                    "<th>schema path</th></tr></thead><tbody>";
  for (const auto& e : errors) {
    out += fmt::format("<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td><code>{}</code></td></tr>",
                       html_escape(e.instance_path.empty() ? "(document)" : e.instance_path), html_escape(e.keyword),
                       html_escape(e.message), html_escape(e.schema_path));
  }
  return out + "</tbody></table>";
}

std::string attempts_table(const attempt_summary& attempts) {
  std::string out = fmt::format("<p class=\"attempts-summary\">{}.</p>", html_escape(attempts_text(attempts)));
  if (attempts.history.empty()) return out + "<p>No recovery attempts yet.</p>";
  out += "<table class=\"attempts\"><thead><tr><th>at</th><th>strategy</th><th>outcome</th><th>model</th>"
         "<th>tokens</th><th>latency</th><th>counted</th></tr></thead><tbody>";
  for (const auto& a : attempts.history) {
    const auto not_counted = not_counted_because(a);
    out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"number\">{}</td>"
                       "<td class=\"number\">{}</td><td>{}</td></tr>",
                       a.at ? html_escape(format_rfc3339(*a.at)) : "", html_escape(a.strategy),
                       html_escape(a.outcome), html_escape(a.model), a.tokens,
                       a.latency_ms ? fmt::format("{} ms", *a.latency_ms) : "",
                       not_counted.empty() ? std::string("yes") : "no: " + std::string(not_counted));
  }
  return out + "</tbody></table>";
}

// The operator log: the store keeps it as a JSON array of actions; any
// other text is shown as it is.
std::string operator_log_html(std::string_view log) {
  boost::system::error_code ec;
  const auto parsed = boost::json::parse(log, ec);
  const auto* entries = ec ? nullptr : parsed.if_array();
  if (entries == nullptr) return "<pre class=\"log\">" + html_escape(log) + "</pre>";
  if (entries->empty()) return "<p>No actions yet.</p>";
  constexpr std::string_view columns[] = {"at", "operator", "action", "from", "to", "note"};
  std::string out = "<table class=\"log\"><thead><tr>";
  for (const auto column : columns) out += fmt::format("<th>{}</th>", column);
  out += "</tr></thead><tbody>";
  for (const auto& entry : *entries) {
    out += "<tr>";
    for (const auto column : columns) {
      const auto* object = entry.if_object();
      const auto* field = object ? object->if_contains(column) : nullptr;
      const auto* text = field ? field->if_string() : nullptr;
      const std::string cell = text ? std::string(*text) : field ? boost::json::serialize(*field) : std::string();
      out += "<td>" + html_escape(cell) + "</td>";
    }
    out += "</tr>";
  }
  return out + "</tbody></table>";
}

// A queue row's status: the status, or that the record does not read back, and why.
std::string status_html(const moderation_record& r) {
  if (r.readable()) return std::string(to_string(r.status));
  return "<span class=\"unreadable\">unreadable: " + html_escape(r.defect_reason) + "</span>";
}

std::string action_forms(const console_session& session, const moderation_record& record,
                         const action_outcome& outcome) {
  const std::string base = record_link(record.dlq_id);
  if (record.defect == record_defect::status) {
    return "<p>No action is possible: the stored status is none of the statuses.</p>";
  }
  std::string out;
  for (const auto action : operator_actions) {
    if (!transition(record.status, action)) continue;
    out += fmt::format("<form class=\"inline\" method=\"post\" action=\"{}/{}\">{}<button type=\"submit\" "
                       "name=\"do\" value=\"{}\">{}</button></form>",
                       html_escape(base), to_string(action), csrf_field(session), to_string(action),
                       to_string(action));
  }
  if (transition(record.status, moderation_action::resolve)) {
    out += fmt::format("<form class=\"resolve\" method=\"post\" action=\"{}/resolve\">{}"
                       "<label for=\"corrected\">Corrected JSON</label>"
                       "<textarea id=\"corrected\" name=\"corrected\" spellcheck=\"false\">{}</textarea>"
                       "<label>Note <input type=\"text\" name=\"note\" size=\"60\"></label> "
                       "<button type=\"submit\">resolve</button></form>",
                       html_escape(base), csrf_field(session),
                       html_escape(outcome.correction.empty() ? record.raw_response : outcome.correction));
  }
  return out.empty() ? "<p>No action is possible in this status.</p>" : out;
}

}  // namespace

std::string pretty_json(std::string_view text) {
  boost::system::error_code ec;
  const auto value = boost::json::parse(text, ec);
  if (ec) return std::string(text);
  std::string out;
  pretty(value, out, 0);
  return out;
}

std::string highlighted_html(std::string_view raw, const std::vector<error_span>& spans) {
  std::string out;
  std::size_t at = 0;
  for (const auto& span : spans) {
    if (span.begin < at || span.begin >= raw.size()) continue;
    std::size_t end = std::min(span.end, raw.size());
    // A mark never splits a character.
    while (end < raw.size() && (static_cast<unsigned char>(raw[end]) & 0xC0) == 0x80) ++end;
    out += html_escape(raw.substr(at, span.begin - at));
    out += fmt::format("<mark title=\"{}\">{}</mark>", html_escape(span.label),
                       html_escape(raw.substr(span.begin, end - span.begin)));
    at = end;
  }
  return out + html_escape(raw.substr(std::min(at, raw.size())));
}

std::string console_page(const console_session& session, std::string_view title, std::string_view body) {
  const std::string header = fmt::format(
      "<header><strong>llmdlq console</strong><a href=\"/\">Queue</a><a href=\"/charts\">Charts</a>"
      "<span class=\"who\">{}</span><form class=\"inline\" method=\"post\" action=\"/logout\">{}"
      "<button type=\"submit\">Log out</button></form></header>",
      html_escape(session.operator_name), csrf_field(session));
  return document(title, header, body);
}

std::string message_page(const console_session* session, std::string_view title, std::string_view message) {
  const std::string body = fmt::format("<h1>{}</h1><p class=\"refused\">{}</p><p><a href=\"/\">Back to the queue</a></p>",
                                       html_escape(title), html_escape(message));
  return session ? console_page(*session, title, body)
                 : document(title, "<header><strong>llmdlq console</strong></header>", body);
}

std::string login_page(std::string_view refusal) {
  std::string body = "<h1>Log in</h1>";
  if (!refusal.empty()) body += fmt::format("<p class=\"refused\">{}</p>", html_escape(refusal));
  body += "<form method=\"post\" action=\"/login\"><p><label>Your name (goes into the operator log) "
          "<input type=\"text\" name=\"operator\" required maxlength=\"128\" autocomplete=\"username\"></label></p>"
          "<p><label>Access token <input type=\"password\" name=\"token\" required "
          "autocomplete=\"current-password\"></label></p><p><button type=\"submit\">Log in</button></p></form>";
  return document("Log in", "<header><strong>llmdlq console</strong></header>", body);
}

std::string queue_page_html(const console_session& session, const queue_filter& filter, const moderation_page& page,
                            const dlq_overview& overview, timestamp now) {
  std::vector<std::string> statuses;
  for (const auto status : all_moderation_statuses) statuses.emplace_back(to_string(status));
  const auto& s = overview.statistics;
  std::string body = fmt::format("<h1>{} dead letters</h1>", html_escape(to_string(filter.status)));
  body += "<form class=\"filters\" method=\"get\" action=\"/\">";
  body += select_html("status", "Status", statuses, to_string(filter.status), false);
  body += select_html("category", "Category", keys_of(s.by_category), filter.category, true);
  body += select_html("triage", "Triage", keys_of(s.by_triage), filter.triage, true);
  body += select_html("code", "Failure code", keys_of(s.by_code), filter.failure_code, true);
  body += "<button type=\"submit\">Filter</button></form>";
  if (page.records.empty()) {
    body += "<p class=\"notice\">No records match.</p>";
  } else {
    body += "<table class=\"queue\"><thead><tr><th>dlq_id</th><th>created</th><th>age</th><th>status</th>"
            "<th>category</th><th>triage</th><th>failure code</th><th>claimed by</th></tr></thead><tbody>";
    for (const auto& r : page.records) {
      body += fmt::format("<tr><td><a href=\"{}\">{}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
                          "<td>{}</td><td>{}</td></tr>",
                          html_escape(record_link(r.dlq_id)), html_escape(r.dlq_id), html_escape(r.created_at),
                          html_escape(age_text(r.created_at, now)), status_html(r),
                          category_swatch_html(r.category) + " " + html_escape(r.category),
                          html_escape(r.triage), html_escape(r.failure_code), html_escape(r.claimed_by));
    }
    body += "</tbody></table>";
  }
  body += "<p class=\"pages\">";
  body += fmt::format("<a href=\"{}\">First page</a>", html_escape(httplib::append_query_params("/", filter_params(filter))));
  if (page.more && page.next) {
    auto params = filter_params(filter);
    params.emplace("after", to_string(*page.next));
    body += fmt::format(" · <a class=\"next\" href=\"{}\">Next page</a>",
                        html_escape(httplib::append_query_params("/", params)));
  }
  body += "</p><h2>Counts</h2>" + counts_tables_html(overview, now);
  return console_page(session, "Queue", body);
}

std::string record_page_html(const console_session& session, const moderation_record& record,
                             const action_outcome& outcome) {
  std::string body = fmt::format("<h1>Dead letter <code>{}</code></h1>", html_escape(record.dlq_id));
  if (!outcome.notice.empty()) body += fmt::format("<p class=\"notice\">{}</p>", html_escape(outcome.notice));
  if (!outcome.refusal.empty()) {
    body += fmt::format("<div class=\"refused\" id=\"refusal\"><p>{}</p>{}</div>", html_escape(outcome.refusal),
                        outcome.errors.empty() ? "" : errors_table(outcome.errors));
  }
  if (!record.readable()) {
    body += fmt::format("<p class=\"refused\" id=\"unreadable\">This record does not read back: {}.</p>",
                        html_escape(record.defect_reason));
  }
  body += fmt::format("<table class=\"facts\"><tbody><tr><th>status</th><td id=\"status\">{}</td></tr>"
                      "<tr><th>claimed by</th><td>{}</td></tr><tr><th>category</th><td>{}</td></tr>"
                      "<tr><th>triage</th><td>{}</td></tr><tr><th>failure code</th><td>{}</td></tr>"
                      "<tr><th>created</th><td>{}</td></tr><tr><th>updated</th><td>{}</td></tr></tbody></table>",
                      record.defect == record_defect::status ? "unknown" : to_string(record.status),
                      html_escape(record.claimed_by),
                      category_swatch_html(record.category) + " " + html_escape(record.category),
                      html_escape(record.triage), html_escape(record.failure_code), html_escape(record.created_at),
                      html_escape(record.updated_at));
  body += "<h2>Actions</h2>" + action_forms(session, record, outcome);

  boost::system::error_code ec;
  const auto json = boost::json::parse(record.envelope_json, ec);
  const auto parsed = ec ? expected<envelope, envelope_error>(unexpected(envelope_error{}))
                         : envelope_from_json(json);
  if (parsed && record.defect != record_defect::envelope) {
    const auto& e = *parsed;
    body += fmt::format("<h2>Raw response</h2><p>{}</p>", html_escape(e.failure.message));
    body += captured_html(e.raw_response, error_spans(e));
    body += "<h2>Errors</h2>" + errors_table(e.failure.errors);
    if (e.original_input) body += "<h2>Original input</h2>" + captured_html(*e.original_input, {});
    body += "<h2>Attempts</h2>" + attempts_table(e.attempts);
  } else {
    body += "<h2>Raw response</h2><pre class=\"raw\">" + html_escape(record.raw_response) + "</pre>";
  }
  if (record.resolution) {
    body += "<h2>Resolution</h2><pre class=\"resolution\">" + html_escape(pretty_json(*record.resolution)) + "</pre>";
  }
  body += "<h2>Operator log</h2>" + operator_log_html(record.operator_log);
  body += "<h2>Envelope</h2><pre class=\"envelope\">" + html_escape(pretty_json(record.envelope_json)) + "</pre>";
  return console_page(session, record.dlq_id, body);
}

std::string action_notice(std::string_view action_name) {
  if (action_name == to_string(moderation_action::claim)) return "Claimed: the record is yours to resolve.";
  if (action_name == to_string(moderation_action::resolve)) return "Resolved: the correction is stored.";
  if (action_name == to_string(moderation_action::discard)) return "Discarded.";
  if (action_name == to_string(moderation_action::requeue)) return "Requeued for automated recovery.";
  return {};
}

std::string charts_page_html(const console_session& session, const dlq_overview& overview, int days, timestamp now) {
  std::string body = fmt::format("<h1>The last {} days</h1><p>", days);
  for (const int choice : {7, 30, 90}) body += fmt::format("<a href=\"/charts?days={}\">{} days</a> ", choice, choice);
  body += "</p><h2>Dead letters per day by category</h2>" + timeline_chart_svg(overview.timeline);
  body += "<h2>DLQ rate</h2>" + dlq_rate_chart_svg(overview.timeline);
  body += "<h2>Counts (all time)</h2>" + counts_tables_html(overview, now);
  return console_page(session, "Charts", body);
}

}  // namespace llmdlq::cli
