// SPDX-License-Identifier: MIT
// A long run's progress on a terminal: one line redrawn in place (done of
// selected, letters per second, tokens against the budget, time left), and
// nothing at all when the output is no terminal or the command prints JSON.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace llmdlq::cli {

/// Where a run is.
struct progress_counts {
  std::uint64_t done = 0;
  std::optional<std::uint64_t> selected;     ///< nothing: not known, shown as `done/?`
  std::optional<std::int64_t> tokens;        ///< spent so far; nothing: the run spends none
  std::optional<std::int64_t> token_budget;  ///< the budget the tokens count against, when one is set
};

/// The line for `counts` after `elapsed`, without \r or escapes:
/// `replay: 12/40 letters, 3.1/s, 1200/50000 tokens, 9s left`.
[[nodiscard]] std::string progress_text(std::string_view label, std::string_view noun, const progress_counts& counts,
                                        std::chrono::steady_clock::duration elapsed);

/// One line on a terminal redrawn with \r and erase-to-end-of-line, at most
/// every 200 ms. Thread-safe: a run may update it from its workers.
///
///     progress_line progress("replay", !json);
///     progress.update({.done = 3, .selected = 40});
///     progress.finish();  // the last counts, and a newline
class progress_line {
 public:
  /// Draws on `fd` only when `wanted` and `fd` is a terminal; otherwise
  /// every call does nothing.
  explicit progress_line(std::string label, bool wanted = true, int fd = STDERR_FILENO, std::string noun = "letters");
  progress_line(const progress_line&) = delete;
  progress_line& operator=(const progress_line&) = delete;
  ~progress_line();  ///< finish()

  /// Whether anything is drawn at all.
  [[nodiscard]] bool shown() const noexcept { return shown_; }

  /// Records `counts`; redraws when the last drawing is old enough (the first at once).
  void update(const progress_counts& counts);
  /// Draws the last counts once more and ends the line; later calls do nothing.
  void finish();
  /// Erases the line, so that a message can go to the same terminal; the next update draws it again.
  void clear();

 private:
  void draw();  // with mutex_ held

  std::string label_;
  std::string noun_;
  int fd_;
  bool shown_;
  std::size_t width_ = 0;  // the terminal's columns; 0: unknown
  std::mutex mutex_;
  progress_counts counts_;
  std::chrono::steady_clock::time_point start_;
  std::optional<std::chrono::steady_clock::time_point> drawn_;
  bool finished_ = false;
};

}  // namespace llmdlq::cli
