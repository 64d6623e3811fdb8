// SPDX-License-Identifier: MIT
#include "progress_line.hpp"

#include <sys/ioctl.h>

#include <algorithm>
#include <cerrno>
#include <cmath>

#include <fmt/format.h>

namespace llmdlq::cli {
namespace {

constexpr auto redraw_every = std::chrono::milliseconds(200);

// `9s`, `4m05s`, `2h07m`.
std::string duration_text(double seconds) {
  const auto s = static_cast<std::uint64_t>(std::llround(seconds));
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, s % 3600 / 60);
}

void write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const auto n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // a terminal that fails loses its progress, never the run
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

}  // namespace

std::string progress_text(std::string_view label, std::string_view noun, const progress_counts& counts,
                          std::chrono::steady_clock::duration elapsed) {
  const double seconds = std::chrono::duration<double>(elapsed).count();
  // Letters made during the run may be taken too: the count never reads less than done.
  const auto selected = counts.selected ? std::optional(std::max(*counts.selected, counts.done)) : std::nullopt;
  std::string text = fmt::format("{}: {}/{} {}", label, counts.done,
                                 selected ? std::to_string(*selected) : std::string("?"), noun);
  const double rate = seconds > 0 ? static_cast<double>(counts.done) / seconds : 0;
  if (seconds >= 0.5) text += fmt::format(", {:.1f}/s", rate);
  if (counts.tokens) {
    text += counts.token_budget ? fmt::format(", {}/{} tokens", *counts.tokens, *counts.token_budget)
                                : fmt::format(", {} tokens", *counts.tokens);
  }
  if (selected && counts.done < *selected && rate > 0) {
    text += ", " + duration_text(static_cast<double>(*selected - counts.done) / rate) + " left";
  }
  return text;
}

progress_line::progress_line(std::string label, bool wanted, int fd, std::string noun)
    : label_(std::move(label)),
      noun_(std::move(noun)),
      fd_(fd),
      shown_(wanted && ::isatty(fd) == 1),
      start_(std::chrono::steady_clock::now()) {
  winsize size{};
  if (shown_ && ::ioctl(fd_, TIOCGWINSZ, &size) == 0) width_ = size.ws_col;
}

progress_line::~progress_line() { finish(); }

void progress_line::update(const progress_counts& counts) {
  if (!shown_) return;
  const std::lock_guard lock(mutex_);
  if (finished_) return;
  counts_ = counts;
  if (!drawn_ || std::chrono::steady_clock::now() - *drawn_ >= redraw_every) draw();
}

void progress_line::finish() {
  if (!shown_) return;
  const std::lock_guard lock(mutex_);
  if (finished_) return;
  finished_ = true;
  draw();
  write_all(fd_, "\n");
}

void progress_line::clear() {
  if (!shown_) return;
  const std::lock_guard lock(mutex_);
  if (finished_ || !drawn_) return;
  write_all(fd_, "\r\x1b[K");
  drawn_.reset();
}

void progress_line::draw() {
  const auto now = std::chrono::steady_clock::now();
  std::string text = progress_text(label_, noun_, counts_, now - start_);
  // A line wider than the terminal would wrap, and \r would redraw only its last row.
  if (width_ > 1 && text.size() >= width_) text.resize(width_ - 1);
  write_all(fd_, "\r" + text + "\x1b[K");
  drawn_ = now;
}

}  // namespace llmdlq::cli
