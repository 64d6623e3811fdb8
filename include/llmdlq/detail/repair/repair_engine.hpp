// SPDX-License-Identifier: MIT
// The syntax repair pass: one left-to-right scan of a JSON-like value that
// copies what is already JSON and rewrites what is not, reporting each change.
// The nesting lives on an explicit stack, so no input can exhaust the call
// stack, and every byte is looked at a bounded number of times.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/json/byte_classes.hpp"
#include "llmdlq/detail/json/number_grammar.hpp"
#include "llmdlq/detail/json/string_escape.hpp"
#include "llmdlq/detail/json/utf8.hpp"
#include "llmdlq/detail/repair/output_buffer.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/json_parser.hpp"
#include "llmdlq/repair.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

/// Where a repair pass gave up, and why.
struct repair_failure {
  std::size_t offset = 0;   ///< in the scanned text
  std::string message;
  bool stringified = false;  ///< the value is JSON escaped as a string's content: unescape, then scan again
  bool runs_on = false;      ///< the value runs on past where it failed: no later text is a value of its own
};

/// What one pass produced.
struct repaired_value {
  std::string json;
  std::vector<repair_action> actions;  ///< spans in the scanned text, shifted by the pass's base; in replay order
  repair_tiers tiers;                  ///< the tiers of the actions (perhaps more, never fewer)
  std::size_t end = 0;                 ///< just past the value (and any redundant closing brackets)
  bool truncated = false;
};

/// Sets `out` to `text`, or to its start and "..." when it is longer than
/// `limit` bytes (cut between characters).
inline void assign_excerpt(std::string& out, std::string_view text, std::size_t limit) {
  if (text.size() <= limit) {
    out.assign(text.data(), text.size());
    return;
  }
  std::size_t cut = limit > 3 ? limit - 3 : 0;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  out.assign(text.data(), cut);
  out += "...";
}

inline std::string excerpt(std::string_view text, std::size_t limit = 80) {
  std::string out;
  assign_excerpt(out, text, limit);
  return out;
}

/// The order actions replay in: by offset, an insertion before a
/// replacement at the same offset.
inline bool replays_before(const repair_action& a, const repair_action& b) noexcept {
  return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
}

class repair_engine {
 public:
  /// `base` is the offset of `text` in the text the caller reports spans in.
  repair_engine(std::string_view text, std::size_t base, std::size_t max_depth) noexcept
      : in_(text), base_(base), max_depth_(max_depth) {}

  /// Repairs the value starting at `from`, which must be `{` or `[`; or,
  /// with `brace_missing`, the members of an object starting at `from`
  /// (`"a": 1}`) whose opening brace the text lacks.
  LLMDLQ_FLATTEN expected<repaired_value, repair_failure> run(std::size_t from, bool brace_missing = false) {
    i_ = from;
    // Room for the rest of the text up to a few KiB, so that a small value
    // is written without regrowing; not all of it: prose may hold a value
    // every few bytes, and json() gives back room that far exceeds a value.
    out_.reserve(std::min<std::size_t>(in_.size() - std::min(from, in_.size()) + 16, 4096));
    open_out_.reserve(8);
    if (brace_missing) open_missing_brace();
    while (true) {
      if (expect_ != expect::done && may_start_gap(at(i_))) skip_gap();
      if (failed_) return unexpected(std::move(failure_));
      if (i_ >= in_.size()) break;
      if (expect_ == expect::done) {
        if (!after_root()) {
          if (failed_) return unexpected(std::move(failure_));
          break;
        }
        continue;
      }
      step();
      if (failed_) return unexpected(std::move(failure_));
    }
    if (expect_ == expect::done) {
      if (i_ < in_.size()) out_.truncate(root_out_end_);
      return repaired_value{json(), actions(), tiers_, root_in_end_, false};
    }
    close_truncated();
    return repaired_value{json(), actions(), tiers_, in_.size(), true};
  }

 private:
  // What the scan expects next. The `first_` states follow an opening
  // bracket, where a comma is out of place; the plain ones follow a comma.
  enum class expect : std::uint8_t { value, first_value, array_next, first_key, key, colon, member_value, object_next, done };
  enum class quote : std::uint8_t { dq, sq, smart_dq, smart_sq };

  std::string_view in_;
  std::size_t base_;
  std::size_t max_depth_;
  std::size_t i_ = 0;
  output_buffer out_;
  // Actions as noted during the pass: small records, an `after` of up to
  // eight bytes (most are one quote or comma) held in the record, longer
  // ones in one buffer; made repair_actions once at the end, so that a
  // document with many repairs does not move large records around while it
  // grows.
  struct noted_action {
    std::string_view code;
    std::size_t begin, end;
    union {
      char bytes[8];
      std::size_t at;  // in afters_
    } after;
    std::uint32_t after_size;
    repair_tier tier;
  };
  std::vector<noted_action> notes_;
  bool notes_sorted_ = true;  // noted in replay order (all but a few late ones are)
  repair_tiers tiers_;        // of every action noted, even one taken back later
  std::string afters_;
  std::string stack_;  // '{' and '[' still open
  std::vector<std::size_t> open_out_;  // where each of them is in the output
  expect expect_ = expect::value;
  bool failed_ = false;
  repair_failure failure_;
  std::size_t comma_in_ = 0, comma_out_ = 0;  // the last comma written
  bool comma_inserted_ = false;               // ... by a missing_comma repair,
  std::size_t comma_note_ = 0;                // ... noted here
  std::size_t root_in_end_ = 0, root_out_end_ = 0;
  std::size_t token_in_end_ = 0, token_out_end_ = 0;  // just past the last key or value
  std::size_t key_in_ = 0, key_out_ = 0;              // where the last key begins
  std::size_t key_notes_ = 0;                         // ... and how many actions were noted before it
  bool container_done_ = false;                       // the last value done was an array or object
  char root_ = 0;                                     // the root's opening bracket, once closed
  std::size_t root_close_in_ = 0, root_close_out_ = 0;  // ... where it was closed
  bool root_closed_after_container_ = false;          // ... right after a nested array or object
  bool root_was_empty_ = false;                       // ... with nothing in it
  std::size_t root_token_in_ = 0, root_token_out_ = 0;  // ... its last key or value's end

  bool open_string_ = false;                    // the text ended inside a string
  std::size_t cut_ = std::string_view::npos;    // where a token the text ends in begins, when it was dropped
  std::string completion_;                      // the rest of a literal the text ends in

  // ---- helpers -----------------------------------------------------------

  [[nodiscard]] unsigned char at(std::size_t k) const noexcept {
    return k < in_.size() ? static_cast<unsigned char>(in_[k]) : 0;
  }
  [[nodiscard]] bool starts(std::size_t k, std::string_view s) const noexcept {
    return in_.substr(std::min(k, in_.size()), s.size()) == s;
  }

  /// Records that raw [b, e) became `after` in the output.
  void note(std::string_view code, repair_tier tier, std::size_t b, std::size_t e, std::string_view after) {
    if (notes_.empty()) {
      // An action per ten or twenty bytes is common (a quote each side of every string).
      notes_.reserve(std::clamp<std::size_t>(in_.size() / 8, 32, 4096));
    } else if (const noted_action& last = notes_.back(); b < last.begin || (b == last.begin && e < last.end)) {
      notes_sorted_ = false;
    }
    tiers_.bits |= static_cast<std::uint8_t>(1u << static_cast<unsigned>(tier));
    noted_action& n = notes_.emplace_back();
    n.code = code;
    n.begin = b;
    n.end = e;
    n.after_size = static_cast<std::uint32_t>(after.size());
    n.tier = tier;
    if (after.size() <= sizeof n.after.bytes) {
      for (std::size_t k = 0; k < after.size(); ++k) n.after.bytes[k] = after[k];
    } else {
      n.after.at = afters_.size();
      afters_ += after;
    }
  }

  /// The output without most of the buffer's spare room: every candidate in
  /// the prose is kept until one is chosen, and `[]` every two bytes would
  /// each hold hundreds. Room the doubling left (less than the text) stays:
  /// copying the text to shed it costs more than it saves.
  std::string json() {
    std::string text = out_.take();
    if (text.capacity() > 2 * text.size() + 64) text.shrink_to_fit();
    return text;
  }

  /// A stretch of bytes that becomes a std::string in place where a member
  /// is initialised from it (no temporary to move from).
  struct bytes_ref {
    const char* data;
    std::size_t size;
    operator std::string() const { return std::string(data, size); }  // NOLINT: implicit on purpose
  };

  std::vector<repair_action> actions() {
    if (!notes_sorted_) {
      std::stable_sort(notes_.begin(), notes_.end(), [](const noted_action& a, const noted_action& b) {
        return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
      });
    }
    // Each action built in place, once: value-initialising a vector of them
    // first and assigning after zeroes every 136-byte record for nothing.
    std::vector<repair_action> out;
    out.reserve(notes_.size());
    for (const noted_action& n : notes_) {
      out.emplace_back(n.code, n.tier, base_ + n.begin, base_ + n.end, bytes_ref{in_.data() + n.begin, n.end - n.begin},
                       bytes_ref{n.after_size <= sizeof n.after.bytes ? n.after.bytes : afters_.data() + n.after.at,
                                 n.after_size});
    }
    return out;
  }

  void fail(std::size_t offset, std::string message) {
    if (failed_) return;
    failed_ = true;
    failure_ = repair_failure{offset, std::move(message), false};
  }

  [[nodiscard]] static bool is_json_blank(unsigned char c) noexcept {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
  }
  [[nodiscard]] static bool is_word_start(unsigned char c) noexcept {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$';
  }
  [[nodiscard]] static bool is_word_char(unsigned char c) noexcept {
    return is_word_start(c) || (c >= '0' && c <= '9');
  }

  /// Width of the Unicode space (or byte order mark) at `k`, or 0.
  [[nodiscard]] std::size_t unicode_space_at(std::size_t k) const noexcept {
    const unsigned char a = at(k), b = at(k + 1), c = at(k + 2);
    if (a == 0xC2 && b == 0xA0) return 2;                                      // no-break space
    if (a == 0xE2 && b == 0x80 && ((c >= 0x80 && c <= 0x8A) || c == 0xA8 || c == 0xA9 || c == 0xAF)) return 3;
    if (a == 0xE2 && b == 0x81 && c == 0x9F) return 3;                          // medium mathematical space
    if (a == 0xE3 && b == 0x80 && c == 0x80) return 3;                          // ideographic space
    if (a == 0xE1 && b == 0x9A && c == 0x80) return 3;                          // ogham space mark
    if (a == 0xEF && b == 0xBB && c == 0xBF) return 3;                          // byte order mark
    return 0;
  }

  /// The quote that opens a string at `k`, and its width; width 0 if none.
  [[nodiscard]] std::pair<quote, std::size_t> opening_quote_at(std::size_t k) const noexcept {
    const unsigned char c = at(k);
    if (c == '"') return {quote::dq, 1};
    if (c == '\'') return {quote::sq, 1};
    if (c == 0xE2 && at(k + 1) == 0x80) {
      const unsigned char d = at(k + 2);
      if (d == 0x9C || d == 0x9D) return {quote::smart_dq, 3};
      if (d == 0x98 || d == 0x99) return {quote::smart_sq, 3};
    }
    return {quote::dq, 0};
  }

  /// Width of `...` or `…` at `k`, or 0.
  [[nodiscard]] std::size_t ellipsis_at(std::size_t k) const noexcept {
    if (at(k) != '.' && at(k) != 0xE2) return 0;
    if (starts(k, "...")) return 3;
    if (at(k) == 0xE2 && at(k + 1) == 0x80 && at(k + 2) == 0xA6) return 3;
    return 0;
  }

  [[nodiscard]] bool value_starts_at(std::size_t k) const noexcept {
    const unsigned char c = at(k);
    return c == '{' || c == '[' || c == '-' || is_ascii_digit(c) || is_word_start(c) || opening_quote_at(k).second != 0;
  }

  // ---- whitespace and comments ---------------------------------------------

  /// Whether skip_gap() has anything to do at a byte: most tokens follow
  /// the last one directly.
  [[nodiscard]] static bool may_start_gap(unsigned char c) noexcept {
    return c <= ' ' || c == '/' || c == '#' || c >= 0x80;
  }

  /// The first byte at or after `k` that is not a space, eight at a time.
  [[nodiscard]] std::size_t space_run_end(std::size_t k) const noexcept {
    if constexpr (std::endian::native == std::endian::little) {
      while (k + 8 <= in_.size()) {
        std::uint64_t w;
        std::memcpy(&w, in_.data() + k, sizeof w);
        if (const std::uint64_t other = w ^ 0x2020202020202020ull) return k + static_cast<std::size_t>(std::countr_zero(other) >> 3);
        k += 8;
      }
    }
    while (k < in_.size() && at(k) == ' ') ++k;
    return k;
  }

  /// Copies JSON whitespace; removes comments; turns Unicode spaces into
  /// plain ones.
  void skip_gap() {
    while (i_ < in_.size()) {
      const unsigned char c = at(i_);
      if (is_json_blank(c)) {
        std::size_t k = i_ + 1;
        k = space_run_end(k);  // indentation, most of what a gap holds
        while (k < in_.size() && is_json_blank(at(k))) ++k;
        out_.append(in_.data() + i_, k - i_);
        i_ = k;
      } else if (c == '/' && (at(i_ + 1) == '/' || at(i_ + 1) == '*')) {
        const bool block = at(i_ + 1) == '*';
        const std::size_t close = block ? in_.find("*/", i_ + 2) : in_.find('\n', i_ + 2);
        const std::size_t end = close == std::string_view::npos ? in_.size() : block ? close + 2 : close;
        note("comment", repair_tier::syntactic, i_, end, "");
        i_ = end;
      } else if (c == '#') {
        const std::size_t close = in_.find('\n', i_ + 1);
        const std::size_t end = close == std::string_view::npos ? in_.size() : close;
        note("comment", repair_tier::syntactic, i_, end, "");
        i_ = end;
      } else if (const std::size_t w = unicode_space_at(i_)) {
        const bool bom = at(i_) == 0xEF;
        note(bom ? "byte_order_mark" : "unicode_whitespace", repair_tier::lossless, i_, i_ + w, bom ? "" : " ");
        if (!bom) out_ += ' ';
        i_ += w;
      } else {
        return;
      }
    }
  }

  // ---- structure -------------------------------------------------------------

  void step() {
    const unsigned char c = at(i_);
    switch (expect_) {
      case expect::value:
      case expect::first_value:
      case expect::member_value:
        if (c == ']' || c == '}') return close_bracket(c);
        if (c == ',') {
          if (expect_ == expect::member_value || stack_.empty()) return fail(i_, "a comma where a value belongs");
          note(expect_ == expect::first_value ? "leading_comma" : "redundant_comma", repair_tier::syntactic, i_,
               i_ + 1, "");
          ++i_;
          return;
        }
        if (const std::size_t w = ellipsis_at(i_); w && !stack_.empty() && expect_ != expect::member_value) {
          note("ellipsis", repair_tier::lossy, i_, i_ + w, "");
          i_ += w;
          return;
        }
        return read_value();
      case expect::first_key:
      case expect::key:
        if (c == '}' || c == ']') return close_bracket(c);
        if (c == ',') {
          note(expect_ == expect::first_key ? "leading_comma" : "redundant_comma", repair_tier::syntactic, i_,
               i_ + 1, "");
          ++i_;
          return;
        }
        if (const std::size_t w = ellipsis_at(i_)) {
          note("ellipsis", repair_tier::lossy, i_, i_ + w, "");
          i_ += w;
          return;
        }
        return read_key();
      case expect::colon:
        if (c == ':') {
          out_ += ':';
          ++i_;
          expect_ = expect::member_value;
          return;
        }
        if (value_starts_at(i_)) {
          insert_after_token("missing_colon", ':');
          expect_ = expect::member_value;
          return;
        }
        return fail(i_, "expected ':' after the property name");
      case expect::array_next:
      case expect::object_next:
        if (c == ',') {
          comma_in_ = i_;
          comma_out_ = out_.size();
          comma_inserted_ = false;
          out_ += ',';
          ++i_;
          expect_ = expect_ == expect::array_next ? expect::value : expect::key;
          return;
        }
        if (c == ']' || c == '}') return close_bracket(c);
        if (const std::size_t w = ellipsis_at(i_)) {
          note("ellipsis", repair_tier::lossy, i_, i_ + w, "");
          i_ += w;
          return;
        }
        if (at(i_) == '\\' && at(i_ + 1) == '"') return stringified();
        if (value_starts_at(i_)) {
          insert_after_token("missing_comma", ',');
          comma_in_ = token_in_end_;
          comma_out_ = token_out_end_;
          comma_inserted_ = true;
          comma_note_ = notes_.size() - 1;
          expect_ = expect_ == expect::array_next ? expect::value : expect::key;
          return;
        }
        return fail(i_, expect_ == expect::array_next ? "expected ',' or ']' after an array element"
                                                     : "expected ',' or '}' after an object member");
      case expect::done: return;
    }
  }

  void open_bracket(char c) {
    if (stack_.size() >= max_depth_) return fail(i_, "nested deeper than the depth limit");
    stack_ += c;
    open_out_.push_back(out_.size());
    out_ += c;
    ++i_;
    expect_ = c == '{' ? expect::first_key : expect::first_value;
  }

  /// The text starts with an object's first key: its `{` is inserted. Only
  /// the brace is added, where the members begin: nothing is guessed.
  void open_missing_brace() {
    if (max_depth_ == 0) return fail(i_, "nested deeper than the depth limit");
    note("missing_opening_brace", repair_tier::syntactic, i_, i_, "{");
    stack_ += '{';
    open_out_.push_back(out_.size());
    out_ += '{';
    expect_ = expect::first_key;
  }

  void close_bracket(unsigned char c) {
    const char opener = c == '}' ? '{' : '[';
    if (stack_.empty()) return fail(i_, "a closing bracket with nothing open");
    if (stack_.back() != opener) {
      // A missing closing bracket: `{"a": [1, 2}`. Closing what is open up to
      // the bracket that matches invents structure, so it is lossy.
      const auto match = stack_.find_last_of(opener);
      if (match == std::string::npos) {
        // `[{"a": 1}}, {"b": 2}]`: a bracket that closes nothing open goes.
        note("redundant_bracket", repair_tier::syntactic, i_, i_ + 1, "");
        ++i_;
        return;
      }
      if (expect_ == expect::member_value) return fail(i_, "a property without a value");
      std::string closing;
      drop_dangling_comma();
      while (stack_.size() > match + 1) {
        closing += stack_.back() == '{' ? '}' : ']';
        stack_.pop_back();
        open_out_.pop_back();
      }
      note("missing_bracket", repair_tier::lossy, i_, i_, closing);
      out_ += closing;
      expect_ = opener == '{' ? expect::object_next : expect::array_next;
    }
    if (expect_ == expect::member_value) return fail(i_, "a property without a value");
    if (expect_ == expect::value || expect_ == expect::key) {
      // `[1, 2,]`: the comma written last is out of place.
      drop_last_comma();
    }
    stack_.pop_back();
    open_out_.pop_back();
    if (stack_.empty()) {
      root_ = opener;
      root_close_in_ = i_;
      root_close_out_ = out_.size();
      root_closed_after_container_ = container_done_;
      root_was_empty_ = expect_ == expect::first_key || expect_ == expect::first_value;
      root_token_in_ = token_in_end_;
      root_token_out_ = token_out_end_;
    }
    out_ += static_cast<char>(c);
    ++i_;
    value_done(true);
  }

  /// Takes back the comma written last, which nothing follows: one in the
  /// text is a trailing comma; one repair inserted is no longer reported.
  void drop_last_comma() {
    out_.erase(comma_out_);
    if (comma_inserted_) {
      notes_.erase(notes_.begin() + static_cast<std::ptrdiff_t>(comma_note_));
    } else {
      note("trailing_comma", repair_tier::syntactic, comma_in_, comma_in_ + 1, "");
    }
  }

  void drop_dangling_comma() {
    if (expect_ == expect::value || expect_ == expect::key) {
      drop_last_comma();
      expect_ = expect_ == expect::value ? expect::array_next : expect::object_next;
    }
  }

  /// Puts a missing `,` or `:` right after the last key or value, before
  /// the blanks that follow it (only those lie between: comments went).
  void insert_after_token(std::string_view code, char c) {
    note(code, repair_tier::syntactic, token_in_end_, token_in_end_, std::string_view(&c, 1));
    out_.insert(token_out_end_, c);
  }

  void token_done() noexcept {
    token_in_end_ = i_;
    token_out_end_ = out_.size();
  }

  void value_done(bool container = false) {
    token_done();
    container_done_ = container;
    if (stack_.empty()) {
      expect_ = expect::done;
      root_in_end_ = i_;
      root_out_end_ = out_.size();
      return;
    }
    expect_ = stack_.back() == '[' ? expect::array_next : expect::object_next;
  }

  /// After the root value: redundant closing brackets go; anything else
  /// ends the value. Returns whether to keep scanning.
  bool after_root() {
    std::size_t k = i_;
    while (k < in_.size() && is_json_blank(at(k))) ++k;
    if (k < in_.size() && (at(k) == '}' || at(k) == ']')) {
      out_.append(in_.data() + i_, k - i_);
      note("redundant_bracket", repair_tier::syntactic, k, k + 1, "");
      i_ = root_in_end_ = k + 1;
      root_out_end_ = out_.size();
      return true;
    }
    if (k == in_.size()) {
      out_.append(in_.data() + i_, k - i_);
      i_ = k;
      root_in_end_ = k;
      return false;
    }
    if (root_ && continues_root(k)) {
      // `{"a": 1}, "b": 2}`: the root was closed too early. Reopened, the
      // rest is read as its own; where the early bracket closed more than
      // one value, which of them the rest belongs to is a guess.
      if (root_closed_after_container_) {
        fail(root_close_in_, "a bracket closes the value early, and what follows it would continue it");
        failure_.runs_on = true;
        return false;
      }
      note("redundant_bracket", repair_tier::syntactic, root_close_in_, root_close_in_ + 1, "");
      out_.erase(root_close_out_);
      stack_ += root_;
      open_out_.push_back(0);  // the root's bracket begins the output
      root_ = 0;
      token_in_end_ = root_token_in_;  // a missing comma goes after the last member, as before the bracket
      token_out_end_ = root_token_out_;
      if (root_was_empty_) {
        expect_ = stack_.back() == '[' ? expect::first_value : expect::first_key;
      } else {
        expect_ = stack_.back() == '[' ? expect::array_next : expect::object_next;
      }
      return true;
    }
    return false;
  }

  /// Whether the text at `k`, after a closed root, would continue it: for
  /// an object, a comma (or nothing) and then a key and a colon, or a comma,
  /// a quoted key and a value its colon is missing before (`, "b" "c"`, as
  /// read_string takes it inside an object); for an array, a comma and a
  /// number or string. Anything else ends the value, and prose may follow.
  [[nodiscard]] bool continues_root(std::size_t k) const noexcept {
    const bool comma = at(k) == ',';
    if (comma) {
      ++k;
      while (k < in_.size() && is_json_blank(at(k))) ++k;
    }
    if (root_ == '[') return comma && (is_ascii_digit(at(k)) || at(k) == '-' || at(k) == '"');
    std::size_t end = k;
    if (at(k) == '"') {
      for (end = k + 1; end < in_.size() && at(end) != '"' && at(end) != '\n'; ++end) {
        if (at(end) == '\\') ++end;
      }
      if (at(end) != '"') return false;
      ++end;
    } else if (comma && is_word_start(at(k))) {
      end = word_end(k);
    } else {
      return false;
    }
    const unsigned char next = next_significant(end);
    if (next == ':') return true;
    const bool quoted_key = at(k) == '"';
    return comma && quoted_key && next != ',' && next != '}' && next != ']' && next != '/' && next != '#' &&
           next != 0 && ends_string(end, true, false);
  }

  void read_value() {
    const unsigned char c = at(i_);
    if (c == '{' || c == '[') return open_bracket(static_cast<char>(c));
    if (const auto [q, w] = opening_quote_at(i_); w) return read_string(q, w, false);
    if (c == '-' || c == '+' || c == '.' || is_ascii_digit(c)) return read_number();
    if (is_word_start(c)) return read_word();
    if (c == '\\' && at(i_ + 1) == '"') return stringified();
    fail(i_, "unexpected character where a value belongs");
  }

  void stringified() {
    fail(i_, "the value is JSON written as the content of a string");
    failure_.stringified = true;
  }

  void read_key() {
    key_in_ = i_;
    key_out_ = out_.size();
    key_notes_ = notes_.size();
    const unsigned char c = at(i_);
    if (const auto [q, w] = opening_quote_at(i_); w) return read_string(q, w, true);
    if (c == '\\' && at(i_ + 1) == '"') return stringified();
    if (is_word_char(c)) {
      const std::size_t k = word_end(i_);
      if (at(k) == '"' && next_significant(k + 1) == ':') {
        // `{a": 1}`: only the opening quote is missing.
        note("missing_quote", repair_tier::syntactic, i_, i_, "\"");
        out_ += '"';
        out_.append(in_.data() + i_, k + 1 - i_);
        i_ = k + 1;
        token_done();
        expect_ = expect::colon;
        return;
      }
      const std::size_t out_at = out_.size();
      out_ += '"';
      out_.append(in_.data() + i_, k - i_);
      out_ += '"';
      note("unquoted_key", repair_tier::syntactic, i_, k, out_.view(out_at));
      i_ = k;
      token_done();
      expect_ = expect::colon;
      return;
    }
    fail(i_, "expected a property name");
  }

  // ---- strings ---------------------------------------------------------------

  /// Just past the word at `k` (letters, digits, `_`, `$`, `-`).
  [[nodiscard]] std::size_t word_end(std::size_t k) const noexcept {
    while (k < in_.size() && (is_word_char(at(k)) || at(k) == '-')) ++k;
    return k;
  }

  /// Whether a quote just before `k` ends the string: what follows it is
  /// what follows a value. After blanks, the start of a value that is not a
  /// word counts too (a comma or colon is missing), while `"say "hi" now"`
  /// keeps its inner quotes. So does, after a member's value, a word and a
  /// colon (`"Utrecht"⏎ zip: "3511"`: a comma and the key's quotes are
  /// missing), and after a key, a literal (`"a" true`: a colon is missing).
  [[nodiscard]] bool ends_string(std::size_t k, bool key, bool member_value) const noexcept {
    const std::size_t start = k;
    while (k < in_.size() && is_json_blank(at(k))) ++k;
    if (k == in_.size()) return true;
    const unsigned char c = at(k);
    if (c == ',' || c == '}' || c == ']' || c == ':') return true;
    if ((c == '/' && (at(k + 1) == '/' || at(k + 1) == '*')) || c == '#') return true;
    if (k == start) return false;
    if (is_word_start(c) && (key || member_value)) {
      const std::size_t end = word_end(k);
      if (member_value) return next_significant(end) == ':';
      const std::string_view word = in_.substr(k, end - k);
      const unsigned char after = next_significant(end);
      return (word == "true" || word == "false" || word == "null" || word == "True" || word == "False" ||
              word == "None") &&
             (after == ',' || after == '}' || after == 0);
    }
    if (c == '-' || is_ascii_digit(c)) {
      // A number only when one ends there: `"Old Amsterdam" 500g"` is text.
      while (k < in_.size() &&
             (is_ascii_digit(at(k)) || at(k) == '.' || at(k) == '-' || at(k) == '+' || at(k) == 'e' || at(k) == 'E')) {
        ++k;
      }
      while (k < in_.size() && is_json_blank(at(k))) ++k;
      return k == in_.size() || at(k) == ',' || at(k) == '}' || at(k) == ']';
    }
    return c == '{' || c == '[' || opening_quote_at(k).second != 0;
  }

  /// Whether `k` holds the quote that closes a string opened with `q`.
  [[nodiscard]] std::size_t closing_quote_at(std::size_t k, quote q) const noexcept {
    switch (q) {
      case quote::dq: return at(k) == '"' ? 1 : 0;
      case quote::sq: return at(k) == '\'' ? 1 : 0;
      case quote::smart_dq:
        return at(k) == 0xE2 && at(k + 1) == 0x80 && (at(k + 2) == 0x9D || at(k + 2) == 0x9C) ? 3 : 0;
      case quote::smart_sq: return at(k) == 0xE2 && at(k + 1) == 0x80 && at(k + 2) == 0x99 ? 3 : 0;
    }
    return 0;
  }

  /// Whether a byte inside a string opened with `q` needs a look: controls,
  /// backslash and double quote; in other quotes also the apostrophe and the
  /// lead byte of a smart quote.
  [[nodiscard]] static bool is_special(unsigned char c, quote q) noexcept {
    return c < 0x20 || c == '"' || c == '\\' || (q != quote::dq && (c == '\'' || c == 0xE2));
  }

  /// The first byte at or after `k` that needs a look, eight bytes at a time:
  /// in a word, the lowest byte flagged by these bit tricks is always a true
  /// match (a borrow only runs towards higher bytes).
  [[nodiscard]] std::size_t plain_run_end(std::size_t k, quote q) const noexcept {
    constexpr std::uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    const auto zero_bytes = [](std::uint64_t x) { return (x - ones) & ~x & highs; };
    if constexpr (std::endian::native == std::endian::little) {
      while (k + 8 <= in_.size()) {
        std::uint64_t w;
        std::memcpy(&w, in_.data() + k, sizeof w);
        std::uint64_t m = zero_bytes(w ^ (ones * '"')) | zero_bytes(w ^ (ones * '\\')) | ((w - ones * 0x20) & ~w & highs);
        if (q != quote::dq) m |= zero_bytes(w ^ (ones * '\'')) | zero_bytes(w ^ (ones * 0xE2));
        if (m) return k + static_cast<std::size_t>(std::countr_zero(m) >> 3);
        k += 8;
      }
    }
    while (k < in_.size() && !is_special(at(k), q)) ++k;
    return k;
  }

  /// The first byte at or after `k` that is not a blank (0 at the end).
  [[nodiscard]] unsigned char next_significant(std::size_t k) const noexcept {
    while (k < in_.size() && is_json_blank(at(k))) ++k;
    return at(k);
  }

  /// `"a" + "b"`: the width up to and including the next opening quote, or 0.
  [[nodiscard]] std::pair<std::size_t, quote> concatenation_at(std::size_t k) const noexcept {
    std::size_t j = k;
    while (j < in_.size() && is_json_blank(at(j))) ++j;
    if (at(j) != '+') return {0, quote::dq};
    ++j;
    while (j < in_.size() && is_json_blank(at(j))) ++j;
    const auto [q, w] = opening_quote_at(j);
    if (!w) return {0, quote::dq};
    return {j + w - k, q};
  }

  [[nodiscard]] static std::string_view requote_code(quote q) noexcept {
    // Views of literals, not a pointer chosen at run time (which strlen would measure).
    return q == quote::sq ? std::string_view("single_quotes") : std::string_view("smart_quotes");
  }

  /// Reads a string, writing it in double quotes. A string quoted otherwise
  /// gets an action for each quote that changes (its own, and each `"`
  /// inside that now needs a backslash), so every action stays a small,
  /// exact replacement.
  void read_string(quote q, std::size_t width, bool key) {
    const std::size_t open = i_;
    if (q != quote::dq) note(requote_code(q), repair_tier::syntactic, i_, i_ + width, "\"");
    i_ += width;
    out_ += '"';
    // `"Albert Heijn, "total": 4.2`: the closing quote is missing before a
    // comma, and the quote after it opens the next key. An inner quote after
    // `, ` is remembered; if the string then ends just before a colon, it
    // ends at that comma instead.
    const bool member_value = !key && expect_ == expect::member_value;
    std::size_t split_in = std::string_view::npos, split_out = 0, split_notes = 0;
    while (true) {
      const std::size_t k = plain_run_end(i_, q);
      out_.append(in_.data() + i_, k - i_);
      i_ = k;
      if (i_ >= in_.size()) {
        open_string_ = true;
        break;
      }
      const unsigned char c = at(i_);
      if (const std::size_t w = closing_quote_at(i_, q)) {
        // The common case first: what follows a value follows at once.
        const unsigned char next = at(i_ + w);
        const bool ends_at_once = next == ',' || next == ':' || next == '}' || next == ']';
        if (!ends_at_once) {
          if (const auto [skip, following] = concatenation_at(i_ + w); skip) {
            note("string_concatenation", repair_tier::syntactic, i_, i_ + w + skip, "");
            i_ += w + skip;
            q = following;
            continue;
          }
        }
        if (ends_at_once || ends_string(i_ + w, key, member_value)) {
          if (split_in != std::string_view::npos && next_significant(i_ + w) == ':') {
            out_.truncate(split_out);
            notes_.resize(split_notes);
            i_ = split_in;
            note("missing_quote", repair_tier::syntactic, split_in, split_in, "\"");
            break;
          }
          if (q != quote::dq) note(requote_code(q), repair_tier::syntactic, i_, i_ + w, "\"");
          i_ += w;
          break;
        }
        if (q == quote::dq) {
          if (member_value) {
            std::size_t b = i_;
            while (b > open + 1 && at(b - 1) == ' ') --b;
            if (b > open + 1 && at(b - 1) == ',') {
              split_in = b - 1;
              split_out = out_.size() - (i_ - split_in);
              split_notes = notes_.size();
            }
          }
          note("unescaped_quote", repair_tier::syntactic, i_, i_ + 1, "\\\"");
          out_ += "\\\"";
        } else {
          out_.append(in_.data() + i_, w);  // an apostrophe inside the text
        }
        i_ += w;
      } else if (c == '"') {  // a double quote inside a string quoted otherwise
        note(requote_code(q), repair_tier::syntactic, i_, i_ + 1, "\\\"");
        out_ += "\\\"";
        ++i_;
      } else if (c == '\\') {
        read_escape(q);
        if (open_string_) break;
      } else if (c < 0x20) {
        const std::size_t run = i_, out_run = out_.size();
        for (; i_ < in_.size() && at(i_) < 0x20; ++i_) append_control(at(i_));
        note("control_character", repair_tier::syntactic, run, i_, out_.view(out_run));
      } else {
        out_ += static_cast<char>(c);  // an apostrophe, or a lead byte that is not a closing quote
        ++i_;
      }
    }
    if (open_string_) return;  // the truncation closes it
    out_ += '"';
    if (key) {
      token_done();
      expect_ = expect::colon;
    } else {
      value_done();
    }
  }

  void append_control(unsigned char c) {
    switch (c) {
      case '\n': out_ += "\\n"; return;
      case '\r': out_ += "\\r"; return;
      case '\t': out_ += "\\t"; return;
      case '\b': out_ += "\\b"; return;
      case '\f': out_ += "\\f"; return;
      default: {
        static constexpr char hex[] = "0123456789abcdef";
        out_ += "\\u00";
        out_ += hex[c >> 4];
        out_ += hex[c & 0xF];
      }
    }
  }

  /// The text ends inside the escape at i_: the string is cut before it.
  void cut_inside_escape() noexcept {
    cut_ = i_;
    i_ = in_.size();
    open_string_ = true;
  }

  void read_escape(quote q) {
    const json_escape escape = read_json_escape(in_, i_);
    if (escape.fault == escape_fault::truncated) return cut_inside_escape();
    if (escape.fault == escape_fault::none) {
      out_.append(in_.data() + i_, escape.width);
      i_ += escape.width;
      return;
    }
    if (escape.fault == escape_fault::lone_surrogate) {
      // Half a surrogate pair encodes no character.
      note("lone_surrogate", repair_tier::lossy, i_, i_ + 6, "\\ufffd");
      out_ += "\\ufffd";
      i_ += 6;
      return;
    }
    const unsigned char d = at(i_ + 1);
    if (d == '\'') {
      note(q == quote::sq ? requote_code(q) : "invalid_escape", repair_tier::syntactic, i_, i_ + 2, "'");
      out_ += '\'';
      i_ += 2;
      return;
    }
    if (d == 'u') {
      note("invalid_escape", repair_tier::syntactic, i_, i_ + 2, "\\\\u");
      out_ += "\\\\u";
      i_ += 2;
      return;
    }
    if (d == 'x') {
      const int high = hex_value(at(i_ + 2)), low = hex_value(at(i_ + 3));
      if (high >= 0 && low >= 0) return read_hex_escape(static_cast<unsigned char>(high * 16 + low));
      if (i_ + 2 + (high >= 0) >= in_.size()) return cut_inside_escape();
    }
    // `\a`, `\` before a newline...: the backslash was meant literally.
    note("invalid_escape", repair_tier::syntactic, i_, i_ + 1, "\\\\");
    out_ += "\\\\";
    ++i_;
  }

  /// `\xHH`, as in Python and JavaScript: the code point U+00HH.
  void read_hex_escape(unsigned char code) {
    char buf[6];
    std::size_t n = 0;
    if (code < 0x20 || code == '"' || code == '\\') {
      static constexpr char hex[] = "0123456789abcdef";
      for (const char c : {'\\', 'u', '0', '0', hex[code >> 4], hex[code & 0xF]}) buf[n++] = c;
    } else if (code < 0x80) {
      buf[n++] = static_cast<char>(code);
    } else {
      buf[n++] = static_cast<char>(0xC0 | (code >> 6));
      buf[n++] = static_cast<char>(0x80 | (code & 0x3F));
    }
    const std::string_view bytes(buf, n);
    note("invalid_escape", repair_tier::syntactic, i_, i_ + 4, bytes);
    out_ += bytes;
    i_ += 4;
  }

  // ---- numbers and words -----------------------------------------------------

  void read_number() {
    const std::size_t start = i_;
    const std::size_t out_start = out_.size();
    if ((at(i_) == '+' || at(i_) == '-') && is_word_start(at(i_ + 1))) {  // -Infinity
      ++i_;
      return read_word_from(start);
    }
    // The grammar's faults are read here: the lenient ones rewritten, a cut
    // number dropped, the rest failed.
    const number_scan n = scan_number<number_reading::lenient>(in_.substr(start));
    const std::size_t integer = start + n.integer;
    const std::size_t integer_end = start + n.integer_end;
    const std::size_t fraction_end = start + n.fraction_end;
    const std::size_t end = start + n.end;
    bool rewritten = at(start) == '+';
    if (n.negative) out_ += '-';
    if (n.integer_digits() > 1 && at(integer) == '0') return fail(integer, "a number with a leading zero");
    if (n.integer_digits() == 0) {
      if (n.fraction_digits != 0) {
        out_ += '0';  // .5
        rewritten = true;
      } else if (integer_end >= in_.size()) {
        return drop_cut_number(start, out_start);
      } else {
        return fail(start, "a number without digits");
      }
    }
    out_.append(in_.data() + integer, n.integer_digits());
    if (n.dot && n.fraction_digits == 0) {
      if (fraction_end >= in_.size()) return drop_cut_number(start, out_start);
      out_ += ".0";  // 2.
      rewritten = true;
    } else {
      out_.append(in_.data() + integer_end, fraction_end - integer_end);
    }
    if (n.e && n.exponent_digits() == 0) {
      if (end >= in_.size()) return drop_cut_number(start, out_start);
      return fail(fraction_end, "an exponent without digits");
    }
    out_.append(in_.data() + fraction_end, end - fraction_end);
    i_ = end;
    if (is_word_char(at(i_)) || at(i_) == '.') return fail(i_, "unexpected character after a number");
    if (i_ >= in_.size() && !stack_.empty()) {
      // The text may have been cut in the middle of this number.
      return drop_cut_number(start, out_start);
    }
    if ((n.e || n.integer_digits() > 18) && check_syntax(out_.view(out_start))) {
      return fail(start, "the number is beyond the range of a double or a 64-bit integer");
    }
    if (rewritten) {
      note("number_lexeme", repair_tier::syntactic, start, i_, out_.view(out_start));
    }
    value_done();
  }

  /// A number the text ends in may be missing digits: it is dropped, and
  /// the truncation closes what holds it.
  void drop_cut_number(std::size_t start, std::size_t out_start) {
    out_.truncate(out_start);
    cut_ = start;
    i_ = in_.size();
  }

  void read_word() { read_word_from(i_); }

  void read_word_from(std::size_t start) {
    std::size_t k = i_;
    while (is_word_char(at(k))) ++k;
    const std::string_view word = in_.substr(i_, k - i_);
    const bool negative = start < i_;
    auto replace = [&](std::string_view code, repair_tier tier, std::string_view json) {
      note(code, tier, start, k, json);
      out_ += json;
      i_ = k;
      value_done();
    };
    if (!negative && (word == "true" || word == "false" || word == "null")) {
      out_ += word;
      i_ = k;
      return value_done();
    }
    if (!negative) {
      if (word == "True") return replace("python_literal", repair_tier::syntactic, "true");
      if (word == "False") return replace("python_literal", repair_tier::syntactic, "false");
      if (word == "None") return replace("python_literal", repair_tier::syntactic, "null");
      if (word == "undefined") return replace("undefined_literal", repair_tier::syntactic, "null");
      if (word == "NaN") return replace("non_finite_number", repair_tier::lossy, "null");
    }
    if (word == "Infinity" || word == "inf") return replace("non_finite_number", repair_tier::lossy, "null");
    if (k >= in_.size() && !negative) {
      // Cut off inside a literal: `tr`.
      for (std::string_view literal : {"true", "false", "null"}) {
        if (literal.starts_with(word)) {
          out_ += word;
          completion_ = literal.substr(word.size());
          i_ = k;
          return value_done();
        }
      }
    }
    // One word standing where a value ends (`"unit": kg,`) is taken for a
    // string: a guess at the type, so lossy. Prose, words followed by more
    // words, is never made a string.
    std::size_t next = k;
    while (next < in_.size() && is_json_blank(at(next))) ++next;
    if (!negative && !stack_.empty() &&
        (next == in_.size() || at(next) == ',' || at(next) == '}' || at(next) == ']')) {
      std::string quoted;
      quoted.reserve(word.size() + 2);
      quoted += '"';
      quoted += word;
      quoted += '"';
      return replace("bare_word", repair_tier::lossy, quoted);
    }
    fail(start, "a bare word is not a JSON value");
  }

  // ---- the end of the text ---------------------------------------------------

  /// Whether the key the text ends at (written from key_out_ on, perhaps
  /// without its closing quote) is already a key of the object it is in.
  /// One pass over that object's output, which is JSON.
  [[nodiscard]] bool repeats_earlier_key() const {
    if (open_out_.empty() || stack_.back() != '{') return false;
    const std::string_view text = out_.view();
    std::size_t key_end = key_out_ + 1;
    while (key_end < text.size() && text[key_end] != '"') key_end += text[key_end] == '\\' ? 2 : 1;
    const std::string_view key = text.substr(key_out_ + 1, std::min(key_end, text.size()) - key_out_ - 1);
    std::size_t depth = 0;
    for (std::size_t k = open_out_.back(); k < key_out_; ++k) {
      const char c = text[k];
      if (c == '{' || c == '[') {
        ++depth;
      } else if (c == '}' || c == ']') {
        --depth;
      } else if (c == '"') {
        std::size_t end = k + 1;
        while (end < key_out_ && text[end] != '"') end += text[end] == '\\' ? 2 : 1;
        if (depth == 1 && text.substr(k + 1, end - k - 1) == key) {
          std::size_t after = end + 1;
          while (after < key_out_ && is_json_blank(static_cast<unsigned char>(text[after]))) ++after;
          if (after < key_out_ && text[after] == ':') return true;
        }
        k = end;
      }
    }
    return false;
  }

  /// Closes what the text left open: the string, a member without its
  /// value, the containers. One lossy action says what was added. A member
  /// cut off before its value gets `null`, unless its key is one the object
  /// already has: a reader keeping the last of duplicate keys would lose
  /// the value given first, so the cut-off key goes instead.
  void close_truncated() {
    std::string closing = std::move(completion_);
    // The key is cut off, or its value is missing or dropped (a cut number):
    // not a value string the text ends in.
    const bool in_key = expect_ == expect::first_key || expect_ == expect::key;
    const bool dangling_key = (in_key && open_string_) || expect_ == expect::colon ||
                              (expect_ == expect::member_value && !open_string_);
    if (dangling_key && repeats_earlier_key()) {
      out_.truncate(key_out_);
      cut_ = std::min(cut_, key_in_);
      notes_.resize(key_notes_);  // what was repaired in the dropped text goes with it
      open_string_ = false;
      expect_ = expect::key;
    }
    if (open_string_) {
      closing += '"';
      if (expect_ == expect::first_key || expect_ == expect::key) {
        expect_ = expect::colon;
      } else if (!stack_.empty()) {
        expect_ = stack_.back() == '[' ? expect::array_next : expect::object_next;
      }
    }
    switch (expect_) {
      case expect::colon: closing += ":null"; break;
      case expect::member_value: closing += "null"; break;
      case expect::value:
      case expect::key:
        drop_last_comma();
        break;
      default: break;
    }
    for (auto it = stack_.rbegin(); it != stack_.rend(); ++it) closing += *it == '{' ? '}' : ']';
    stack_.clear();
    open_out_.clear();
    out_ += closing;
    const std::size_t from = std::min(cut_, in_.size());
    note("truncated", repair_tier::lossy, from, in_.size(), closing);
  }
};

}  // namespace detail
LLMDLQ_END_NAMESPACE
