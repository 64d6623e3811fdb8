// SPDX-License-Identifier: MIT
#include "html.hpp"

#include <llmdlq/detail/utf8.hpp>

namespace llmdlq::cli {

std::string html_escape(std::string_view text) {
  std::string valid(text);
  detail::make_valid_utf8(valid);
  std::string out;
  out.reserve(valid.size() + valid.size() / 8);
  for (const char c : valid) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      case '\0': out += "\xEF\xBF\xBD"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace llmdlq::cli
