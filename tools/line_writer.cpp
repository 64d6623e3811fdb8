// SPDX-License-Identifier: MIT
#include "line_writer.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <fmt/format.h>
#include <llmdlq/detail/json/utf8.hpp>

namespace llmdlq::cli {

std::string json_text(const boost::json::value& value) {
  std::string text = boost::json::serialize(value);
  // Serialising escapes quotes, backslashes and controls but copies other
  // bytes: only inside strings can a byte be invalid UTF-8.
  detail::make_valid_utf8(text);
  return text;
}

bool line_writer::write_line(std::string_view line) {
  if (error_ != 0) return false;
  buffer_.append(line).push_back('\n');
  ++queued_;
  return buffer_.size() < limit_ || flush();
}

bool line_writer::flush() {
  if (error_ != 0) return false;
  std::string_view rest = buffer_;
  while (!rest.empty()) {
    const ssize_t n = ::write(fd_, rest.data(), rest.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error_ = n < 0 ? errno : EIO;
      // The lines before the first one cut short arrived whole.
      const std::string_view sent = std::string_view(buffer_).substr(0, buffer_.size() - rest.size());
      written_ += static_cast<std::uint64_t>(std::count(sent.begin(), sent.end(), '\n'));
      buffer_.clear();
      queued_ = 0;
      return false;
    }
    rest.remove_prefix(static_cast<std::size_t>(n));
  }
  written_ += queued_;
  queued_ = 0;
  buffer_.clear();
  return true;
}

std::string line_writer::failure(std::string_view what) const {
  return fmt::format("cannot write {} after {} whole line{}: {}", what, written_, written_ == 1 ? "" : "s",
                     std::strerror(error_));
}

}  // namespace llmdlq::cli
