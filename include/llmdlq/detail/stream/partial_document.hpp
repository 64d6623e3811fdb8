// SPDX-License-Identifier: MIT
// The complete part of a JSON text that is still arriving, as a document:
// its finished members and elements, each array or object still open closed
// where its last finished value ends. For a host that shows progress.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/json/prefix_scanner.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail::stream {

// Where each open container's finished part ends, as json_prefix reads on.
class finished_part {
 public:
  bool value_begins(value_kind kind, std::size_t at) {
    if (kind == value_kind::array || kind == value_kind::object) {
      open_.push_back({kind == value_kind::array ? ']' : '}', at + 1});
    }
    return true;
  }
  static bool element_begins(std::size_t) noexcept { return true; }
  static bool key_begins(std::size_t) noexcept { return true; }
  static bool key_ends(std::size_t, std::size_t) noexcept { return true; }
  bool leaf_ends(value_kind, std::size_t, std::size_t end) {
    finished(end);
    return true;
  }
  bool container_ends(std::size_t at) {
    open_.pop_back();
    finished(at + 1);
    return true;
  }

  // The text of the finished part of `text` (read from `begin`), closed.
  [[nodiscard]] std::string closed(std::string_view text, std::size_t begin) const {
    if (open_.empty()) return whole_end_ ? std::string(text.substr(begin, *whole_end_ - begin)) : std::string();
    std::string out(text.substr(begin, open_.back().cut - begin));
    for (auto frame = open_.rbegin(); frame != open_.rend(); ++frame) out += frame->closer;
    return out;
  }

 private:
  void finished(std::size_t end) {
    if (open_.empty()) {
      whole_end_ = end;
    } else {
      open_.back().cut = end;
    }
  }

  struct frame {
    char closer;
    std::size_t cut;  // after the last finished member or element, or after the opening bracket
  };
  std::vector<frame> open_;
  std::optional<std::size_t> whole_end_;  // the top value finished here
};

// The finished part of the array or object that begins at the first `{` or
// `[` of `text`, or nothing: no such value, or what follows is not strict
// JSON up to where it stops making sense. A number that ends the text is
// left out (more digits may follow).
inline std::optional<boost::json::value> partial_document(std::string_view text) {
  const std::size_t begin = text.find_first_of("{[");
  if (begin == std::string_view::npos) return std::nullopt;
  json_prefix reader;
  finished_part part;
  reader.feed(text.substr(begin), begin, part);
  boost::system::error_code ec;
  auto value = boost::json::parse(part.closed(text, begin), ec);
  if (ec) return std::nullopt;
  return value;
}

}  // namespace detail::stream
LLMDLQ_END_NAMESPACE
