// SPDX-License-Identifier: MIT
// A streamed chat completion decoded as its bytes arrive: OpenAI's server-
// sent events (`data: {chunk}` lines, comments and keep-alives, `[DONE]`),
// Anthropic's (`message_start` … `message_stop`) or Ollama's `/api/chat`
// lines of JSON. What comes out is the answer's text in pieces, the tool
// calls' arguments in pieces (judged_tool_stream.hpp), and, once known, the
// finish reason, the refusal and the usage.
// With stream_judge (judged_stream.hpp) a worker that reads the stream with
// its own HTTP client stops at the first impossible byte.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/json_parser.hpp"
#include "llmdlq/token_usage.hpp"

LLMDLQ_BEGIN_NAMESPACE

enum class chat_stream_format : std::uint8_t {
  openai_sse,     ///< `stream: true` chat completions: `data:` events, `data: [DONE]` last
  ollama_ndjson,  ///< Ollama's `/api/chat` with `stream: true`: a JSON object per line, `done: true` last
  anthropic_sse,  ///< Anthropic's messages with `stream: true`: typed events, `message_stop` last
};

/// A piece of a streamed tool call. OpenAI sends a call's id and name with
/// its first piece and its arguments' JSON text in later ones, calls one
/// after the other; Anthropic opens a `tool_use` block with them and sends
/// `input_json_delta` pieces; Ollama sends each call whole.
struct tool_call_delta {
  std::uint32_t index = 0;  ///< which call: 0, 1, ... in the order the calls began
  std::string id;           ///< with the call's first piece, when the API gives one
  std::string name;         ///< with the call's first piece
  std::string arguments;    ///< the next bytes of the arguments' JSON text
  friend bool operator==(const tool_call_delta&, const tool_call_delta&) = default;
};

/// Decodes one streamed answer. Each feed() returns the answer text the
/// bytes completed (events cut anywhere, even inside a UTF-8 sequence, are
/// put together first). A line longer than `max_line_bytes`, an event that
/// is not JSON or not a chunk, or an error event stops the decoding:
/// error() says why and later bytes are ignored.
///
/// Memory is the longest line plus what one event holds. Not thread-safe.
class chat_stream_decoder {
 public:
  explicit chat_stream_decoder(chat_stream_format format, std::size_t max_line_bytes = std::size_t{1} << 20)
      : format_(format), max_line_(max_line_bytes) {}

  /// Reads the next transport bytes; returns the answer text they completed
  /// (valid until the next feed).
  [[nodiscard]] LLMDLQ_INLINE std::string_view feed(std::string_view bytes);

  /// The tool-call pieces the last feed() completed, in the stream's order
  /// (valid until the next feed).
  [[nodiscard]] const std::vector<tool_call_delta>& tool_deltas() const noexcept { return deltas_; }

  /// The stream said it is complete (`[DONE]`, `done: true`).
  [[nodiscard]] bool done() const noexcept { return done_; }
  /// Why the stream cannot be read further, when it cannot.
  [[nodiscard]] const std::optional<std::string>& error() const noexcept { return error_; }
  /// The finish reason (`stop`, `length`, `tool_calls`, ...) once the
  /// stream gave it; Anthropic's `max_tokens` reads as `length`.
  [[nodiscard]] const std::string& finish_reason() const noexcept { return finish_reason_; }
  /// The API's refusal message (OpenAI's `delta.refusal`), when it gave one.
  [[nodiscard]] const std::optional<std::string>& refusal() const noexcept { return refusal_; }
  /// The usage, once the stream reported it (OpenAI with
  /// `stream_options.include_usage`; Ollama's `prompt_eval_count` and `eval_count`).
  [[nodiscard]] const std::optional<token_usage>& usage() const noexcept { return usage_; }
  /// The model, as the stream names it.
  [[nodiscard]] const std::string& model() const noexcept { return model_; }
  /// Events that carried answer text or tool-call arguments so far (about one per token).
  [[nodiscard]] std::size_t content_events() const noexcept { return content_events_; }
  /// Events of the format read so far, with text or without: SSE `data:`
  /// events (`[DONE]` too) or Ollama's lines. None once the bytes have ended
  /// means they were not a stream of the format at all: an HTML error page,
  /// a whole JSON completion, another format's stream, nothing.
  [[nodiscard]] std::size_t events() const noexcept { return events_; }

 private:
  LLMDLQ_INLINE void take_line(std::string_view line);
  LLMDLQ_INLINE void take_event(std::string_view json);
  LLMDLQ_INLINE void take_openai(simdjson::dom::element chunk);
  LLMDLQ_INLINE void take_ollama(simdjson::dom::element chunk);
  LLMDLQ_INLINE void take_anthropic(simdjson::dom::element event);
  // A new call, keyed by the provider's number for it (-1: none); nothing past the limit.
  LLMDLQ_INLINE std::optional<std::uint32_t> begin_call(std::int64_t key, std::string_view id, std::string_view name);
  // The latest call begun under `key`.
  [[nodiscard]] LLMDLQ_INLINE std::optional<std::uint32_t> call_of(std::int64_t key) const noexcept;
  LLMDLQ_INLINE void add_delta(std::uint32_t index, std::string_view id, std::string_view name,
                               std::string_view arguments);
  void fail(std::string why) {
    if (!error_) error_ = std::move(why);
  }

  chat_stream_format format_;
  std::size_t max_line_;
  json_parser parser_;
  std::string line_;           // the line in hand, not yet ended
  std::string data_;           // an SSE event's data lines so far
  bool skip_newline_ = false;  // a CR ended the last line: an LF right after it is part of that end
  std::string text_;           // what the current feed() decoded
  bool done_ = false;
  std::optional<std::string> error_;
  std::string finish_reason_;
  std::optional<std::string> refusal_;
  std::optional<token_usage> usage_;
  std::string model_;
  std::size_t content_events_ = 0;
  std::size_t events_ = 0;
  std::vector<tool_call_delta> deltas_;  // what the current feed() decoded
  struct call_slot {
    std::int64_t key;     // the provider's number for the call (OpenAI's index, Anthropic's block), -1 for none
    std::string id;       // its id, once given
    bool got_arguments;   // a piece of its arguments was not empty
    std::string initial;  // Anthropic's `input` at the block's start
  };
  std::vector<call_slot> call_slots_;  // the calls begun, by their index
  std::size_t max_tool_calls_ = 128;
};

LLMDLQ_END_NAMESPACE

#ifdef LLMDLQ_HEADER_ONLY
#include "llmdlq/impl/chat_stream.ipp"
#endif
