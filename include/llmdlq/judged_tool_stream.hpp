// SPDX-License-Identifier: MIT
// A streamed reply's tool calls judged as they arrive: each call's
// arguments go to a stream_judge of its tool's schema as their pieces come
// (two parallel calls, two judges), and a call naming no registered tool is
// dead at its first piece. Once any call is dead the reply cannot be used
// as the model meant it: close the connection.
//
// \code
//   llmdlq::judged_tool_stream stream(tools, llmdlq::chat_stream_format::openai_sse, context, config);
//   while (auto bytes = http.read()) {
//     if (stream.feed(*bytes).dead) { http.close(); break; }
//   }
//   for (auto& judged : stream.finish()) ...  // each call accepted, or its envelope
// \endcode
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "llmdlq/chat_stream.hpp"
#include "llmdlq/config.hpp"
#include "llmdlq/process.hpp"
#include "llmdlq/request_context.hpp"
#include "llmdlq/stream_judge.hpp"
#include "llmdlq/tool_call.hpp"
#include "llmdlq/tool_registry.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// What the calls received so far allow.
struct tool_stream_verdict {
  bool dead = false;                  ///< some call cannot be accepted, whatever follows
  std::optional<std::uint32_t> call;  ///< when dead: the index of the first call that died
  std::string message;                ///< when dead: why, as that call's verdict says
};

/// Judges the tool calls of one streamed reply. The registry must outlive
/// it. Memory is the calls' arguments (an unknown tool's up to
/// judging.limits.max_size), the reply's text up to 1 MiB, and one
/// stream_judge per call; the decoder's limits hold (at most 128 calls).
/// A stream the decoder cannot read on (an error event, a line over its
/// limit) is dead too, with no call named: the transport failed, and the
/// call is better made again than its part judged. Not thread-safe.
class judged_tool_stream {
 public:
  LLMDLQ_INLINE judged_tool_stream(const tool_registry& tools, chat_stream_format format, request_context context = {},
                                   process_config config = {});

  /// Reads the next transport bytes.
  LLMDLQ_INLINE const tool_stream_verdict& feed(std::string_view bytes);

  [[nodiscard]] const tool_stream_verdict& verdict() const noexcept { return verdict_; }
  [[nodiscard]] bool done() const noexcept { return decoder_.done(); }
  [[nodiscard]] const chat_stream_decoder& decoder() const noexcept { return decoder_; }
  /// The calls begun so far.
  [[nodiscard]] std::size_t calls() const noexcept { return calls_.size(); }
  /// The reply's text beside the calls, received so far (its first 1 MiB).
  [[nodiscard]] std::string_view text() const noexcept { return text_; }

  /// Every call begun, in index order, judged whole: as process_tool_calls
  /// would judge them, with the stream's finish reason given to the last.
  /// A stream that had not ended was closed by the host: the dead call's
  /// envelope says where (`failure.cancelled_at`; a call to an unknown tool
  /// needs no place), a call still open is cut off (truncated), and a call
  /// that had ended before the close is judged as it is. The stream's model
  /// is recorded where the context names none.
  [[nodiscard]] LLMDLQ_INLINE std::vector<judged_tool_call> finish();

 private:
  struct call_state {
    tool_call call;                     // its arguments stay empty: the judge keeps them
    std::optional<stream_judge> judge;  // none for a tool no one registered
  };
  LLMDLQ_INLINE call_state& call_at(const tool_call_delta& first);
  LLMDLQ_INLINE void take(const tool_call_delta& delta);

  static constexpr std::size_t max_text = std::size_t{1} << 20;

  const tool_registry* tools_;
  chat_stream_decoder decoder_;
  request_context context_;
  process_config config_;
  std::vector<call_state> calls_;  // in the order the calls began
  std::string text_;
  tool_stream_verdict verdict_;
};

LLMDLQ_END_NAMESPACE

#ifdef LLMDLQ_HEADER_ONLY
#include "llmdlq/impl/judged_tool_stream.ipp"
#endif
