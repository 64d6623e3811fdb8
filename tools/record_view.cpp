// SPDX-License-Identifier: MIT
#include "record_view.hpp"

#include <algorithm>
#include <map>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <llmdlq/detail/counted.hpp>
#include <llmdlq/detail/redaction/json_path_scan.hpp>

namespace llmdlq::cli {
namespace {

constexpr std::string_view underline_red = "\x1b[4;31m";
constexpr std::string_view number_colour = "\x1b[1;33m";
constexpr std::string_view reset = "\x1b[0m";

// The whole document: from its first bracket to the end of the text.
std::optional<std::pair<std::size_t, std::size_t>> document_span(std::string_view text) {
  const auto start = text.find_first_of("{[");
  if (start == std::string_view::npos) return std::nullopt;
  const auto last = text.find_last_of("}]");
  return std::pair{start, last == std::string_view::npos || last < start ? text.size() : last + 1};
}

// The end of the token starting at `begin`: a quoted string to its closing
// quote, a word (a number, a literal, a bare key) to its last character,
// anything else one byte.
std::size_t token_end(std::string_view text, std::size_t begin) {
  const char c = text[begin];
  if (c == '"' || c == '\'') {
    std::size_t j = begin + 1;
    while (j < text.size() && text[j] != c && text[j] != '\n') j += text[j] == '\\' ? 2 : 1;
    return std::min(j + 1, text.size());
  }
  const auto word = [](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ||
           ch == '-' || ch == '+' || ch == '.' || static_cast<unsigned char>(ch) >= 0x80;
  };
  std::size_t j = begin;
  while (j < text.size() && word(text[j])) ++j;
  return std::max(j, begin + 1);
}

}  // namespace

std::vector<error_span> error_spans(const envelope& e) {
  std::vector<error_span> spans;
  if (!e.raw_response.text || e.raw_response.base64) return spans;
  const std::string_view text = *e.raw_response.text;
  if (const auto& at = e.failure.syntax; at && at->offset <= text.size() && !text.empty()) {
    const std::size_t begin = std::min<std::size_t>(at->offset, text.size() - 1);
    spans.push_back({begin, token_end(text, begin), fmt::format("syntax (line {}, column {}): {}", at->line, at->column,
                                                                 e.failure.message),
                     {}});
  }
  std::vector<detail::pointer_pattern> patterns;
  for (std::size_t i = 0; i < e.failure.errors.size(); ++i) {
    const auto& error = e.failure.errors[i];
    const std::string label = fmt::format("{}: {}", error.instance_path.empty() ? "/" : error.instance_path,
                                          error.message);
    if (error.instance_path.empty()) {
      if (auto whole = document_span(text)) spans.push_back({whole->first, whole->second, label, error.instance_path});
      continue;
    }
    patterns.push_back(detail::compile_pointer_pattern(error.instance_path, static_cast<std::uint32_t>(i)));
  }
  if (!patterns.empty()) {
    detail::json_path_scan scan(text, patterns);
    for (const auto& match : scan.run()) {
      const auto& pattern = patterns[match.pattern];
      const auto& error = e.failure.errors[pattern.label];
      spans.push_back({match.begin, match.end, fmt::format("{}: {}", error.instance_path, error.message),
                       error.instance_path});
    }
  }
  std::stable_sort(spans.begin(), spans.end(), [](const error_span& a, const error_span& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end > b.end;
  });
  return spans;
}

std::string mark_spans(std::string_view text, const std::vector<error_span>& spans, bool colour) {
  // Where each span opens and closes, by offset; spans are numbered from 1 in their order.
  std::multimap<std::size_t, std::size_t> opens, closes;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const std::size_t begin = std::min(spans[i].begin, text.size());
    const std::size_t end = std::clamp(spans[i].end, std::min(begin + 1, text.size()), text.size());
    if (end == begin) continue;  // nothing left of it in the text
    opens.emplace(begin, i + 1);
    closes.emplace(end, i + 1);
  }
  std::string out;
  out.reserve(text.size() + spans.size() * 16);
  int open = 0;
  for (std::size_t at = 0; at <= text.size(); ++at) {
    for (auto [it, last] = closes.equal_range(at); it != last; ++it) {
      --open;
      if (colour) {
        out += reset;
        if (open > 0) out += underline_red;
      } else {
        out += "<<";
      }
    }
    for (auto [it, last] = opens.equal_range(at); it != last; ++it) {
      ++open;
      if (colour) {
        out += fmt::format("{}[{}]{}{}", number_colour, it->second, reset, underline_red);
      } else {
        out += fmt::format(">>[{}]", it->second);
      }
    }
    if (at < text.size()) out += text[at];
  }
  return out;
}

std::string model_text(const model_reference& m) {
  if (m.name.empty() || m.provider.empty()) return m.name;
  return m.provider + "/" + m.name;
}

std::string_view not_counted_because(const attempt_record& a) {
  switch (weight_of(a)) {
    case attempt_weight::local: return "local step";
    case attempt_weight::unanswered: return "no answer";
    case attempt_weight::counted: break;
  }
  return {};
}

attempt_tally tally_attempts(const attempt_summary& attempts) {
  attempt_tally tally;
  for (const auto& a : attempts.history) {
    const auto why = not_counted_because(a);
    ++(why.empty() ? tally.counted : why == "no answer" ? tally.unanswered : tally.local);
  }
  return tally;
}

std::string attempts_text(const attempt_summary& attempts) {
  const auto tally = tally_attempts(attempts);
  std::string out = fmt::format("{} of {} made", tally.counted, detail::counted(attempts.max, "automated attempt"));
  std::vector<std::string> uncounted;
  if (tally.unanswered > 0) {
    uncounted.push_back(detail::counted(tally.unanswered, "call without an answer", "calls without an answer"));
  }
  if (tally.local > 0) uncounted.push_back(detail::counted(tally.local, "local step"));
  if (!uncounted.empty()) out += fmt::format("; not counted: {}", fmt::join(uncounted, ", "));
  return out;
}

boost::json::object record_summary_json(const moderation_record& r, timestamp now) {
  boost::json::object o{{"dlq_id", r.dlq_id}};
  if (!r.readable()) o.emplace("unreadable", r.defect_reason);
  if (r.defect != record_defect::status) o.emplace("status", to_string(r.status));
  o.insert({{"category", r.category},
            {"triage", r.triage},
            {"failure_code", r.failure_code},
            {"created_at", r.created_at},
            {"updated_at", r.updated_at}});
  if (!r.claimed_by.empty()) o.emplace("claimed_by", r.claimed_by);
  if (r.resolution) {
    boost::system::error_code ec;
    auto corrected = boost::json::parse(*r.resolution, ec);
    o.emplace("resolution", ec ? boost::json::value(*r.resolution) : std::move(corrected));
  }
  if (const auto created = parse_rfc3339(r.created_at)) {
    o.emplace("age_seconds", std::chrono::duration_cast<std::chrono::seconds>(now - *created).count());
  }
  return o;
}

}  // namespace llmdlq::cli
