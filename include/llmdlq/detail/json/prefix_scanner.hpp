// SPDX-License-Identifier: MIT
// Strict JSON (RFC 8259) read a byte at a time, for a text that arrives in
// pieces: it says at which byte a prefix stops being the start of any JSON
// text, and tells a listener where each value, key and element begins and
// ends. Its state is the nesting (a byte per level) and the token in hand,
// so any chunking of a text gives the same events at the same offsets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/json/byte_classes.hpp"
#include "llmdlq/detail/json/number_grammar.hpp"
#include "llmdlq/detail/json/string_escape.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail::stream {

enum class value_kind : std::uint8_t { null, boolean, number, string, array, object };

/// The listener's calls, each returning false to stop reading (the
/// listener found the prefix dead):
///
///   bool value_begins(value_kind kind, std::size_t at);   the value's first byte
///   bool element_begins(std::size_t at);                  an array element, before its value_begins
///   bool key_begins(std::size_t at);                      an object member, at its key's quote
///   bool key_ends(std::size_t begin, std::size_t end);    the key's JSON string, quotes included
///   bool leaf_ends(value_kind kind, std::size_t begin, std::size_t end);   a string, number or literal
///   bool container_ends(std::size_t at);                  at the closing bracket
///
/// A number's end is known only at the byte after it, so leaf_ends comes
/// with that byte; a number that ends the text gets none.
class json_prefix {
 public:
  enum class standing : std::uint8_t {
    open,     ///< every byte so far can begin a JSON text
    broken,   ///< broken_at() is the first byte no JSON text has there
    unknown,  ///< the text starts with a byte order mark: left to the whole-text parser
  };

  [[nodiscard]] standing state() const noexcept { return state_; }
  [[nodiscard]] std::size_t broken_at() const noexcept { return broken_at_; }
  [[nodiscard]] std::size_t depth() const noexcept { return stack_.size(); }

  /// Reads `bytes`, which sit at offset `at` of the text. Stops at the
  /// first broken byte or when the listener says stop (then returns false).
  template <class Listener>
  bool feed(std::string_view bytes, std::size_t at, Listener& listener) {
    for (std::size_t i = 0; i < bytes.size() && state_ == standing::open; ++i) {
      if (!step(static_cast<unsigned char>(bytes[i]), at + i, listener)) return false;
    }
    return state_ != standing::broken;
  }

 private:
  enum class mode : std::uint8_t {
    start,           // before the text's value (a byte order mark allowed first)
    value,           // a value must come
    value_or_close,  // just after `[`
    key_or_close,    // just after `{`
    key,             // after `,` in an object
    colon,           // after a key
    comma_or_close,  // after a value in a container
    done,            // after the text's value: whitespace only
    string,          // in a string (key_ says whether it is a key)
    escape,          // after `\` in a string
    unicode,         // in `\uXXXX`, hex_left digits to go
    number,          // in a number, see number_
    literal,         // in true, false or null
  };
  bool break_at(std::size_t at) noexcept {
    state_ = standing::broken;
    broken_at_ = at;
    return false;
  }

  // After a value: what its container (or the text) expects next.
  void after_value() noexcept { mode_ = stack_.empty() ? mode::done : mode::comma_or_close; }

  template <class Listener>
  bool begin_value(unsigned char c, std::size_t at, Listener& listener) {
    value_kind kind;
    switch (c) {
      case '{': kind = value_kind::object; break;
      case '[': kind = value_kind::array; break;
      case '"': kind = value_kind::string; break;
      case 't':
      case 'f': kind = value_kind::boolean; break;
      case 'n': kind = value_kind::null; break;
      default:
        if (number_start(static_cast<char>(c)) == number_part::none) return break_at(at);
        kind = value_kind::number;
    }
    if (!stack_.empty() && stack_.back() == '[' && !listener.element_begins(at)) return false;
    if (!listener.value_begins(kind, at)) return false;
    begin_ = at;
    switch (kind) {
      case value_kind::object:
        stack_.push_back('{');
        mode_ = mode::key_or_close;
        break;
      case value_kind::array:
        stack_.push_back('[');
        mode_ = mode::value_or_close;
        break;
      case value_kind::string:
        key_ = false;
        mode_ = mode::string;
        break;
      case value_kind::number:
        number_ = number_start(static_cast<char>(c));
        mode_ = mode::number;
        break;
      default:
        literal_ = c == 't' ? "true" : c == 'f' ? "false" : "null";
        literal_at_ = 1;
        literal_kind_ = kind;
        mode_ = mode::literal;
    }
    return true;
  }

  template <class Listener>
  bool close(unsigned char c, std::size_t at, Listener& listener) {
    if (stack_.empty() || (c == '}') != (stack_.back() == '{')) return break_at(at);
    stack_.pop_back();
    if (!listener.container_ends(at)) return false;
    after_value();
    return true;
  }

  template <class Listener>
  bool step(unsigned char c, std::size_t at, Listener& listener) {
    switch (mode_) {
      case mode::string:
        if (c == '"') {
          if (key_) {
            mode_ = mode::colon;
            return listener.key_ends(begin_, at + 1);
          }
          after_value();
          return listener.leaf_ends(value_kind::string, begin_, at + 1);
        }
        if (c == '\\') {
          mode_ = mode::escape;
          return true;
        }
        return c >= 0x20 || break_at(at);
      case mode::escape:
        if (c == 'u') {
          mode_ = mode::unicode;
          hex_left_ = 4;
          return true;
        }
        if (simple_escape_value(static_cast<char>(c)) >= 0) {
          mode_ = mode::string;
          return true;
        }
        return break_at(at);
      case mode::unicode:
        if (!is_hex_digit(static_cast<char>(c))) return break_at(at);
        if (--hex_left_ == 0) mode_ = mode::string;
        return true;
      case mode::number:
        if (const number_part next = number_next(number_, static_cast<char>(c)); next != number_part::none) {
          number_ = next;
          return true;
        }
        if (!number_complete(number_)) return break_at(at);
        after_value();
        if (!listener.leaf_ends(value_kind::number, begin_, at)) return false;
        return step(c, at, listener);  // the byte after the number, read in the mode after it
      case mode::literal:
        if (c != static_cast<unsigned char>(literal_[literal_at_])) return break_at(at);
        if (++literal_at_ < literal_.size()) return true;
        after_value();
        return listener.leaf_ends(literal_kind_, begin_, at + 1);
      default: break;
    }
    if (is_json_blank(static_cast<char>(c))) return true;
    switch (mode_) {
      case mode::start:
        if (c == 0xEF && at == 0) {
          state_ = standing::unknown;  // a byte order mark: whether it is allowed is the parser's call
          return true;
        }
        return begin_value(c, at, listener);
      case mode::value: return begin_value(c, at, listener);
      case mode::value_or_close: return c == ']' ? close(c, at, listener) : begin_value(c, at, listener);
      case mode::key_or_close:
        if (c == '}') return close(c, at, listener);
        [[fallthrough]];
      case mode::key:
        if (c != '"') return break_at(at);
        if (!listener.key_begins(at)) return false;
        begin_ = at;
        key_ = true;
        mode_ = mode::string;
        return true;
      case mode::colon:
        if (c != ':') return break_at(at);
        mode_ = mode::value;
        return true;
      case mode::comma_or_close:
        if (c == ',') {
          mode_ = stack_.back() == '{' ? mode::key : mode::value;
          return true;
        }
        if (c == '}' || c == ']') return close(c, at, listener);
        return break_at(at);
      default: return break_at(at);  // done: only whitespace may follow the text's value
    }
  }

  standing state_ = standing::open;
  std::size_t broken_at_ = 0;
  mode mode_ = mode::start;
  std::vector<char> stack_;  // `{` or `[` per open container
  std::size_t begin_ = 0;    // where the string, key or number in hand began
  bool key_ = false;
  std::uint8_t hex_left_ = 0;
  number_part number_ = number_part::zero;
  std::string_view literal_;
  std::size_t literal_at_ = 0;
  value_kind literal_kind_ = value_kind::null;
};

}  // namespace detail::stream
LLMDLQ_END_NAMESPACE
