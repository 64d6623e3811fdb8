// SPDX-License-Identifier: MIT
// Reads an ECMA-262 pattern (Unicode mode) into a flat token list.
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
#include "llmdlq/detail/json/byte_classes.hpp"
#include "llmdlq/detail/json/utf8.hpp"
#include "llmdlq/detail/regex/code_point_set.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/regex.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

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
/// call stack. It accepts exactly the ECMA-262 syntax (with `web_compatible`,
/// also Annex B's identity escapes of punctuation, `[\w-.]` and literal
/// `{`, `}` and `]`, each read as JavaScript without `u` reads it), with these limits of
/// the engine behind it: quantifier bounds up to 65535 and the `v` flag's
/// set notation absent. Non-ASCII group names are taken as they are (the
/// Unicode ID_Start/ID_Continue check is not made), and a script name in
/// `\p{sc=..}` is checked by PCRE2, which ignores case.
class ecma_pattern_parser {
 public:
  explicit ecma_pattern_parser(std::string_view pattern, bool web_compatible = false) noexcept
      : text_(pattern), web_compatible_(web_compatible) {}

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
          if (!web_compatible_) return fail(start, "a lone ']' must be escaped as '\\]'");
          push_literal(start, static_cast<char32_t>(text_[pos_++]));
          break;
        case '}':
          if (!web_compatible_) return fail(start, "a lone '}' must be escaped as '\\}'");
          push_literal(start, static_cast<char32_t>(text_[pos_++]));
          break;
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
    if (pos_ >= text_.size() || !is_ascii_digit(text_[pos_])) return std::nullopt;
    std::uint32_t value = 0;
    while (pos_ < text_.size() && is_ascii_digit(text_[pos_])) {
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
      if (low) {
        min = max = *low;
        if (at(pos_, ',')) {
          ++pos_;
          max = unbounded;
          if (const auto high = read_decimal()) max = *high;
        }
      }
      if (!low || !at(pos_, '}')) {
        if (!web_compatible_) return error(start, lone_brace);
        pos_ = start + 1;  // a '{' that starts no quantifier is itself
        push_literal(start, '{');
        return true;
      }
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
      const bool part_char = start_char || (cp < 0x80 && is_ascii_digit(static_cast<char>(cp))) || cp == 0x200C ||
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
    if (is_high_surrogate(*unit) && at(pos_, '\\') && at(pos_ + 1, 'u')) {
      const auto trail = four_hex(pos_ + 2);
      if (trail && is_low_surrogate(*trail)) {
        pos_ += 6;
        return surrogate_pair(*unit, *trail);
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
        if (pos_ + 1 < text_.size() && is_ascii_digit(text_[pos_ + 1])) {
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
        // An identity escape of any other punctuation (`\-`, `\_`, `\~`, `\'`) or
        // non-ASCII character. Letters and digits stay errors: engines disagree on them.
        if (web_compatible_ && (static_cast<unsigned char>(c) >= 0x80 || !(is_ascii_letter(c) || is_ascii_digit(c)))) {
          return take_code_point();
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
      if (!(is_ascii_letter(c) || is_ascii_digit(c) || c == '_' || c == '=')) break;
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
        if (const auto gc = pcre2_general_category(value)) pcre = *gc;
      } else if (name == "Script" || name == "sc" || name == "Script_Extensions" || name == "scx") {
        const bool extensions = name == "Script_Extensions" || name == "scx";
        if (!value.empty() && value.find('=') == std::string_view::npos)
          pcre = (extensions ? "scx:" : "sc:") + std::string(value);
      }
    } else if (const auto gc = pcre2_general_category(body)) {
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
    } else if (const auto binary = pcre2_binary_property(body)) {
      pcre = *binary;
    }
    if (pcre.empty()) return error(start, "unknown Unicode property '" + std::string(body) + "'");
    properties += negated ? "\\P{" : "\\p{";
    properties += pcre;
    properties += '}';
    return true;
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
        if ((low.is_set || high.is_set) && web_compatible_) {  // [\w-.]: \w, '-' and '.'
          add_class_atom(cls, low);
          cls.ranges.push_back({'-', '-'});
          add_class_atom(cls, high);
          continue;
        }
        if (low.is_set || high.is_set)
          return error(atom_start, "a class escape such as \\d cannot bound a range in a character class");
        if (low.cp > high.cp) return error(atom_start, "range out of order in character class");
        cls.ranges.push_back({low.cp, high.cp});
        continue;
      }
      add_class_atom(cls, low);
    }
    push_class(std::move(cls), start);
    return true;
  }

  static void add_class_atom(char_class& cls, const class_atom& atom) {
    if (atom.is_set) {
      cls.ranges.insert(cls.ranges.end(), atom.ranges.begin(), atom.ranges.end());
      cls.properties += atom.properties;
    } else {
      cls.ranges.push_back({atom.cp, atom.cp});
    }
  }

  void push_literal(std::size_t start, char32_t cp) {
    push(token_kind::literal, start, cp);
    quantifiable_ = true;
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
  bool web_compatible_ = false;
  std::size_t pos_ = 0;
  bool quantifiable_ = false;
  parsed_pattern out_;
  regex_error error_;
  std::vector<std::size_t> groups_;
  std::vector<std::pair<std::string, std::uint32_t>> names_;
  std::vector<named_reference> named_;
};

}  // namespace detail
LLMDLQ_END_NAMESPACE
