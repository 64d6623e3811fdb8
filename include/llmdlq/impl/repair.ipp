// SPDX-License-Identifier: MIT
// Definitions for repair.hpp: finding the JSON value in the text (fences,
// prose, a string that holds JSON) and choosing among candidates; the
// repair pass itself is detail/repair/repair_engine.hpp.
#pragma once

#include <algorithm>
#include <optional>

#include <boost/json/value.hpp>
#include <simdjson.h>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/json/byte_classes.hpp"
#include "llmdlq/detail/repair/repair_engine.hpp"
#include "llmdlq/detail/json/string_escape.hpp"
#include "llmdlq/detail/json/utf8_check.hpp"
#include "llmdlq/json_parser.hpp"
#include "llmdlq/repair.hpp"

LLMDLQ_BEGIN_NAMESPACE

LLMDLQ_INLINE std::string_view to_string(repair_tier tier) noexcept {
  switch (tier) {
    case repair_tier::lossless: return "lossless";
    case repair_tier::syntactic: return "syntactic";
    case repair_tier::lossy: return "lossy";
    case repair_tier::coercion: return "coercion";
  }
  return "lossless";
}

LLMDLQ_INLINE std::string_view to_string(repair_errc code) noexcept { return detail::errc_name(code); }

LLMDLQ_INLINE boost::json::object to_json(const repair_action& action) {
  boost::json::object out{{"code", action.code}, {"tier", to_string(action.tier)}, {"begin", action.begin},
                          {"end", action.end},   {"before", action.before},        {"after", action.after}};
  if (!action.path.empty()) out.emplace("path", action.path);
  return out;
}

namespace detail {

/// A repaired value and the stretch [begin, end) of the raw text it came from.
struct repair_candidate {
  std::size_t begin = 0;
  std::size_t end = 0;
  bool fenced = false;
  repaired_value value;
  bool strict = false;  ///< taken as it stands, already checked to be strict JSON
};

inline bool is_blank(char c) noexcept { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/// Follows the text from its start to tell whether an offset is inside a
/// JSON string: one that opens inside brackets (a quote in prose around them
/// opens nothing). Offsets are asked in increasing order; linear in all.
class json_string_tracker {
 public:
  explicit json_string_tracker(std::string_view text) noexcept : text_(text) {}

  [[nodiscard]] bool inside_string(std::size_t offset) noexcept {
    for (; at_ < offset && at_ < text_.size(); ++at_) {
      const char c = text_[at_];
      if (in_string_) {
        if (c == '\\') {
          ++at_;
        } else if (c == '"') {
          in_string_ = false;
        }
      } else if (c == '{' || c == '[') {
        ++depth_;
      } else if ((c == '}' || c == ']') && depth_ > 0) {
        --depth_;
      } else if (c == '"' && depth_ > 0) {
        in_string_ = true;
      }
    }
    return in_string_;
  }

 private:
  std::string_view text_;
  std::size_t at_ = 0, depth_ = 0;
  bool in_string_ = false;
};

/// The content of each markdown code fence (```, with or without a language
/// word), trimmed; an unclosed fence runs to the end of the text. A fence
/// inside a JSON string is that string's text, not a fence.
inline std::vector<std::pair<std::size_t, std::size_t>> fenced_blocks(std::string_view text) {
  std::vector<std::pair<std::size_t, std::size_t>> blocks;
  json_string_tracker strings(text);
  std::size_t at = 0;
  while (true) {
    const std::size_t fence = text.find("```", at);
    if (fence == std::string_view::npos) break;
    if (strings.inside_string(fence)) {
      at = fence + 3;
      continue;
    }
    std::size_t content = text.find('\n', fence);
    if (content == std::string_view::npos) break;
    ++content;
    const std::size_t close = text.find("```", content);
    std::size_t b = content, e = close == std::string_view::npos ? text.size() : close;
    while (b < e && is_blank(text[b])) ++b;
    while (e > b && is_blank(text[e - 1])) --e;
    if (b < e) blocks.emplace_back(b, e);
    if (close == std::string_view::npos) break;
    at = close + 3;
  }
  return blocks;
}

/// JSON text escaped as a string's content (`{\"a\":1}`), unescaped up to the
/// first raw quote, with the raw offset of every byte for the actions' spans.
/// A raw quote right after an escaped backslash (`\\"`) is read as the
/// escaped quote it must have been meant as: text escaped once more can
/// never end there.
struct unescaped_text {
  std::string text;
  std::vector<std::size_t> origin;  ///< origin[k]: raw offset of text[k]; one more entry for the end
  bool broken = false;              ///< stopped at an escape that encodes nothing, at origin.back()
};

inline unescaped_text unescape_stringified(std::string_view raw, std::size_t from, std::size_t to) {
  unescaped_text u;
  std::size_t i = from;
  auto put = [&](std::string_view bytes, std::size_t origin) {
    u.text += bytes;
    u.origin.insert(u.origin.end(), bytes.size(), origin);
  };
  bool after_backslash = false;  // the last unit was `\\`
  while (i < to && (raw[i] != '"' || after_backslash)) {
    after_backslash = false;
    if (raw[i] != '\\') {
      put(raw.substr(i, 1), i);
      ++i;
      continue;
    }
    if (i + 1 >= to) break;
    const json_escape escape = read_json_escape(raw.substr(0, to), i);
    if (escape.fault != escape_fault::none) break;
    std::string bytes;
    append_utf8(bytes, escape.code_point);
    put(bytes, i);
    after_backslash = raw[i + 1] == '\\';
    i += escape.width;
  }
  u.broken = i < to && raw[i] == '\\';
  u.origin.push_back(i);
  return u;
}

/// The actions of a value repaired in its unescaped text `text`, as
/// replacements of the raw text: each inner action over the raw bytes its
/// span came from, and each stretch between them that held escapes as one
/// `stringified_json` action (the stretch unescaped). `raw_offset` maps an
/// offset in `text` to the raw offset of the escape or byte it came from.
template <class RawOffset>
std::vector<repair_action> unescaping_actions(std::string_view raw, std::string_view text,
                                              std::vector<repair_action> inner, std::size_t end,
                                              const RawOffset& raw_offset) {
  std::stable_sort(inner.begin(), inner.end(), replays_before);
  // An offset inside the bytes one escape produced (`\u00e9` gives two)
  // moves out to the whole escape.
  const auto splits = [&](std::size_t at) { return at > 0 && at < end && raw_offset(at) == raw_offset(at - 1); };
  std::vector<repair_action> out;
  out.reserve(inner.size() * 2 + 1);
  std::size_t done = 0;  // in text
  const auto unescape_up_to = [&](std::size_t to) {
    const std::size_t b = raw_offset(done), e = raw_offset(to);
    if (e - b > to - done) {  // an escape is shorter than what it stands for
      out.push_back({"stringified_json",
                     repair_tier::syntactic,
                     b,
                     e,
                     std::string(raw.substr(b, e - b)),
                     std::string(text.substr(done, to - done)),
                     {}});
    }
    done = to;
  };
  for (auto& a : inner) {
    std::size_t ub = std::max(a.begin, done), ue = std::max(a.end, ub);
    std::string after;
    while (splits(ub) && ub > done) --ub;
    after.append(text.substr(ub, std::max(a.begin, ub) - ub));
    after += a.after;
    std::size_t tail = ue;
    while (splits(ue)) ++ue;
    after.append(text.substr(tail, ue - tail));
    unescape_up_to(ub);
    a.begin = raw_offset(ub);
    a.end = raw_offset(ue);
    a.before.assign(raw.substr(a.begin, a.end - a.begin));
    a.after = std::move(after);
    out.push_back(std::move(a));
    done = ue;
  }
  unescape_up_to(end);
  return out;
}

/// Repairs the value at `from` in raw[from, to); JSON escaped as string
/// content is unescaped once and repaired again. `plain` keeps the last
/// unescaped string: a value further on in it reuses it, as unescaping it
/// again for each would be quadratic. With `brace_missing`, `from` is the
/// first key of an object whose `{` the text lacks.
inline expected<repair_candidate, repair_failure> repair_at(std::string_view raw, std::size_t from, std::size_t to,
                                                            bool fenced, bool brace_missing,
                                                            const repair_options& options,
                                                            std::optional<unescaped_text>& plain) {
  // A fence's content that is JSON as it stands needs no repair pass (in
  // prose, where the value ends is only known from that pass).
  if (fenced && !brace_missing) {
    parse_options strict;
    strict.max_size = options.max_bytes;
    strict.max_depth = options.max_depth;
    const std::string_view content = raw.substr(from, to - from);
    if (is_strict_json(content, strict)) {
      return repair_candidate{from, to, fenced, repaired_value{std::string(content), {}, {}, content.size(), false},
                              true};
    }
  }
  repair_engine engine(raw.substr(from, to - from), from, options.max_depth);
  auto value = engine.run(0, brace_missing);
  if (value) {
    const std::size_t end = from + value->end;
    return repair_candidate{from, end, fenced, std::move(*value)};
  }
  repair_failure failure = std::move(value.error());
  failure.offset += from;
  if (brace_missing) failure.stringified = false;  // members escaped as a string's content: too far from JSON
  if (!failure.stringified) return unexpected(std::move(failure));

  std::size_t k = 0;  // where `from` is in plain->text
  if (plain && from >= plain->origin.front() && from < plain->origin.back()) {
    k = static_cast<std::size_t>(std::lower_bound(plain->origin.begin(), plain->origin.end(), from) -
                                 plain->origin.begin());
  }
  if (!plain || plain->origin[k] != from) {
    plain = unescape_stringified(raw, from, to);
    k = 0;
  }
  const auto raw_offset = [&](std::size_t at) { return plain->origin[std::min(k + at, plain->origin.size() - 1)]; };
  if (plain->broken) {
    return unexpected(repair_failure{plain->origin.back(), "a string holding JSON with a broken escape", false});
  }
  const std::string_view text = std::string_view(plain->text).substr(k);
  repair_engine inner(text, 0, options.max_depth);
  auto again = inner.run(0);
  if (!again) {
    return unexpected(repair_failure{raw_offset(again.error().offset), again.error().message, false,
                                     again.error().runs_on});
  }
  const std::size_t end = raw_offset(again->end);
  again->actions = unescaping_actions(raw, text, std::move(again->actions), again->end, raw_offset);
  again->tiers.bits |= static_cast<std::uint8_t>(1u << static_cast<unsigned>(repair_tier::syntactic));
  return repair_candidate{from, end, fenced, std::move(*again)};
}

/// Just past the brackets that balance the one at `from` (string-aware), or
/// the end of the text: where to look on once a value there is beyond repair,
/// so that no part of it is taken for the answer. `depth` brackets are open
/// before `from` (one for members whose `{` is missing).
inline std::size_t end_of_bracketed(std::string_view raw, std::size_t from, std::size_t depth = 0) noexcept {
  for (std::size_t i = from; i < raw.size(); ++i) {
    const char c = raw[i];
    if (c == '"') {
      for (++i; i < raw.size() && raw[i] != '"'; ++i) {
        if (raw[i] == '\\') ++i;
      }
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if ((c == '}' || c == ']') && --depth == 0) {
      return i + 1;
    }
  }
  return raw.size();
}

/// Chooses among the values found, keeping no more than it needs (the text
/// may hold many small ones). A complete value the caller accepts wins; two
/// make any choice a guess, even two equal ones (one of them may be an
/// example, or the model may have meant a list, and taking one would drop
/// the other silently). Failing that, a value cut off at the end (a
/// truncation is the more precise failure), else the first complete one.
///
/// A text that begins with a value (lead()) answers with it: a later value
/// the caller accepts makes the answer ambiguous, never replaces it, and the
/// rest are prose. So what follows a value that opens the text cannot save
/// it, which is what lets the stream judge call such an answer dead early.
class candidate_chooser {
 public:
  candidate_chooser(candidate_filter filter, void* context) noexcept : filter_(filter), context_(context) {}

  /// The next candidate offered begins the text, and is the answer.
  void lead() noexcept { leading_ = true; }

  /// Takes a candidate; false once the answer is known to be ambiguous.
  bool offer(repair_candidate c) {
    if (leading_ && !empty()) {
      if (c.value.truncated || !fits(c.value.json)) return true;
      ambiguous_at_ = c.begin;
      return false;
    }
    if (c.value.truncated) {
      if (!truncated_) truncated_ = std::move(c);
      return true;
    }
    // A lone value needs no filter: the caller judges what comes back. The
    // filter runs once a second one turns up.
    if (++complete_ == 1) {
      fitting_ = std::move(c);
      return true;
    }
    if (complete_ == 2 && !fits(fitting_->value.json)) {
      if (!unfit_) unfit_ = std::move(fitting_);
      fitting_.reset();
    }
    if (!fits(c.value.json)) {
      if (!unfit_) unfit_ = std::move(c);
      return true;
    }
    if (fitting_) {
      ambiguous_at_ = c.begin;
      return false;
    }
    if (!fitting_) fitting_ = std::move(c);
    return true;
  }

  [[nodiscard]] std::optional<std::size_t> ambiguous_at() const noexcept { return ambiguous_at_; }
  [[nodiscard]] bool empty() const noexcept { return !fitting_ && !truncated_ && !unfit_; }

  /// The choice; call once.
  [[nodiscard]] repair_candidate take() {
    // A lone complete value beside a cut-off one is judged after all.
    if (fitting_ && complete_ == 1 && truncated_ && !fits(fitting_->value.json)) return std::move(*truncated_);
    if (fitting_) return std::move(*fitting_);
    if (truncated_) return std::move(*truncated_);
    return std::move(*unfit_);
  }

 private:
  bool fits(std::string_view json) const { return !filter_ || filter_(context_, json); }

  candidate_filter filter_;
  void* context_;
  std::size_t complete_ = 0;
  std::optional<repair_candidate> fitting_, truncated_, unfit_;
  std::optional<std::size_t> ambiguous_at_;
  bool leading_ = false;
};

/// Whether the value at `from` in prose is the start of a string's text
/// that never ends (`He said "[1, 2]` and no quote after it): it is part of
/// that string, not a value of its own. A quote in the value would end such
/// a string (`"{"a": 1}`: the first quote is stray), and JSON escaped as a
/// string's content (`"{\"a\": 1}`) says by its escapes what it is.
inline bool opens_unclosed_string(std::string_view raw, std::size_t from) noexcept {
  return from > 0 && raw[from - 1] == '"' && !(from + 1 < raw.size() && raw[from + 1] == '\\') &&
         raw.find('"', from) == std::string_view::npos;
}

/// Whether a JSON key and its colon start at `from` in raw[0, to): a
/// string on one line, then blanks and `:`.
inline bool key_and_colon_at(std::string_view raw, std::size_t from, std::size_t to) noexcept {
  if (from >= to || raw[from] != '"') return false;
  std::size_t k = from + 1;
  for (; k < to && raw[k] != '"' && raw[k] != '\n'; ++k) {
    if (raw[k] == '\\') ++k;
  }
  if (k >= to || raw[k] != '"') return false;
  ++k;
  while (k < to && is_blank(raw[k])) ++k;
  return k < to && raw[k] == ':';
}

/// Whether the text before `at` ends in a JSON key and its colon (`"a": `):
/// a value at `at` is then a member of an object whose `{` is missing. Only
/// a quoted name counts: `Result: {...}` is prose with a colon in it.
inline bool follows_key_and_colon(std::string_view raw, std::size_t at) noexcept {
  while (at > 0 && is_blank(raw[at - 1])) --at;
  if (at == 0 || raw[at - 1] != ':') return false;
  --at;
  while (at > 0 && is_blank(raw[at - 1])) --at;
  return at > 0 && raw[at - 1] == '"';
}

/// Offers every value in the text worth considering: those in fences when
/// any fence holds one, else those in the prose. Each scan starts where the
/// last ended, so the whole search stays linear. A fence or text that starts
/// with a key and colon (`"a": {"b": 2}}`) holds an object whose `{` is
/// missing, and is repaired as one. A text that begins with a value answers
/// with it (candidate_chooser::lead()), unless `leading_answers` is off: no fence is searched, and later
/// values can only make it ambiguous. Returns false when the text must be
/// refused whatever else it holds (first_failure says why): a key and colon
/// in the prose before a value, as where their object begins is unknown,
/// and leaving them out would drop part of it; a value that opens the text
/// and is beyond repair.
inline bool find_candidates(std::string_view raw, const repair_options& options, candidate_chooser& chooser,
                            std::optional<repair_failure>& first_failure, bool leading_answers) {
  std::optional<unescaped_text> plain;
  bool found = false, stop = false;
  auto consider = [&](std::size_t from, std::size_t to, bool fenced, bool brace_missing = false) -> std::size_t {
    auto candidate = repair_at(raw, from, to, fenced, brace_missing, options, plain);
    if (candidate && !fenced && !brace_missing && opens_unclosed_string(raw, from)) {
      // ... as is all the text after it.
      candidate = unexpected(repair_failure{
          from - 1, "the value is the text of a string that a quote before it opens and nothing closes", false, true});
    }
    if (candidate) {
      const std::size_t end = candidate->end;
      found = true;
      stop = !chooser.offer(std::move(*candidate));
      return stop ? raw.size() : end;
    }
    // The scan may have read past the balancing bracket (a quote the count
    // does not know); looking again from before where it failed is quadratic.
    const std::size_t failed_at = candidate.error().offset;
    const bool runs_on = candidate.error().runs_on;
    if (!first_failure) first_failure = std::move(candidate.error());
    return runs_on ? raw.size() : std::max(end_of_bracketed(raw, from, brace_missing ? 1 : 0), failed_at);
  };
  // Every value in the prose from `at` on.
  const auto values_in_prose = [&](std::size_t at) {
    while (at < raw.size()) {
      const std::size_t start = raw.find_first_of("{[", at);
      if (start == std::string_view::npos) break;
      if (follows_key_and_colon(raw, start)) {
        first_failure = repair_failure{raw.rfind(':', start),
                                       "a value follows a property name in the prose: the brace of the object they "
                                       "belong to is missing, and where that object begins is unknown",
                                       false};
        return false;
      }
      at = consider(start, raw.size(), false);
    }
    return true;
  };
  std::size_t lead = raw.starts_with("\xEF\xBB\xBF") ? 3 : 0;
  while (lead < raw.size() && is_blank(raw[lead])) ++lead;
  // A bracket that opens a JSON value (`[Note]` opens prose, whatever repair makes of it).
  std::size_t inside = lead + 1;
  while (inside < raw.size() && is_blank(raw[inside])) ++inside;
  const bool opens_value = lead < raw.size() && (raw[lead] == '{' || raw[lead] == '[') &&
                           (inside == raw.size() || may_follow_bracket(raw[lead], raw[inside]));
  if (leading_answers && opens_value) {
    // The value that opens the text is the answer; one beyond repair is not
    // passed over for another.
    chooser.lead();
    const std::size_t after = consider(lead, raw.size(), false);
    return found && values_in_prose(after);
  }
  for (const auto& [b, e] : fenced_blocks(raw)) {
    if (stop) break;
    if (raw[b] == '{' || raw[b] == '[') {
      consider(b, e, true);
    } else if (key_and_colon_at(raw, b, e)) {
      consider(b, e, true, true);
    }
  }
  if (found) return true;
  plain.reset();  // unescaped up to a fence's end, not the text's
  return values_in_prose(key_and_colon_at(raw, lead, raw.size()) ? consider(lead, raw.size(), false, true) : 0);
}

LLMDLQ_INLINE expected<repair_result, repair_error> find_and_repair(std::string_view raw, const repair_options& options,
                                                                    candidate_filter filter, void* filter_context,
                                                                    repair_tiers* tiers, std::size_t valid_utf8_end,
                                                                    bool leading_answers) {
  detail::count_text_pass(detail::text_pass::repair);
  if (raw.size() > options.max_bytes) {
    return unexpected(repair_error{repair_errc::budget_exceeded, options.max_bytes,
                                   "the response is larger than the repair budget", false});
  }
  if (valid_utf8_end == std::string_view::npos) valid_utf8_end = first_invalid_utf8(raw);
  if (const std::size_t bad = valid_utf8_end; bad < raw.size()) {
    return unexpected(repair_error{repair_errc::invalid_utf8, bad, "the text is not valid UTF-8", false});
  }
  std::optional<repair_failure> failure;
  candidate_chooser chooser(filter, filter_context);
  if (!find_candidates(raw, options, chooser, failure, leading_answers)) {
    return unexpected(repair_error{repair_errc::unrepairable, failure->offset, failure->message, false});
  }
  if (const auto at = chooser.ambiguous_at()) {
    return unexpected(repair_error{repair_errc::ambiguous, *at, "the response holds more than one JSON value", false});
  }
  if (chooser.empty()) {
    if (failure) return unexpected(repair_error{repair_errc::unrepairable, failure->offset, failure->message, false});
    return unexpected(repair_error{repair_errc::no_json, 0, "the response holds no JSON object or array", false});
  }
  repair_candidate c = chooser.take();

  // The safety net under the invariant: what leaves here is strict JSON.
  parse_options strict;
  strict.max_size = std::max<std::size_t>(options.max_bytes, 1);
  strict.max_depth = options.max_depth;
  if (c.value.json.size() > options.max_bytes) {
    return unexpected(repair_error{repair_errc::budget_exceeded, c.begin,
                                   "the repaired value is larger than the repair budget", c.value.truncated});
  }
  if (!c.strict && !is_strict_json(c.value.json, strict)) {
    const auto bad = check_syntax(c.value.json, strict);
    return unexpected(repair_error{repair_errc::unrepairable, c.begin,
                                   "repair could not make JSON of the value: " + (bad ? bad->message : std::string()),
                                   c.value.truncated});
  }

  repair_result result;
  result.truncated = c.value.truncated;
  const std::string_view code = c.fenced ? "markdown_fence" : "prose_around_json";
  // The value's own actions, in replay order already, move over whole;
  // prose around it is rare.
  result.actions = std::move(c.value.actions);
  if (tiers) *tiers = c.value.tiers;
  if (c.begin > 0) {
    const std::string_view before = raw.substr(0, c.begin);
    const bool bom_only = before.starts_with("\xEF\xBB\xBF") &&
                          before.find_first_not_of(" \t\r\n", 3) == std::string_view::npos;
    result.actions.insert(
        result.actions.begin(),
        repair_action{
            bom_only ? "byte_order_mark" : code, repair_tier::lossless, 0, c.begin, std::string(before), "", {}});
    if (tiers) tiers->bits |= static_cast<std::uint8_t>(1u << static_cast<unsigned>(repair_tier::lossless));
  }
  if (c.end < raw.size()) {
    result.actions.push_back({code, repair_tier::lossless, c.end, raw.size(), std::string(raw.substr(c.end)), "", {}});
    if (tiers) tiers->bits |= static_cast<std::uint8_t>(1u << static_cast<unsigned>(repair_tier::lossless));
  }
  result.json = std::move(c.value.json);
  return result;
}

}  // namespace detail

namespace detail {

/// Whether the first bytes of the text already show it is not strict JSON
/// (prose, a quote other than `"`, a bare key or a comment where JSON must
/// have a value or key): such text needs no strict check of all of it.
/// Never true of strict JSON.
inline bool starts_not_json(std::string_view raw) noexcept {
  std::size_t k = 0;
  const auto next = [&]() -> char {
    while (k < raw.size() && is_blank(raw[k])) ++k;
    return k < raw.size() ? raw[k] : '\0';
  };
  const auto may_start_value = [](char c) noexcept {
    return c == '{' || c == '[' || c == '"' || c == '-' || (c >= '0' && c <= '9') || c == 't' || c == 'f' || c == 'n';
  };
  const char first = next();
  if (static_cast<unsigned char>(first) >= 0x80) return false;  // a byte order mark: the strict check decides
  if (!may_start_value(first)) return true;
  if (first != '{' && first != '[') return false;
  ++k;
  const char second = next();
  return first == '{' ? second != '"' && second != '}' : second != ']' && !may_start_value(second);
}

}  // namespace detail

LLMDLQ_INLINE expected<repair_result, repair_error> repair(std::string_view raw, const repair_options& options) {
  if (raw.size() > options.max_bytes) {
    return unexpected(repair_error{repair_errc::budget_exceeded, options.max_bytes,
                                   "the response is larger than the repair budget", false});
  }
  parse_options strict;
  strict.max_size = std::max<std::size_t>(options.max_bytes, 1);
  strict.max_depth = options.max_depth;
  if (!detail::starts_not_json(raw) && is_strict_json(raw, strict)) return repair_result{std::string(raw), {}, false};
  repair_tiers used;
  auto result = detail::find_and_repair(raw, options, nullptr, nullptr, &used);
  if (!result) return result;
  // Most results need no look at each action: every tier used is allowed.
  if ((used.bits & ~options.allowed.bits) == 0) return result;
  for (const auto& a : result->actions) {
    if (options.allowed.allows(a.tier)) continue;
    return unexpected(repair_error{repair_errc::tier_not_allowed, a.begin,
                                   std::string("the value needs a ") + std::string(to_string(a.tier)) + " repair (" +
                                       std::string(a.code) + "), which the options do not allow",
                                   result->truncated});
  }
  return result;
}

LLMDLQ_INLINE std::optional<truncated_value> find_truncated_value(std::string_view raw, const repair_options& limits) {
  // A filter that takes no value makes the chooser prefer a cut-off one.
  const auto none = [](void*, std::string_view) { return false; };
  const auto result = detail::find_and_repair(raw, limits, none, nullptr, nullptr, std::string_view::npos, false);
  if (!result || !result->truncated) return std::nullopt;
  truncated_value cut;
  const auto& first = result->actions.front();
  if (first.begin == 0 &&
      (first.code == "markdown_fence" || first.code == "prose_around_json" || first.code == "byte_order_mark")) {
    cut.begin = first.end;
  }
  for (const auto& a : result->actions) {
    if (a.code != "truncated") continue;
    for (const char c : a.after) {
      if (c == '"' || c == '}' || c == ']') cut.unclosed += c;
    }
  }
  return cut;
}

LLMDLQ_END_NAMESPACE
