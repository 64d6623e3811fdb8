// SPDX-License-Identifier: MIT
// Strict RFC 8259 parsing on simdjson, with limits and positioned syntax errors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <boost/json/value.hpp>
#include <simdjson.h>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/error_category.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/fwd.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// Limits applied before and while parsing untrusted JSON.
struct parse_options {
  std::size_t max_size = 16u << 20;  ///< largest accepted document, in bytes
  std::size_t max_depth = 128;       ///< most arrays and objects a value may sit inside
};

/// Why a document is not strict JSON.
enum class json_errc : std::uint8_t {
  empty_document,        ///< no value at all: the input is empty or whitespace only
  too_large,             ///< the input is larger than parse_options::max_size
  too_deep,              ///< a value sits inside more than parse_options::max_depth containers
  invalid_utf8,          ///< a byte sequence that is not UTF-8
  unexpected_character,  ///< a character that cannot stand where it is
  unexpected_end,        ///< the input ends inside a value (see syntax_error::unclosed)
  control_character,     ///< an unescaped control character (U+0000..U+001F) inside a string
  invalid_escape,        ///< a backslash escape JSON does not define, or a broken \u escape
  number_out_of_range,   ///< a number beyond a double's range or an integer beyond 64 bits
  trailing_content,      ///< something other than whitespace after the value
  out_of_memory,         ///< the parser could not allocate its buffers
};

namespace detail {
template <>
struct errc_table<json_errc> {
  static constexpr const char* category = "llmdlq.json";
  static constexpr std::string_view unknown = "unknown";
  static constexpr errc_entry<json_errc> entries[] = {
      {json_errc::empty_document, "empty_document", false, "the document is empty"},
      {json_errc::too_large, "too_large", false, "the document is larger than the size limit"},
      {json_errc::too_deep, "too_deep", false, "arrays and objects nest deeper than the depth limit"},
      {json_errc::invalid_utf8, "invalid_utf8", false, "invalid UTF-8"},
      {json_errc::unexpected_character, "unexpected_character", false, "unexpected character"},
      {json_errc::unexpected_end, "unexpected_end", false, "unexpected end of input"},
      {json_errc::control_character, "control_character", false, "unescaped control character in a string"},
      {json_errc::invalid_escape, "invalid_escape", false, "invalid escape sequence in a string"},
      {json_errc::number_out_of_range, "number_out_of_range", false, "number out of range"},
      {json_errc::trailing_content, "trailing_content", false, "unexpected content after the JSON value"},
      {json_errc::out_of_memory, "out_of_memory", false, "out of memory"},
  };
};
}  // namespace detail

/// A one-line English description of `code`, also the message() of its
/// std::error_code (std::is_error_code_enum is specialised in fwd.hpp),
/// whose category is named "llmdlq.json".
[[nodiscard]] LLMDLQ_INLINE std::string_view describe(json_errc code) noexcept;

/// The enumerator's name ("unexpected_end").
[[nodiscard]] constexpr std::string_view to_string(json_errc code) noexcept { return detail::errc_name(code); }

/// Where and why a document failed to parse.
struct syntax_error {
  json_errc code = json_errc::unexpected_character;
  std::size_t offset = 0;  ///< 0-based byte offset of the first offending byte
  std::size_t line = 1;    ///< 1-based line of `offset`
  std::size_t column = 1;  ///< 1-based column of `offset`, counted in Unicode code points
  std::string message;     ///< what was found and what was expected there
  /// For json_errc::unexpected_end: the characters that would close what is
  /// still open, innermost first (for example `"]}`). Empty otherwise.
  std::string unclosed;

  friend bool operator==(const syntax_error&, const syntax_error&) = default;
};

/// A document json_parser has parsed: a light handle, valid until the next
/// parse() on the same parser or the parser's destruction. It converts to the
/// simdjson element of its root, and llmdlq validates it straight from
/// simdjson's tape.
class json_document {
 public:
  [[nodiscard]] simdjson::dom::element root() const noexcept { return document_->root(); }
  operator simdjson::dom::element() const noexcept { return root(); }  // NOLINT: a document is its root
  [[nodiscard]] const simdjson::dom::document& simdjson_document() const noexcept { return *document_; }

 private:
  friend class json_parser;
  explicit json_document(const simdjson::dom::document& document) noexcept : document_(&document) {}
  const simdjson::dom::document* document_;
};

/// Strict RFC 8259 parser over simdjson's DOM: UTF-8 validated, no comments,
/// no trailing commas, numbers limited to doubles and 64-bit integers.
///
/// One parser per thread: it owns the buffers it reuses from one document to
/// the next. A document it returns stays valid until the next parse() on the
/// same parser or its destruction (simdjson's document lifetime).
///
/// \code
///   llmdlq::json_parser parser;
///   auto doc = parser.parse(R"({"total": 12.5})");
///   if (!doc) std::puts(doc.error().message.c_str());
///   double total = doc->root()["total"].get_double().value();
/// \endcode
class json_parser {
 public:
  explicit json_parser(parse_options options = {}) noexcept : options_(options) {}

  /// Parses a copy of `json` (simdjson needs padding after the last byte).
  [[nodiscard]] LLMDLQ_INLINE expected<json_document, syntax_error> parse(
      std::string_view json);

  /// Parses in place, without a copy, when `json` already carries simdjson's padding.
  [[nodiscard]] LLMDLQ_INLINE expected<json_document, syntax_error> parse(
      simdjson::padded_string_view json);

  /// Whether `json` is strict JSON within the limits: parse()'s verdict
  /// without locating the error, so a rejection costs no second pass.
  [[nodiscard]] LLMDLQ_INLINE bool accepts(std::string_view json);

  [[nodiscard]] const parse_options& options() const noexcept { return options_; }

 private:
  LLMDLQ_INLINE expected<json_document, syntax_error> parse(std::string_view json,
                                                                     bool copy);
  /// simdjson's verdict, with the parser sized for `json`; empty and
  /// oversized input are rejected before it.
  LLMDLQ_INLINE simdjson::error_code parse_document(std::string_view json, bool copy);

  parse_options options_;
  simdjson::dom::parser parser_;
  simdjson::dom::document document_;
  std::size_t allocated_depth_ = 0;
};

namespace detail {
/// This thread's parser for `options`' limits, for callers whose documents
/// never outlive the call (check_syntax, parse_value, schema::is_valid_text).
LLMDLQ_INLINE json_parser& thread_checker(const parse_options& options);
}  // namespace detail

/// Parses `json` into a Boost.JSON value under the same rules and limits as
/// json_parser (it parses with simdjson and copies). Use it where a mutable
/// DOM is wanted (repairs, envelopes). An object cannot hold a key twice:
/// of duplicate keys, the last value is kept.
[[nodiscard]] LLMDLQ_INLINE expected<boost::json::value, syntax_error> parse_value(
    std::string_view json, const parse_options& options = {});

/// The first syntax error in `json`, or nothing when it is strict JSON under
/// `options` (a thread's own parser; the document is not kept).
[[nodiscard]] LLMDLQ_INLINE std::optional<syntax_error> check_syntax(std::string_view json,
                                                                   const parse_options& options = {});

/// Whether `json` is strict JSON under `options`: check_syntax() without the
/// error, for callers that only branch on it.
[[nodiscard]] LLMDLQ_INLINE bool is_strict_json(std::string_view json, const parse_options& options = {});

/// Finds the first syntax error in `json`, which must not be strict JSON under
/// `options`. Linear in the input; allocates only for the error's strings.
[[nodiscard]] LLMDLQ_INLINE syntax_error locate_syntax_error(std::string_view json,
                                                             const parse_options& options);

/// The 1-based line and code-point column of byte `offset` in `text`.
struct text_position {
  std::size_t line = 1;
  std::size_t column = 1;
};
[[nodiscard]] LLMDLQ_INLINE text_position position_of(std::string_view text,
                                                      std::size_t offset) noexcept;

LLMDLQ_END_NAMESPACE

#ifdef LLMDLQ_HEADER_ONLY
#  include "llmdlq/impl/json_parser.ipp"
#endif
