// SPDX-License-Identifier: MIT
// A streamed chat completion judged as it arrives, for a worker that reads
// the stream with its own HTTP client: feed() takes the transport's bytes
// (server-sent events or Ollama's lines), decodes the answer's text and
// gives it to a stream_judge; once the verdict is dead, close the
// connection: the rest is not paid for.
//
// \code
//   llmdlq::judged_stream stream(schema, llmdlq::chat_stream_format::openai_sse, context, options);
//   while (auto bytes = http.read()) {
//     if (stream.feed(*bytes).dead) { http.close(); break; }
//   }
//   auto result = stream.finish();  // accepted, or the envelope of what was received
// \endcode
#pragma once

#include <string_view>

#include "llmdlq/chat_stream.hpp"
#include "llmdlq/config.hpp"
#include "llmdlq/process.hpp"
#include "llmdlq/request_context.hpp"
#include "llmdlq/schema.hpp"
#include "llmdlq/stream_judge.hpp"

LLMDLQ_BEGIN_NAMESPACE

class judged_stream {
 public:
  judged_stream(const schema& schema, chat_stream_format format, request_context context = {},
                process_config config = {})
      : decoder_(format), judge_(schema, std::move(context), std::move(config)) {}

  /// Reads the next transport bytes. The verdict is dead once the answer
  /// received cannot be accepted, whatever follows.
  const stream_verdict& feed(std::string_view bytes) {
    const std::string_view text = decoder_.feed(bytes);
    if (!text.empty()) judge_.feed(text);
    if (decoder_.refusal() && !judge_.verdict().dead) judge_.refuse(*decoder_.refusal());
    return judge_.verdict();
  }

  [[nodiscard]] const stream_verdict& verdict() const noexcept { return judge_.verdict(); }
  /// The stream said it is complete.
  [[nodiscard]] bool done() const noexcept { return decoder_.done(); }
  [[nodiscard]] const chat_stream_decoder& decoder() const noexcept { return decoder_; }
  /// The answer's text received so far.
  [[nodiscard]] std::string_view received() const noexcept { return judge_.received(); }
  /// The request's context, which finish() builds the envelope from: what the
  /// host learns while reading (an idempotency key from the transport's
  /// bytes, say) may be set here before it.
  [[nodiscard]] request_context& context() noexcept { return judge_.context(); }

  /// The answer received, judged whole: with the stream's finish reason
  /// (`length`, ...) and refusal when it gave them, and, for a stream that
  /// was cut before its end, as received. A dead stream that had not ended
  /// was closed by the host: the envelope says where (`failure.cancelled_at`)
  /// and after how many of the stream's text events.
  [[nodiscard]] expected<accepted, envelope> finish() {
    if (decoder_.refusal()) judge_.context().refusal = *decoder_.refusal();
    if (!decoder_.done() && !judge_.context().cancelled_at) judge_.cancel(decoder_.content_events());
    return judge_.finish(decoder_.finish_reason());
  }

 private:
  chat_stream_decoder decoder_;
  stream_judge judge_;
};

LLMDLQ_END_NAMESPACE
