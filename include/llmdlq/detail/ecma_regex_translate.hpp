// SPDX-License-Identifier: MIT
// Reads an ECMA-262 pattern (Unicode mode) into a flat token list and writes it out as PCRE2 syntax.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/utf8.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/regex.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

struct code_point_range {
  char32_t first;
  char32_t last;
};

/// Code points as sorted, disjoint, non-adjacent ranges once normalize() has run.
using code_point_ranges = std::vector<code_point_range>;

inline constexpr char32_t max_code_point = 0x10FFFF;

/// Sorts and merges `ranges`, and drops the surrogates, which no UTF-8 subject holds.
inline void normalize(code_point_ranges& ranges) {
  std::sort(ranges.begin(), ranges.end(),
            [](code_point_range a, code_point_range b) { return a.first < b.first; });
  code_point_ranges merged;
  merged.reserve(ranges.size() + 1);
  for (const auto r : ranges) {
    if (!merged.empty() && r.first <= merged.back().last + 1) {
      merged.back().last = std::max(merged.back().last, r.last);
    } else {
      merged.push_back(r);
    }
  }
  // Surrogates last, once merging can no longer bring them back in.
  ranges.clear();
  for (const auto r : merged) {
    if (r.last < 0xD800 || r.first > 0xDFFF) {
      ranges.push_back(r);
      continue;
    }
    if (r.first < 0xD800) ranges.push_back({r.first, 0xD7FF});
    if (r.last > 0xDFFF) ranges.push_back({0xE000, r.last});
  }
}

/// Every scalar value not in `ranges`, which must be normalized.
inline code_point_ranges complement(const code_point_ranges& ranges) {
  code_point_ranges out;
  char32_t next = 0;
  for (const auto r : ranges) {
    if (r.first > next) out.push_back({next, r.first - 1});
    next = r.last + 1;
  }
  if (next <= max_code_point) out.push_back({next, max_code_point});
  normalize(out);
  return out;
}

/// Whether two normalized range lists share a code point.
inline bool intersects(const code_point_ranges& a, const code_point_ranges& b) noexcept {
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i].last < b[j].first) {
      ++i;
    } else if (b[j].last < a[i].first) {
      ++j;
    } else {
      return true;
    }
  }
  return false;
}

/// ECMA-262's WhiteSpace and LineTerminator code points: what `\s` matches.
inline code_point_ranges ecma_space_ranges() {
  return {{0x09, 0x0D}, {0x20, 0x20},     {0xA0, 0xA0},     {0x1680, 0x1680}, {0x2000, 0x200A},
          {0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000}, {0xFEFF, 0xFEFF}};
}

/// What `.` does not match.
inline code_point_ranges ecma_line_terminator_ranges() {
  return {{0x0A, 0x0A}, {0x0D, 0x0D}, {0x2028, 0x2029}};
}

inline code_point_ranges ecma_digit_ranges() { return {{'0', '9'}}; }

inline code_point_ranges ecma_word_ranges() { return {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}}; }

/// A bracketed class, a class escape or `.`: the code points in `ranges`, plus
/// the Unicode properties in `properties` (PCRE2 `\p{..}` items), or everything
/// else when `negated`.
struct char_class {
  code_point_ranges ranges;
  std::string properties;
  bool negated = false;
};

enum class token_kind : std::uint8_t {
  literal,
  char_class,
  backref,
  line_start,
  line_end,
  word_boundary,
  not_word_boundary,
  group_open,
  group_close,
  alternative,
  quantifier,
};

enum class group_kind : std::uint8_t {
  capture,
  plain,
  lookahead,
  negative_lookahead,
  lookbehind,
  negative_lookbehind,
};

inline constexpr std::uint32_t unbounded = UINT32_MAX;

/// One element of a parsed pattern. The meaning of `value` depends on `kind`:
/// the code point of a literal, the index of a char_class, the group number of
/// a back-reference, the minimum of a quantifier (`max` holds its maximum), or
/// for a group's open and close tokens the index of the other one.
struct regex_token {
  token_kind kind = token_kind::literal;
  group_kind group = group_kind::plain;
  bool lazy = false;
  bool has_capture = false;      ///< group_open: a capturing group is nested inside
  bool has_alternative = false;  ///< group_open: a `|` sits directly inside
  std::uint32_t value = 0;
  std::uint32_t max = 0;
  std::size_t offset = 0;  ///< byte offset in the ECMA-262 pattern
};

struct parsed_pattern {
  std::vector<regex_token> tokens;
  std::vector<char_class> classes;
  std::uint32_t group_count = 0;
  bool has_backref = false;
};

/// Reads an ECMA-262 Pattern with the `u` flag in one pass over the text,
/// keeping open groups on an explicit stack, so no pattern can exhaust the
/// call stack. It accepts exactly the ECMA-262 syntax, with these limits of
/// the engine behind it: quantifier bounds up to 65535 and the `v` flag's
/// set notation absent. Non-ASCII group names are taken as they are (the
/// Unicode ID_Start/ID_Continue check is not made), and a script name in
/// `\p{sc=..}` is checked by PCRE2, which ignores case.
class ecma_pattern_parser {
 public:
  explicit ecma_pattern_parser(std::string_view pattern) noexcept : text_(pattern) {}

  expected<parsed_pattern, regex_error> parse() {
    if (const auto bad = first_invalid_utf8(text_)) return fail(*bad, "the pattern is not valid UTF-8");
    while (pos_ < text_.size()) {
      const std::size_t start = pos_;
      switch (text_[pos_]) {
        case '^':
          ++pos_;
          push(token_kind::line_start, start);
          break;
        case '$':
          ++pos_;
          push(token_kind::line_end, start);
          break;
        case '.': {
          ++pos_;
          char_class dot{ecma_line_terminator_ranges(), {}, true};
          push_class(std::move(dot), start);
          break;
        }
        case '|':
          ++pos_;
          if (!groups_.empty()) out_.tokens[groups_.back()].has_alternative = true;
          push(token_kind::alternative, start);
          break;
        case '(':
          if (!open_group()) return unexpected(error_);
          break;
        case ')':
          if (!close_group()) return unexpected(error_);
          break;
        case '[':
          if (!parse_class()) return unexpected(error_);
          break;
        case '\\':
          if (!parse_atom_escape()) return unexpected(error_);
          break;
        case '*':
        case '+':
        case '?':
        case '{':
          if (!parse_quantifier()) return unexpected(error_);
          break;
        case ']':
          return fail(start, "a lone ']' must be escaped as '\\]'");
        case '}':
          return fail(start, "a lone '}' must be escaped as '\\}'");
        default: {
          const char32_t cp = take_code_point();
          push(token_kind::literal, start, cp);
          quantifiable_ = true;
          break;
        }
      }
    }
    if (!groups_.empty()) return fail(out_.tokens[groups_.back()].offset, "missing ')' for this group");
    if (!resolve_backrefs()) return unexpected(error_);
    return std::move(out_);
  }

 private:
  struct class_atom {
    bool is_set = false;
    char32_t cp = 0;
    code_point_ranges ranges;
    std::string properties;
  };

  struct named_reference {
    std::size_t token;
    std::string name;
  };

  static std::optional<std::size_t> first_invalid_utf8(std::string_view text) noexcept {
    std::size_t i = 0;
    while (i < text.size()) {
      const auto lead = static_cast<unsigned char>(text[i]);
      if (lead < 0x80) {
        ++i;
        continue;
      }
      if (!decode_utf8(text.substr(i))) return i;
      i += utf8_sequence_length(lead);
    }
    return std::nullopt;
  }

  static bool is_syntax_character(char c) noexcept {
    return std::string_view("^$\\.*+?()[]{}|").find(c) != std::string_view::npos;
  }

  static int hex_value(char c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  static bool is_ascii_letter(char c) noexcept { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

  static bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

  expected<parsed_pattern, regex_error> fail(std::size_t offset, std::string message) {
    error_ = regex_error{offset, std::move(message)};
    return unexpected(error_);
  }

  bool error(std::size_t offset, std::string message) {
    error_ = regex_error{offset, std::move(message)};
    return false;
  }

  bool at(std::size_t i, char c) const noexcept { return i < text_.size() && text_[i] == c; }

  char32_t take_code_point() noexcept {
    const auto rest = text_.substr(pos_);
    pos_ += utf8_sequence_length(static_cast<unsigned char>(rest[0]));
    return decode_utf8(rest).value_or(0);  // the text was validated up front
  }

  /// Escape text for error messages: the escaped code point as written.
  std::string escape_text(std::size_t backslash) const {
    const std::size_t next = backslash + 1;
    if (next >= text_.size()) return "\\";
    const std::size_t length = utf8_sequence_length(static_cast<unsigned char>(text_[next]));
    std::string out(1, '\\');
    out.append(text_.substr(next, length));
    return out;
  }

  void push(token_kind kind, std::size_t offset, std::uint32_t value = 0) {
    regex_token token;
    token.kind = kind;
    token.value = value;
    token.offset = offset;
    out_.tokens.push_back(token);
    quantifiable_ = false;
  }

  void push_class(char_class cls, std::size_t offset) {
    normalize(cls.ranges);
    out_.classes.push_back(std::move(cls));
    push(token_kind::char_class, offset, static_cast<std::uint32_t>(out_.classes.size() - 1));
    quantifiable_ = true;
  }

  // Reads decimal digits, saturating well above any bound the engine takes.
  std::optional<std::uint32_t> read_decimal() noexcept {
    if (pos_ >= text_.size() || !is_digit(text_[pos_])) return std::nullopt;
    std::uint32_t value = 0;
    while (pos_ < text_.size() && is_digit(text_[pos_])) {
      value = std::min<std::uint32_t>(value * 10 + static_cast<std::uint32_t>(text_[pos_] - '0'), 100'000'000);
      ++pos_;
    }
    return value;
  }

  bool parse_quantifier() {
    const std::size_t start = pos_;
    std::uint32_t min = 0;
    std::uint32_t max = unbounded;
    const char c = text_[pos_++];
    if (c == '+') {
      min = 1;
    } else if (c == '?') {
      max = 1;
    } else if (c == '{') {
      constexpr const char* lone_brace = "a '{' must be escaped as '\\{' unless it starts a quantifier {n}, {n,} or {n,m}";
      const auto low = read_decimal();
      if (!low) return error(start, lone_brace);
      min = max = *low;
      if (at(pos_, ',')) {
        ++pos_;
        max = unbounded;
        if (const auto high = read_decimal()) max = *high;
      }
      if (!at(pos_, '}')) return error(start, lone_brace);
      ++pos_;
    }
    if (!quantifiable_) {
      if (!out_.tokens.empty() && out_.tokens.back().kind == token_kind::quantifier)
        return error(start, "a quantifier cannot follow another one (possessive quantifiers are not ECMA-262)");
      return error(start, "nothing to repeat before this quantifier");
    }
    if (min > max) return error(start, "numbers out of order in the {} quantifier");
    if (min > 65535 || (max != unbounded && max > 65535))
      return error(start, "quantifier bounds above 65535 are unsupported by this engine (PCRE2)");
    const bool lazy = at(pos_, '?');
    if (lazy) ++pos_;
    push(token_kind::quantifier, start, min);
    out_.tokens.back().max = max;
    out_.tokens.back().lazy = lazy;
    return true;
  }

  bool open_group() {
    const std::size_t start = pos_++;
    regex_token token;
    token.kind = token_kind::group_open;
    token.offset = start;
    if (!at(pos_, '?')) {
      token.group = group_kind::capture;
      ++out_.group_count;
    } else {
      ++pos_;
      const char c = pos_ < text_.size() ? text_[pos_] : '\0';
      ++pos_;
      if (c == ':') {
        token.group = group_kind::plain;
      } else if (c == '=') {
        token.group = group_kind::lookahead;
      } else if (c == '!') {
        token.group = group_kind::negative_lookahead;
      } else if (c == '<' && at(pos_, '=')) {
        ++pos_;
        token.group = group_kind::lookbehind;
      } else if (c == '<' && at(pos_, '!')) {
        ++pos_;
        token.group = group_kind::negative_lookbehind;
      } else if (c == '<') {
        auto name = parse_group_name(start);
        if (!name) return false;
        for (const auto& [known, number] : names_) {
          if (known == *name) return error(start, "duplicate group name '" + *name + "'");
        }
        token.group = group_kind::capture;
        names_.emplace_back(std::move(*name), ++out_.group_count);
      } else {
        return error(start,
                     "'(?' must be followed by ':', '=', '!', '<=', '<!' or '<name>': inline flags, atomic "
                     "groups, comments, conditionals and recursion are not ECMA-262");
      }
    }
    groups_.push_back(out_.tokens.size());
    out_.tokens.push_back(token);
    quantifiable_ = false;
    return true;
  }

  bool close_group() {
    const std::size_t start = pos_++;
    if (groups_.empty()) return error(start, "unmatched ')'");
    const std::size_t open = groups_.back();
    groups_.pop_back();
    auto& opener = out_.tokens[open];
    opener.value = static_cast<std::uint32_t>(out_.tokens.size());
    const bool inner_capture = opener.has_capture || opener.group == group_kind::capture;
    if (inner_capture && !groups_.empty()) out_.tokens[groups_.back()].has_capture = true;
    const group_kind kind = opener.group;
    push(token_kind::group_close, start, static_cast<std::uint32_t>(open));
    out_.tokens.back().group = kind;
    quantifiable_ = kind == group_kind::capture || kind == group_kind::plain;
    return true;
  }

  // ECMA-262 RegExpIdentifierName. ASCII is checked exactly; other code points
  // are taken on trust, short of a Unicode ID_Start table.
  std::optional<std::string> parse_group_name(std::size_t group_start) {
    std::string name;
    bool first = true;
    while (true) {
      if (pos_ >= text_.size()) {
        error(group_start, "unterminated group name");
        return std::nullopt;
      }
      const std::size_t at_cp = pos_;
      char32_t cp;
      if (text_[pos_] == '>') {
        ++pos_;
        break;
      }
      if (text_[pos_] == '\\') {
        ++pos_;
        if (!at(pos_, 'u')) {
          error(at_cp, "only \\u escapes may appear in a group name");
          return std::nullopt;
        }
        const auto escaped = parse_unicode_escape(at_cp);
        if (!escaped) return std::nullopt;
        cp = *escaped;
      } else {
        cp = take_code_point();
      }
      const bool start_char = (cp < 0x80 && is_ascii_letter(static_cast<char>(cp))) || cp == '$' || cp == '_' ||
                              (cp >= 0x80 && !(cp >= 0xD800 && cp <= 0xDFFF) && cp != 0x200C && cp != 0x200D);
      const bool part_char = start_char || (cp < 0x80 && is_digit(static_cast<char>(cp))) || cp == 0x200C ||
                             cp == 0x200D;
      if (!(first ? start_char : part_char)) {
        error(at_cp, "invalid character in a group name");
        return std::nullopt;
      }
      append_utf8(name, cp);
      first = false;
    }
    if (name.empty()) {
      error(group_start, "empty group name");
      return std::nullopt;
    }
    return name;
  }

  // RegExpUnicodeEscapeSequence with pos_ on the 'u'. A lead and a trail
  // surrogate written as two escapes make one code point; a lone surrogate is
  // returned as is and matches nothing later on.
  std::optional<char32_t> parse_unicode_escape(std::size_t start) {
    ++pos_;
    if (at(pos_, '{')) {
      ++pos_;
      char32_t value = 0;
      std::size_t digits = 0;
      while (pos_ < text_.size() && hex_value(text_[pos_]) >= 0) {
        value = std::min<char32_t>(value * 16 + static_cast<char32_t>(hex_value(text_[pos_])), 0x110000);
        ++pos_, ++digits;
      }
      if (digits == 0 || !at(pos_, '}') || value > max_code_point) {
        error(start, "\\u{...} must hold hex digits for a code point up to 10FFFF");
        return std::nullopt;
      }
      ++pos_;
      return value;
    }
    const auto four_hex = [this](std::size_t from) -> std::optional<char32_t> {
      if (from + 4 > text_.size()) return std::nullopt;
      char32_t value = 0;
      for (std::size_t i = from; i < from + 4; ++i) {
        const int digit = hex_value(text_[i]);
        if (digit < 0) return std::nullopt;
        value = value * 16 + static_cast<char32_t>(digit);
      }
      return value;
    };
    const auto unit = four_hex(pos_);
    if (!unit) {
      error(start, "\\u must be followed by four hex digits or {hex digits}");
      return std::nullopt;
    }
    pos_ += 4;
    if (*unit >= 0xD800 && *unit <= 0xDBFF && at(pos_, '\\') && at(pos_ + 1, 'u')) {
      const auto trail = four_hex(pos_ + 2);
      if (trail && *trail >= 0xDC00 && *trail <= 0xDFFF) {
        pos_ += 6;
        return 0x10000 + ((*unit - 0xD800) << 10) + (*trail - 0xDC00);
      }
    }
    return *unit;
  }

  // CharacterEscape[+UnicodeMode], pos_ on the character after the backslash.
  std::optional<char32_t> parse_character_escape(std::size_t start) {
    const char c = text_[pos_];
    switch (c) {
      case 'f': ++pos_; return 0x0C;
      case 'n': ++pos_; return 0x0A;
      case 'r': ++pos_; return 0x0D;
      case 't': ++pos_; return 0x09;
      case 'v': ++pos_; return 0x0B;
      case 'c':
        if (pos_ + 1 < text_.size() && is_ascii_letter(text_[pos_ + 1])) {
          pos_ += 2;
          return static_cast<char32_t>(text_[pos_ - 1] % 32);
        }
        error(start, "\\c must be followed by a letter A-Z or a-z");
        return std::nullopt;
      case '0':
        if (pos_ + 1 < text_.size() && is_digit(text_[pos_ + 1])) {
          error(start, "\\0 cannot be followed by a digit (octal escapes are not ECMA-262 in Unicode mode)");
          return std::nullopt;
        }
        ++pos_;
        return 0;
      case 'x': {
        const int high = pos_ + 1 < text_.size() ? hex_value(text_[pos_ + 1]) : -1;
        const int low = pos_ + 2 < text_.size() ? hex_value(text_[pos_ + 2]) : -1;
        if (high < 0 || low < 0) {
          error(start, "\\x must be followed by exactly two hex digits");
          return std::nullopt;
        }
        pos_ += 3;
        return static_cast<char32_t>(high * 16 + low);
      }
      case 'u':
        return parse_unicode_escape(start);
      default:
        if (is_syntax_character(c) || c == '/') {
          ++pos_;
          return static_cast<char32_t>(c);
        }
        error(start, "invalid escape '" + escape_text(start) + "': ECMA-262 (Unicode mode) defines no such escape");
        return std::nullopt;
    }
  }

  // \d \D \w \W \s \S, pos_ on the letter.
  void class_escape_ranges(char letter, code_point_ranges& into) {
    ++pos_;
    code_point_ranges set;
    switch (letter | 0x20) {
      case 'd': set = ecma_digit_ranges(); break;
      case 'w': set = ecma_word_ranges(); break;
      default: set = ecma_space_ranges(); break;
    }
    if (letter >= 'A' && letter <= 'Z') {
      normalize(set);
      set = complement(set);
    }
    into.insert(into.end(), set.begin(), set.end());
  }

  // \p{..} or \P{..}, pos_ on the 'p'; adds to `ranges` or `properties`.
  bool parse_property(std::size_t start, code_point_ranges& ranges, std::string& properties) {
    const bool negated = text_[pos_] == 'P';
    ++pos_;
    if (!at(pos_, '{')) return error(start, "\\p and \\P must be followed by {property}");
    ++pos_;
    const std::size_t body_start = pos_;
    while (pos_ < text_.size() && text_[pos_] != '}') {
      const char c = text_[pos_];
      if (!(is_ascii_letter(c) || is_digit(c) || c == '_' || c == '=')) break;
      ++pos_;
    }
    if (!at(pos_, '}')) return error(start, "malformed Unicode property escape");
    const std::string_view body = text_.substr(body_start, pos_ - body_start);
    ++pos_;

    std::string pcre;  // the PCRE2 property name, without \p{}
    const auto equals = body.find('=');
    if (equals != std::string_view::npos) {
      const auto name = body.substr(0, equals);
      const auto value = body.substr(equals + 1);
      if (name == "General_Category" || name == "gc") {
        if (const auto gc = general_category(value)) pcre = *gc;
      } else if (name == "Script" || name == "sc" || name == "Script_Extensions" || name == "scx") {
        const bool extensions = name == "Script_Extensions" || name == "scx";
        if (!value.empty() && value.find('=') == std::string_view::npos)
          pcre = (extensions ? "scx:" : "sc:") + std::string(value);
      }
    } else if (const auto gc = general_category(body)) {
      pcre = *gc;
    } else if (body == "Any" || body == "ASCII") {
      code_point_ranges set{{0, body == "Any" ? max_code_point : 0x7F}};
      if (negated) set = complement(set);
      ranges.insert(ranges.end(), set.begin(), set.end());
      return true;
    } else if (body == "Assigned") {
      properties += negated ? "\\p{Cn}" : "\\P{Cn}";
      return true;
    } else if (body == "Changes_When_NFKC_Casefolded" || body == "CWKCF") {
      return error(start, "the Unicode property '" + std::string(body) + "' is unsupported by this engine (PCRE2)");
    } else if (const auto binary = binary_property(body)) {
      pcre = *binary;
    }
    if (pcre.empty()) return error(start, "unknown Unicode property '" + std::string(body) + "'");
    properties += negated ? "\\P{" : "\\p{";
    properties += pcre;
    properties += '}';
    return true;
  }

  // ECMA-262's General_Category value aliases, to PCRE2's names.
  static std::optional<std::string> general_category(std::string_view value) {
    static constexpr std::pair<std::string_view, std::string_view> table[] = {
        {"C", "C"}, {"Other", "C"}, {"Cc", "Cc"}, {"Control", "Cc"}, {"cntrl", "Cc"}, {"Cf", "Cf"},
        {"Format", "Cf"}, {"Cn", "Cn"}, {"Unassigned", "Cn"}, {"Co", "Co"}, {"Private_Use", "Co"},
        {"Cs", "Cs"}, {"Surrogate", "Cs"}, {"L", "L"}, {"Letter", "L"}, {"LC", "L&"}, {"Cased_Letter", "L&"},
        {"Ll", "Ll"}, {"Lowercase_Letter", "Ll"}, {"Lm", "Lm"}, {"Modifier_Letter", "Lm"}, {"Lo", "Lo"},
        {"Other_Letter", "Lo"}, {"Lt", "Lt"}, {"Titlecase_Letter", "Lt"}, {"Lu", "Lu"},
        {"Uppercase_Letter", "Lu"}, {"M", "M"}, {"Mark", "M"}, {"Combining_Mark", "M"}, {"Mc", "Mc"},
        {"Spacing_Mark", "Mc"}, {"Me", "Me"}, {"Enclosing_Mark", "Me"}, {"Mn", "Mn"}, {"Nonspacing_Mark", "Mn"},
        {"N", "N"}, {"Number", "N"}, {"Nd", "Nd"}, {"Decimal_Number", "Nd"}, {"digit", "Nd"}, {"Nl", "Nl"},
        {"Letter_Number", "Nl"}, {"No", "No"}, {"Other_Number", "No"}, {"P", "P"}, {"Punctuation", "P"},
        {"punct", "P"}, {"Pc", "Pc"}, {"Connector_Punctuation", "Pc"}, {"Pd", "Pd"}, {"Dash_Punctuation", "Pd"},
        {"Pe", "Pe"}, {"Close_Punctuation", "Pe"}, {"Pf", "Pf"}, {"Final_Punctuation", "Pf"}, {"Pi", "Pi"},
        {"Initial_Punctuation", "Pi"}, {"Po", "Po"}, {"Other_Punctuation", "Po"}, {"Ps", "Ps"},
        {"Open_Punctuation", "Ps"}, {"S", "S"}, {"Symbol", "S"}, {"Sc", "Sc"}, {"Currency_Symbol", "Sc"},
        {"Sk", "Sk"}, {"Modifier_Symbol", "Sk"}, {"Sm", "Sm"}, {"Math_Symbol", "Sm"}, {"So", "So"},
        {"Other_Symbol", "So"}, {"Z", "Z"}, {"Separator", "Z"}, {"Zl", "Zl"}, {"Line_Separator", "Zl"},
        {"Zp", "Zp"}, {"Paragraph_Separator", "Zp"}, {"Zs", "Zs"}, {"Space_Separator", "Zs"},
    };
    for (const auto& [ecma, pcre] : table) {
      if (ecma == value) return std::string(pcre);
    }
    return std::nullopt;
  }

  // ECMA-262's binary properties (and their aliases) that PCRE2 knows, to
  // their canonical names.
  static std::optional<std::string> binary_property(std::string_view name) {
    static constexpr std::pair<std::string_view, std::string_view> aliases[] = {
        {"AHex", "ASCII_Hex_Digit"}, {"Alpha", "Alphabetic"}, {"Bidi_C", "Bidi_Control"},
        {"Bidi_M", "Bidi_Mirrored"}, {"CI", "Case_Ignorable"}, {"CWCF", "Changes_When_Casefolded"},
        {"CWCM", "Changes_When_Casemapped"}, {"CWL", "Changes_When_Lowercased"},
        {"CWT", "Changes_When_Titlecased"}, {"CWU", "Changes_When_Uppercased"},
        {"DI", "Default_Ignorable_Code_Point"}, {"Dep", "Deprecated"}, {"Dia", "Diacritic"},
        {"EComp", "Emoji_Component"}, {"EMod", "Emoji_Modifier"}, {"EBase", "Emoji_Modifier_Base"},
        {"EPres", "Emoji_Presentation"}, {"ExtPict", "Extended_Pictographic"}, {"Ext", "Extender"},
        {"Gr_Base", "Grapheme_Base"}, {"Gr_Ext", "Grapheme_Extend"}, {"Hex", "Hex_Digit"},
        {"IDSB", "IDS_Binary_Operator"}, {"IDST", "IDS_Trinary_Operator"}, {"IDC", "ID_Continue"},
        {"IDS", "ID_Start"}, {"Ideo", "Ideographic"}, {"Join_C", "Join_Control"},
        {"LOE", "Logical_Order_Exception"}, {"Lower", "Lowercase"}, {"NChar", "Noncharacter_Code_Point"},
        {"Pat_Syn", "Pattern_Syntax"}, {"Pat_WS", "Pattern_White_Space"}, {"QMark", "Quotation_Mark"},
        {"RI", "Regional_Indicator"}, {"STerm", "Sentence_Terminal"}, {"SD", "Soft_Dotted"},
        {"Term", "Terminal_Punctuation"}, {"UIdeo", "Unified_Ideograph"}, {"Upper", "Uppercase"},
        {"VS", "Variation_Selector"}, {"space", "White_Space"}, {"XIDC", "XID_Continue"}, {"XIDS", "XID_Start"},
    };
    static constexpr std::string_view canonical[] = {
        "ASCII_Hex_Digit", "Alphabetic", "Bidi_Control", "Bidi_Mirrored", "Case_Ignorable", "Cased",
        "Changes_When_Casefolded", "Changes_When_Casemapped", "Changes_When_Lowercased",
        "Changes_When_Titlecased", "Changes_When_Uppercased", "Dash", "Default_Ignorable_Code_Point",
        "Deprecated", "Diacritic", "Emoji", "Emoji_Component", "Emoji_Modifier", "Emoji_Modifier_Base",
        "Emoji_Presentation", "Extended_Pictographic", "Extender", "Grapheme_Base", "Grapheme_Extend",
        "Hex_Digit", "IDS_Binary_Operator", "IDS_Trinary_Operator", "ID_Continue", "ID_Start", "Ideographic",
        "Join_Control", "Logical_Order_Exception", "Lowercase", "Math", "Noncharacter_Code_Point",
        "Pattern_Syntax", "Pattern_White_Space", "Quotation_Mark", "Radical", "Regional_Indicator",
        "Sentence_Terminal", "Soft_Dotted", "Terminal_Punctuation", "Unified_Ideograph", "Uppercase",
        "Variation_Selector", "White_Space", "XID_Continue", "XID_Start",
    };
    for (const auto& [alias, full] : aliases) {
      if (alias == name) return std::string(full);
    }
    for (const auto full : canonical) {
      if (full == name) return std::string(full);
    }
    return std::nullopt;
  }

  bool parse_atom_escape() {
    const std::size_t start = pos_++;
    if (pos_ >= text_.size()) return error(start, "'\\' at the end of the pattern");
    const char c = text_[pos_];
    switch (c) {
      case 'b':
        ++pos_;
        push(token_kind::word_boundary, start);
        return true;
      case 'B':
        ++pos_;
        push(token_kind::not_word_boundary, start);
        return true;
      case 'd':
      case 'D':
      case 'w':
      case 'W':
      case 's':
      case 'S': {
        char_class cls;
        class_escape_ranges(c, cls.ranges);
        push_class(std::move(cls), start);
        return true;
      }
      case 'p':
      case 'P': {
        char_class cls;
        if (!parse_property(start, cls.ranges, cls.properties)) return false;
        push_class(std::move(cls), start);
        return true;
      }
      case 'k': {
        ++pos_;
        if (!at(pos_, '<')) return error(start, "\\k must be followed by <group name>");
        ++pos_;
        auto name = parse_group_name(start);
        if (!name) return false;
        named_.push_back({out_.tokens.size(), std::move(*name)});
        push(token_kind::backref, start);
        out_.has_backref = true;
        quantifiable_ = true;
        return true;
      }
      default:
        break;
    }
    if (c >= '1' && c <= '9') {
      const auto number = read_decimal();
      push(token_kind::backref, start, *number);
      out_.has_backref = true;
      quantifiable_ = true;
      return true;
    }
    const auto cp = parse_character_escape(start);
    if (!cp) return false;
    push(token_kind::literal, start, *cp);
    quantifiable_ = true;
    return true;
  }

  // ClassAtom, with pos_ on it.
  bool parse_class_atom(class_atom& atom) {
    const std::size_t start = pos_;
    if (text_[pos_] != '\\') {
      atom.cp = take_code_point();
      return true;
    }
    ++pos_;
    if (pos_ >= text_.size()) return error(start, "'\\' at the end of the pattern");
    const char c = text_[pos_];
    switch (c) {
      case 'b':
        ++pos_;
        atom.cp = 0x08;
        return true;
      case '-':
        ++pos_;
        atom.cp = '-';
        return true;
      case 'd':
      case 'D':
      case 'w':
      case 'W':
      case 's':
      case 'S':
        atom.is_set = true;
        class_escape_ranges(c, atom.ranges);
        return true;
      case 'p':
      case 'P':
        atom.is_set = true;
        return parse_property(start, atom.ranges, atom.properties);
      default:
        break;
    }
    const auto cp = parse_character_escape(start);
    if (!cp) return false;
    atom.cp = *cp;
    return true;
  }

  bool parse_class() {
    const std::size_t start = pos_++;
    char_class cls;
    if (at(pos_, '^')) {
      cls.negated = true;
      ++pos_;
    }
    while (true) {
      if (pos_ >= text_.size()) return error(start, "missing ']' for this character class");
      if (text_[pos_] == ']') {
        ++pos_;
        break;
      }
      const std::size_t atom_start = pos_;
      class_atom low;
      if (!parse_class_atom(low)) return false;
      if (at(pos_, '-') && pos_ + 1 < text_.size() && text_[pos_ + 1] != ']') {
        ++pos_;
        class_atom high;
        if (!parse_class_atom(high)) return false;
        if (low.is_set || high.is_set)
          return error(atom_start, "a class escape such as \\d cannot bound a range in a character class");
        if (low.cp > high.cp) return error(atom_start, "range out of order in character class");
        cls.ranges.push_back({low.cp, high.cp});
        continue;
      }
      if (low.is_set) {
        cls.ranges.insert(cls.ranges.end(), low.ranges.begin(), low.ranges.end());
        cls.properties += low.properties;
      } else {
        cls.ranges.push_back({low.cp, low.cp});
      }
    }
    push_class(std::move(cls), start);
    return true;
  }

  bool resolve_backrefs() {
    for (const auto& ref : named_) {
      auto& token = out_.tokens[ref.token];
      const auto found = std::find_if(names_.begin(), names_.end(), [&](const auto& n) { return n.first == ref.name; });
      if (found == names_.end()) return error(token.offset, "no group is named '" + ref.name + "'");
      token.value = found->second;
    }
    for (const auto& token : out_.tokens) {
      if (token.kind == token_kind::backref && token.value > out_.group_count)
        return error(token.offset, "back-reference to group " + std::to_string(token.value) + ", which does not exist");
    }
    return true;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  bool quantifiable_ = false;
  parsed_pattern out_;
  regex_error error_;
  std::vector<std::size_t> groups_;
  std::vector<std::pair<std::string, std::uint32_t>> names_;
  std::vector<named_reference> named_;
};

/// Shortens the leftmost repeated atom of each lookbehind alternative to its
/// minimum count, which PCRE2 needs (it takes only bounded lookbehinds) and
/// which changes no outcome: `(?<=Q{n,m}R)` holds exactly where `(?<=Q{n}R)`
/// does, because the last n repetitions of Q before R match too. When n is 0
/// the atom after it is leftmost as well, and so are the first atoms of the
/// alternatives of a leftmost group that is not repeated. Captures are the one
/// thing this would change, so a group holding one is left alone when the
/// pattern has back-references.
inline void reduce_lookbehinds(parsed_pattern& pattern) {
  auto& tokens = pattern.tokens;
  const auto is_lookbehind = [](const regex_token& t) {
    return t.group == group_kind::lookbehind || t.group == group_kind::negative_lookbehind;
  };
  std::vector<std::size_t> leftmost;  // tokens that begin a lookbehind alternative
  std::vector<std::size_t> open;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const auto& token = tokens[i];
    if (token.kind == token_kind::group_open) {
      open.push_back(i);
      if (is_lookbehind(token)) leftmost.push_back(i + 1);
    } else if (token.kind == token_kind::group_close) {
      open.pop_back();
    } else if (token.kind == token_kind::alternative && !open.empty() && is_lookbehind(tokens[open.back()])) {
      leftmost.push_back(i + 1);
    }
  }
  // Each group is entered from at most one leftmost chain, so this stays linear.
  while (!leftmost.empty()) {
    std::size_t first = leftmost.back();
    leftmost.pop_back();
    while (first < tokens.size()) {
      const auto& atom = tokens[first];
      std::size_t last = first;
      const bool group = atom.kind == token_kind::group_open;
      if (group) {
        if (atom.group != group_kind::plain && atom.group != group_kind::capture) break;
        if (pattern.has_backref && (atom.group == group_kind::capture || atom.has_capture)) break;
        last = atom.value;
      } else if (atom.kind != token_kind::literal && atom.kind != token_kind::char_class &&
                 atom.kind != token_kind::backref) {
        break;
      }
      auto* quantifier = last + 1 < tokens.size() && tokens[last + 1].kind == token_kind::quantifier
                             ? &tokens[last + 1]
                             : nullptr;
      if (quantifier != nullptr) {
        quantifier->max = quantifier->value;
        quantifier->lazy = false;
      }
      if (group && (quantifier == nullptr || quantifier->value == 1)) {
        leftmost.push_back(first + 1);
        for (std::size_t i = first + 1; i < last; ++i) {
          if (tokens[i].kind == token_kind::group_open) i = tokens[i].value;
          else if (tokens[i].kind == token_kind::alternative) leftmost.push_back(i + 1);
        }
      }
      if (quantifier == nullptr || quantifier->value != 0) break;
      first = last + 2;
    }
  }
}

/// A translated pattern, with the way back to offsets in the original.
struct pcre2_pattern {
  std::string text;
  /// (offset in `text`, offset in the ECMA-262 pattern), ascending.
  std::vector<std::pair<std::size_t, std::size_t>> origins;

  std::size_t source_offset(std::size_t text_offset) const noexcept {
    const auto after = std::upper_bound(origins.begin(), origins.end(), text_offset,
                                        [](std::size_t off, const auto& origin) { return off < origin.first; });
    return after == origins.begin() ? 0 : std::prev(after)->second;
  }
};

inline void append_hex_escape(std::string& out, char32_t cp) {
  constexpr std::string_view digits = "0123456789ABCDEF";
  char buffer[8];
  std::size_t n = 0;
  do {
    buffer[n++] = digits[cp & 0xF];
    cp >>= 4;
  } while (cp != 0);
  out += "\\x{";
  while (n > 0) out += buffer[--n];
  out += '}';
}

// Classes that match nothing and anything. PCRE2's own `[]` and `[^]`
// (PCRE2_ALLOW_EMPTY_CLASS) are avoided: 10.42 fails `a[]*b` on "ab".
inline constexpr std::string_view pcre2_nothing = "[^\\x{0}-\\x{10FFFF}]";
inline constexpr std::string_view pcre2_anything = "[\\x{0}-\\x{10FFFF}]";

inline void append_literal(std::string& out, char32_t cp) {
  const bool alnum = (cp >= '0' && cp <= '9') || (cp >= 'A' && cp <= 'Z') || (cp >= 'a' && cp <= 'z');
  if (alnum) {
    out += static_cast<char>(cp);
  } else if (cp >= 0xD800 && cp <= 0xDFFF) {
    out += pcre2_nothing;  // a lone surrogate, which no UTF-8 subject holds
  } else {
    append_hex_escape(out, cp);
  }
}

inline void append_class(std::string& out, const char_class& cls) {
  const auto& r = cls.ranges;
  if (!cls.negated && cls.properties.empty() && r.size() == 1 && r[0].first == r[0].last) {
    append_literal(out, r[0].first);
    return;
  }
  const bool one_property = !cls.properties.empty() && cls.properties.find('}') == cls.properties.size() - 1;
  if (!cls.negated && r.empty() && one_property) {
    out += cls.properties;
    return;
  }
  if (r.empty() && cls.properties.empty()) {
    out += cls.negated ? pcre2_anything : pcre2_nothing;
    return;
  }
  out += cls.negated ? "[^" : "[";
  for (const auto range : r) {
    append_hex_escape(out, range.first);
    if (range.last != range.first) {
      out += '-';
      append_hex_escape(out, range.last);
    }
  }
  out += cls.properties;
  out += ']';
}

/// Writes `pattern` in PCRE2 syntax, for compiling with PCRE2_UTF,
/// PCRE2_ALLOW_EMPTY_CLASS and PCRE2_DOLLAR_ENDONLY and without PCRE2_UCP.
/// Every escape is resolved here (literals go out as `\x{..}`), so PCRE2 sees
/// none of its own escape dialect and needs no PCRE2_ALT_BSUX.
inline pcre2_pattern to_pcre2(const parsed_pattern& pattern) {
  pcre2_pattern out;
  out.text.reserve(pattern.tokens.size() * 4);
  out.origins.reserve(pattern.tokens.size());
  for (const auto& token : pattern.tokens) {
    out.origins.emplace_back(out.text.size(), token.offset);
    auto& text = out.text;
    switch (token.kind) {
      case token_kind::literal: append_literal(text, token.value); break;
      case token_kind::char_class: append_class(text, pattern.classes[token.value]); break;
      case token_kind::backref:
        text += "\\g{" + std::to_string(token.value) + "}";
        break;
      case token_kind::line_start: text += '^'; break;
      case token_kind::line_end: text += '$'; break;
      case token_kind::word_boundary: text += "\\b"; break;
      case token_kind::not_word_boundary: text += "\\B"; break;
      case token_kind::group_open:
        switch (token.group) {
          case group_kind::capture: text += '('; break;
          case group_kind::plain: text += "(?:"; break;
          case group_kind::lookahead: text += "(?="; break;
          case group_kind::negative_lookahead: text += "(?!"; break;
          case group_kind::lookbehind: text += "(?<="; break;
          case group_kind::negative_lookbehind: text += "(?<!"; break;
        }
        break;
      case token_kind::group_close: text += ')'; break;
      case token_kind::alternative: text += '|'; break;
      case token_kind::quantifier:
        if (token.value == 0 && token.max == unbounded) {
          text += '*';
        } else if (token.value == 1 && token.max == unbounded) {
          text += '+';
        } else if (token.value == 0 && token.max == 1) {
          text += '?';
        } else {
          text += '{' + std::to_string(token.value);
          if (token.max != token.value) text += token.max == unbounded ? "," : "," + std::to_string(token.max);
          text += '}';
        }
        if (token.lazy) text += '?';
        break;
    }
  }
  return out;
}

}  // namespace detail
LLMDLQ_END_NAMESPACE
