// SPDX-License-Identifier: MIT
// Definitions for json_parser.hpp: simdjson on the fast path, and a Boost.JSON
// SAX pass that pinpoints the error only when simdjson has rejected a document.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <charconv>
#include <cstring>
#include <optional>

#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/parse.hpp>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/json/text_scan.hpp"
#include "llmdlq/detail/json/text_passes.hpp"
#include "llmdlq/detail/json/utf8.hpp"
#include "llmdlq/json_parser.hpp"

LLMDLQ_BEGIN_NAMESPACE

LLMDLQ_INLINE std::string_view describe(json_errc code) noexcept {
  return detail::errc_message<json_errc>(static_cast<int>(code));
}

LLMDLQ_INLINE text_position position_of(std::string_view text, std::size_t offset) noexcept {
  // Plain counting loops, which the compiler vectorizes.
  const char* begin = text.data();
  const char* end = begin + std::min(offset, text.size());
  text_position pos;
  pos.line = 1 + static_cast<std::size_t>(std::count(begin, end, '\n'));
  // An empty view may have a null data(), which memrchr must not see.
  const void* newline = begin == end ? nullptr : ::memrchr(begin, '\n', static_cast<std::size_t>(end - begin));
  const char* line = newline ? static_cast<const char*>(newline) + 1 : begin;
  // Continuation bytes (10xxxxxx) are not characters. (A byte loop: it
  // vectorizes, where std::popcount without -mpopcnt is a library call.)
  const auto continuation = static_cast<std::size_t>(
      std::count_if(line, end, [](char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }));
  pos.column = 1 + static_cast<std::size_t>(end - line) - continuation;
  return pos;
}

namespace detail {

// Depth as simdjson counts it: no value may sit inside more than max_depth
// arrays and objects. Boost.JSON runs one level looser and the probe below
// enforces the exact rule, so that both parsers accept the same documents.
inline boost::json::parse_options boost_options(const parse_options& options) {
  boost::json::parse_options strict;
  strict.max_depth = options.max_depth + 1;
  return strict;
}

// SAX handler that builds nothing; it holds numbers and depth to what simdjson
// accepts.
struct syntax_probe {
  static constexpr std::size_t max_object_size = std::size_t(-1);
  static constexpr std::size_t max_array_size = std::size_t(-1);
  static constexpr std::size_t max_key_size = std::size_t(-1);
  static constexpr std::size_t max_string_size = std::size_t(-1);

  std::size_t max_depth;
  std::size_t depth = 0;
  bool number_out_of_range = false;
  bool too_deep = false;

  explicit syntax_probe(std::size_t max) : max_depth(max) {}

  bool value(boost::json::error_code& ec) {
    if (depth <= max_depth) return true;
    too_deep = true;
    ec = boost::json::error::too_deep;
    return false;
  }
  bool open(boost::json::error_code& ec) {
    if (!value(ec)) return false;
    ++depth;
    return true;
  }

  bool on_document_begin(boost::json::error_code&) { return true; }
  bool on_document_end(boost::json::error_code&) { return true; }
  bool on_array_begin(boost::json::error_code& ec) { return open(ec); }
  bool on_array_end(std::size_t, boost::json::error_code&) { return --depth, true; }
  bool on_object_begin(boost::json::error_code& ec) { return open(ec); }
  bool on_object_end(std::size_t, boost::json::error_code&) { return --depth, true; }
  bool on_string_part(boost::json::string_view, std::size_t, boost::json::error_code&) { return true; }
  bool on_string(boost::json::string_view, std::size_t, boost::json::error_code& ec) { return value(ec); }
  bool on_key_part(boost::json::string_view, std::size_t, boost::json::error_code&) { return true; }
  bool on_key(boost::json::string_view, std::size_t, boost::json::error_code& ec) { return value(ec); }
  bool on_number_part(boost::json::string_view, boost::json::error_code&) { return true; }
  bool on_int64(std::int64_t, boost::json::string_view, boost::json::error_code& ec) { return value(ec); }
  bool on_uint64(std::uint64_t, boost::json::string_view, boost::json::error_code& ec) { return value(ec); }
  bool on_double(double d, boost::json::string_view lexeme, boost::json::error_code& ec) {
    // Boost.JSON turns integers past 64 bits into doubles, where simdjson
    // rejects them; and its conversion is not correctly rounded, so a
    // non-finite result is checked again with from_chars, which is.
    const bool is_integer_lexeme = lexeme.find_first_of(".eE") == boost::json::string_view::npos;
    if (!is_integer_lexeme && (std::isfinite(d) || is_finite_decimal(lexeme))) return value(ec);
    number_out_of_range = true;
    ec = boost::json::error::exponent_overflow;
    return false;
  }

  // Whether the decimal `lexeme` is within a double's range; an underflow
  // reads as zero, as simdjson reads it.
  static bool is_finite_decimal(std::string_view lexeme) {
    double exact = 0;
    const auto [end, ec] = std::from_chars(lexeme.data(), lexeme.data() + lexeme.size(), exact);
    if (ec == std::errc()) return std::isfinite(exact);
    if (ec != std::errc::result_out_of_range) return false;
    // Out of range: too small (underflow) when the mantissa is zero or the
    // decimal exponent of its leading digit is negative.
    const auto e = lexeme.find_first_of("eE");
    const std::string_view mantissa = lexeme.substr(0, e);
    const auto lead = mantissa.find_first_of("123456789");
    if (lead == std::string_view::npos) return true;
    // The power of ten of the leading digit: 2 for 123.4, -3 for 0.001.
    const auto point = std::min(mantissa.find('.'), mantissa.size());
    const long long magnitude = lead < point ? static_cast<long long>(point - lead) - 1
                                             : -static_cast<long long>(lead - point);
    long long exponent = 0;
    if (e != std::string_view::npos) {
      std::string_view digits = lexeme.substr(e + 1);
      const bool negative = !digits.empty() && digits[0] == '-';
      if (!digits.empty() && (digits[0] == '-' || digits[0] == '+')) digits.remove_prefix(1);
      for (const char c : digits) exponent = std::min<long long>(exponent * 10 + (c - '0'), 1'000'000'000);
      if (negative) exponent = -exponent;
    }
    return magnitude + exponent < 0;
  }
  bool on_bool(bool, boost::json::error_code& ec) { return value(ec); }
  bool on_null(boost::json::error_code& ec) { return value(ec); }
  bool on_comment_part(boost::json::string_view, boost::json::error_code&) { return true; }
  bool on_comment(boost::json::string_view, boost::json::error_code&) { return true; }
};

// What a strict JSON reader expects next, replayed over the valid prefix.
enum class expectation : std::uint8_t {
  value,           // at the start, or after ':'
  value_or_close,  // after '['
  element,         // after ',' in an array
  key_or_close,    // after '{'
  key,             // after ',' in an object
  colon,           // after a key
  comma_or_close,  // after a value inside a container
  end,             // after the top-level value
};

struct prefix_state {
  std::string open;  // '[' and '{' still open, outermost first
  bool in_string = false;
  bool in_bare_token = false;  // inside a number or literal at the offset
  expectation expect = expectation::value;
  std::size_t last_escape = std::string_view::npos;  // the backslash of the open string's last escape
};

inline bool is_json_whitespace(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

inline bool is_bare_token_char(char c) noexcept {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '.' ||
         c == '+' || c == '-';
}

// Replays the structure of `prefix`, which a strict parser has accepted as the
// beginning of a document, to learn what stood open at its end.
inline prefix_state replay_prefix(std::string_view prefix) {
  prefix_state s;
  auto after_value = [&s] {
    s.expect = s.open.empty() ? expectation::end : expectation::comma_or_close;
  };
  string_body_scanner strings;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    if (s.in_string) i = strings.next(prefix, i);
    if (i >= prefix.size()) break;
    const char c = prefix[i];
    if (s.in_string) {
      if (c == '\\') {
        s.last_escape = i;
        ++i;
      } else if (c == '"') {
        s.in_string = false;
        if (s.expect == expectation::key_or_close || s.expect == expectation::key) {
          s.expect = expectation::colon;
        } else {
          after_value();
        }
      }
      continue;
    }
    s.in_bare_token = false;
    switch (c) {
      case '"':
        s.in_string = true;
        s.last_escape = std::string_view::npos;
        break;
      case '[':
        s.open.push_back('[');
        s.expect = expectation::value_or_close;
        break;
      case '{':
        s.open.push_back('{');
        s.expect = expectation::key_or_close;
        break;
      case ']':
      case '}':
        if (!s.open.empty()) s.open.pop_back();
        after_value();
        break;
      case ',':
        s.expect = !s.open.empty() && s.open.back() == '{' ? expectation::key : expectation::element;
        break;
      case ':': s.expect = expectation::value; break;
      default:
        if (is_bare_token_char(c)) {
          s.in_bare_token = true;
          after_value();
        }
        break;
    }
  }
  return s;
}

// Offset of the first value that sits inside more than `max_depth` containers.
inline std::size_t first_value_deeper_than(std::string_view json, std::size_t max_depth) {
  std::size_t depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == ']' || c == '}') {
      --depth;
    } else if (!is_json_whitespace(c) && c != ',' && c != ':') {
      if (depth > max_depth) return i;
      if (c == '[' || c == '{') ++depth;
      if (c == '"') in_string = true;
    }
  }
  return json.size();
}

inline std::string closers_for(const prefix_state& s) {
  std::string closers;
  if (s.in_string) closers.push_back('"');
  for (auto it = s.open.rbegin(); it != s.open.rend(); ++it) closers.push_back(*it == '[' ? ']' : '}');
  return closers;
}

inline std::string_view what_was_expected(const prefix_state& s) noexcept {
  switch (s.expect) {
    case expectation::value: return "a value";
    case expectation::value_or_close: return "a value or ']'";
    case expectation::element: return "a value after ','";
    case expectation::key_or_close: return "a string key or '}'";
    case expectation::key: return "a string key after ','";
    case expectation::colon: return "':' after the key";
    case expectation::comma_or_close:
      return s.open.back() == '{' ? std::string_view("',' or '}'") : std::string_view("',' or ']'");
    case expectation::end: return "the end of the document";
  }
  return "a value";
}

// Shows the character at `offset` the way a reader would type it.
inline std::string quote_character(std::string_view text, std::size_t offset) {
  const auto byte = static_cast<unsigned char>(text[offset]);
  if (byte >= 0x20 && byte < 0x7F) return std::string{'\'', static_cast<char>(byte), '\''};
  const auto cp = decode_utf8(text.substr(offset));
  char buf[16];
  std::snprintf(buf, sizeof buf, "U+%04X", cp ? *cp : byte);
  return buf;
}

// The lead byte of the malformed sequence that `offset` falls in: a parser
// may notice the fault only at a continuation byte.
inline std::size_t first_invalid_utf8_byte(std::string_view text, std::size_t offset) noexcept {
  for (std::size_t back = 1; back <= 3 && back <= offset; ++back) {
    const auto c = static_cast<unsigned char>(text[offset - back]);
    if ((c & 0xC0) == 0x80) continue;
    if (c >= 0xC0 && offset - back + utf8_sequence_length(c) > offset) return offset - back;
    break;
  }
  return offset;
}

inline syntax_error make_error(std::string_view json, json_errc code, std::size_t offset,
                               std::string message) {
  const auto pos = position_of(json, offset);
  syntax_error e;
  e.code = code;
  e.offset = offset;
  e.line = pos.line;
  e.column = pos.column;
  e.message = std::move(message);
  return e;
}

}  // namespace detail

namespace detail {

// Where a string the strict parser stopped in goes wrong: Boost.JSON stops
// at the offending byte, inside an escape it rejects, or (for half a
// surrogate pair) just after it; the escape is to blame only when the offset
// falls within it.
inline syntax_error error_in_string(std::string_view json, std::size_t offset, const prefix_state& state) {
  if (const std::size_t e = state.last_escape; e != std::string_view::npos) {
    std::size_t width = 2;
    if (e + 1 < json.size() && json[e + 1] == 'u') {
      const bool high_surrogate = e + 3 < json.size() && (json[e + 2] == 'd' || json[e + 2] == 'D') &&
                                  std::string_view("89abAB").find(json[e + 3]) != std::string_view::npos;
      width = high_surrogate ? 7 : 6;
    }
    if (offset < e + width) return make_error(json, json_errc::invalid_escape, e, "invalid escape sequence in a string");
  }
  if (static_cast<unsigned char>(json[offset]) < 0x20) {
    return make_error(json, json_errc::control_character, offset,
                      "unescaped control character " + quote_character(json, offset) + " in a string");
  }
  return make_error(json, json_errc::invalid_utf8, first_invalid_utf8_byte(json, offset), "invalid UTF-8 in a string");
}

// Runs the strict SAX pass; returns nothing when `json` is strict JSON.
inline std::optional<syntax_error> find_syntax_error(std::string_view json,
                                                     const parse_options& options) {
  count_text_pass(text_pass::locate_error);
  if (json.size() > options.max_size) {
    return make_error(json, json_errc::too_large, options.max_size,
                      "the document has " + std::to_string(json.size()) +
                          " bytes, more than the limit of " + std::to_string(options.max_size));
  }
  if (std::all_of(json.begin(), json.end(), is_json_whitespace)) {
    return make_error(json, json_errc::empty_document, json.size(), "the document is empty");
  }

  boost::json::basic_parser<syntax_probe> probe(boost_options(options), options.max_depth);
  boost::json::error_code ec;
  std::size_t offset = probe.write_some(false, json.data(), json.size(), ec);

  if (!ec) {
    offset = std::size_t(std::find_if_not(json.begin() + offset, json.end(), is_json_whitespace) -
                         json.begin());
    if (offset == json.size()) return std::nullopt;
    return make_error(json, json_errc::trailing_content, offset,
                      "unexpected " + quote_character(json, offset) + " after the JSON value");
  }

  if (probe.handler().number_out_of_range || ec == boost::json::error::exponent_overflow) {
    while (offset > 0 && is_bare_token_char(json[offset - 1])) --offset;
    return make_error(json, json_errc::number_out_of_range, offset,
                      "the number is beyond the range of a double or a 64-bit integer");
  }
  if (probe.handler().too_deep || ec == boost::json::error::too_deep) {
    return make_error(json, json_errc::too_deep, first_value_deeper_than(json, options.max_depth),
                      "nesting is deeper than the limit of " + std::to_string(options.max_depth));
  }

  offset = std::min(offset, json.size());
  const prefix_state state = replay_prefix(json.substr(0, offset));
  if (offset == json.size()) {
    auto e = make_error(json, json_errc::unexpected_end, offset,
                        state.in_string ? "the input ends inside a string"
                                        : "the input ends where " +
                                              std::string(what_was_expected(state)) +
                                              " was expected");
    e.unclosed = closers_for(state);
    return e;
  }

  const auto byte = static_cast<unsigned char>(json[offset]);
  if (state.in_string) return error_in_string(json, offset, state);
  if (byte >= 0x80 && !decode_utf8(json.substr(offset))) {
    return make_error(json, json_errc::invalid_utf8, first_invalid_utf8_byte(json, offset), "invalid UTF-8");
  }
  if (state.in_bare_token && is_bare_token_char(json[offset])) {
    std::size_t start = offset;
    while (start > 0 && is_bare_token_char(json[start - 1])) --start;
    return make_error(json, json_errc::unexpected_character, start,
                      "invalid number or literal");
  }
  std::string message = "unexpected " + quote_character(json, offset) + ", expected ";
  message += what_was_expected(state);
  if ((byte == ']' || byte == '}') &&
      (state.expect == expectation::element || state.expect == expectation::key)) {
    message = "trailing comma before " + quote_character(json, offset);
  }
  return make_error(json, state.expect == expectation::end ? json_errc::trailing_content
                                                           : json_errc::unexpected_character,
                    offset, std::move(message));
}

}  // namespace detail

namespace detail {

LLMDLQ_INLINE json_parser& thread_checker(const parse_options& options) {
  thread_local std::optional<json_parser> parser;
  if (!parser || parser->options().max_size != options.max_size || parser->options().max_depth != options.max_depth) {
    parser.emplace(options);
  }
  return *parser;
}

}  // namespace detail

LLMDLQ_INLINE std::optional<syntax_error> check_syntax(std::string_view json, const parse_options& options) {
  // simdjson decides; the SAX pass only locates what it rejects. Boost.JSON
  // alone would, for one, reject 1e-2147483648, which simdjson reads as 0.
  auto doc = detail::thread_checker(options).parse(json);
  if (doc) return std::nullopt;
  return std::move(doc.error());
}

LLMDLQ_INLINE bool is_strict_json(std::string_view json, const parse_options& options) {
  return detail::thread_checker(options).accepts(json);
}

LLMDLQ_INLINE syntax_error locate_syntax_error(std::string_view json, const parse_options& options) {
  if (auto error = detail::find_syntax_error(json, options)) return *std::move(error);
  // Both parsers are strict RFC 8259; should they ever disagree, say so rather
  // than invent a position.
  return detail::make_error(json, json_errc::unexpected_character, 0,
                            "rejected by simdjson although it is strict JSON");
}

LLMDLQ_INLINE expected<json_document, syntax_error> json_parser::parse(
    std::string_view json) {
  return parse(json, true);
}

LLMDLQ_INLINE expected<json_document, syntax_error> json_parser::parse(
    simdjson::padded_string_view json) {
  return parse(json, json.padding() < simdjson::SIMDJSON_PADDING);
}

LLMDLQ_INLINE simdjson::error_code json_parser::parse_document(std::string_view json, bool copy) {
  detail::count_text_pass(detail::text_pass::parse);
  // Too large, or empty (simdjson must not see a null buffer): no need to parse.
  if (json.size() > options_.max_size || json.empty()) return simdjson::EMPTY;
  if (allocated_depth_ != options_.max_depth) {
    // simdjson's max_depth counts the levels a value may sit below, plus one.
    const auto capacity =
        std::max<std::size_t>(json.size(), simdjson::dom::MINIMAL_DOCUMENT_CAPACITY);
    if (parser_.allocate(capacity, options_.max_depth + 1) != simdjson::SUCCESS) return simdjson::MEMALLOC;
    allocated_depth_ = options_.max_depth;
  }
  return parser_.parse_into_document(document_, json.data(), json.size(), copy).error();
}

LLMDLQ_INLINE expected<json_document, syntax_error> json_parser::parse(
    std::string_view json, bool copy) {
  const auto error = parse_document(json, copy);
  if (LLMDLQ_LIKELY(!error)) return json_document(document_);
  if (error == simdjson::MEMALLOC) {
    return unexpected(detail::make_error(json, json_errc::out_of_memory, 0, "out of memory"));
  }
  return unexpected(locate_syntax_error(json, options_));
}

LLMDLQ_INLINE bool json_parser::accepts(std::string_view json) { return !parse_document(json, true); }

namespace detail {

// Copies a simdjson value into a Boost.JSON one. Recursion is bounded by the
// parser's depth limit. Of duplicate keys, the last one's value is kept.
inline boost::json::value to_boost(simdjson::dom::element e, boost::json::storage_ptr storage) {
  using t = simdjson::dom::element_type;
  switch (e.type()) {
    case t::ARRAY: {
      boost::json::array array(storage);
      const simdjson::dom::array elements = e.get_array().value_unsafe();
      array.reserve(elements.size());
      for (const auto element : elements) array.push_back(to_boost(element, storage));
      return array;
    }
    case t::OBJECT: {
      boost::json::object object(storage);
      const simdjson::dom::object members = e.get_object().value_unsafe();
      object.reserve(members.size());
      for (const auto member : members) {
        object.insert_or_assign(boost::json::string_view(member.key.data(), member.key.size()),
                                to_boost(member.value, storage));
      }
      return object;
    }
    case t::INT64: return boost::json::value(e.get_int64().value_unsafe(), storage);
    case t::UINT64: return boost::json::value(e.get_uint64().value_unsafe(), storage);
    case t::DOUBLE: return boost::json::value(e.get_double().value_unsafe(), storage);
    case t::STRING: {
      const std::string_view s = e.get_string().value_unsafe();
      return boost::json::value(boost::json::string_view(s.data(), s.size()), storage);
    }
    case t::BOOL: return boost::json::value(e.get_bool().value_unsafe(), storage);
    case t::NULL_VALUE: break;
  }
  return boost::json::value(nullptr, storage);
}

}  // namespace detail

LLMDLQ_INLINE expected<boost::json::value, syntax_error> parse_value(std::string_view json,
                                                                      const parse_options& options) {
  // Parsed by simdjson and copied: the same acceptance, and the same
  // correctly rounded numbers, as json_parser (Boost.JSON 1.81's own number
  // conversion can be an ulp off).
  auto doc = detail::thread_checker(options).parse(json);
  if (!doc) return unexpected(std::move(doc.error()));
  return detail::to_boost(doc->root(), {});
}

LLMDLQ_END_NAMESPACE
