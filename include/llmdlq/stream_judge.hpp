// SPDX-License-Identifier: MIT
// A streamed answer judged as it arrives: feed() says, chunk by chunk,
// whether some continuation of the bytes so far could still be accepted,
// and at which byte the answer died when none can, so that a worker stops
// paying for an answer already lost; finish() judges the whole as
// process_llm_response does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/value.hpp>

#include "llmdlq/config.hpp"
#include "llmdlq/envelope.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/process.hpp"
#include "llmdlq/request_context.hpp"
#include "llmdlq/schema.hpp"
#include "llmdlq/taxonomy.hpp"
#include "llmdlq/validation_error.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// What the bytes fed so far allow.
struct stream_verdict {
  bool dead = false;  ///< no continuation of them can be accepted
  /// When dead: the failure the prefix already holds (poison, syntax,
  /// schema, semantic), or refusal when the API said so (refuse()). The whole text's category may still rank above it
  /// (a later marker makes any answer poison); finish() says which.
  failure_category category = failure_category::poison;
  std::size_t offset = 0;  ///< when dead: the byte after which no continuation can be accepted
  std::string message;     ///< when dead: why, with the JSON Pointer of the value when there is one
  /// When dead of a schema or content failure: the error validation gives
  /// the whole document for it (instance and schema paths, keyword, words).
  std::vector<validation_error> errors;
};

/// Judges one streamed response. A prefix is dead only when no text that
/// begins with it can be accepted under the judging options given:
///
/// - always: over limits.max_size bytes, or a prompt-injection marker
///   (poison);
/// - without local repair (repair_mode::off), where the text must be strict
///   JSON: the first byte no JSON text can have there (syntax: prose before
///   the JSON, a single quote, a trailing comma, text after the value), and,
///   without coercion, a value its schema must reject: a type the schema
///   does not allow, a `false` subschema, a name additionalProperties
///   forbids, maxItems or maxProperties exceeded, and a complete string,
///   number or literal that fails a subschema of value keywords (const,
///   enum, maxLength, maximum, pattern, format, ...), all on the subschemas
///   that certainly apply (see detail/stream/schema_tracker.hpp).
///
/// With local repair on (and neither coercion nor the lossy tier accepted,
/// which may change or drop a value), syntax is never death, as repair may
/// mend it; but a text that opens with an object or array answers with it
/// (a later value cannot replace it, see repair.hpp), so the schema is
/// followed as above while the text stays strict JSON. A failure of a
/// string, number, literal or key is then certain only at the next byte
/// that is not a blank, when it closes the token (`,`, `}`, `]`, or `:`
/// after a key): repair could read on over anything else. A text that opens
/// with prose, a fence or a scalar is judged by finish() alone.
///
/// required, minItems, contains, uniqueItems, content rules, confidence and
/// the finish reason are judged by finish(); an API's refusal, whenever it
/// comes, by refuse().
///
/// feed() costs time linear in the bytes, whatever the chunking, and the
/// verdict's offset does not depend on it. The judge keeps the bytes, for
/// finish() and the envelope; its own state is the nesting and the token in
/// hand. The schema must outlive the judge. Not thread-safe: one stream,
/// one judge. Throws nothing but std::bad_alloc.
class stream_judge {
 public:
  LLMDLQ_INLINE stream_judge(const schema& schema, request_context context = {}, process_config config = {});
  LLMDLQ_INLINE stream_judge(stream_judge&&) noexcept;
  LLMDLQ_INLINE stream_judge& operator=(stream_judge&&) noexcept;
  LLMDLQ_INLINE ~stream_judge();

  /// Takes the next bytes of the answer. Once dead, it stays dead; later
  /// bytes are kept, not judged.
  LLMDLQ_INLINE const stream_verdict& feed(std::string_view chunk);

  /// The API said the model refuses (OpenAI's `delta.refusal`): no answer
  /// can be accepted after that, so the verdict is dead (refusal) where the
  /// text received so far ends, and finish() judges with the message.
  LLMDLQ_INLINE const stream_verdict& refuse(std::string message);

  /// The host closed the stream at the dead verdict, so what was received
  /// is only the start of the model's answer: finish()'s envelope records
  /// where (`failure.cancelled_at`), with the tokens received until the
  /// close when the host knows them. Nothing while the verdict is viable.
  LLMDLQ_INLINE void cancel(std::optional<std::uint64_t> tokens = {});

  /// The whole answer judged: exactly process_llm_response(received(), ...)
  /// with the context given, its finish_reason set to `finish_reason` when
  /// that is not empty. A stream closed at its dead verdict (cancel()) is
  /// the start of an answer already lost: its envelope keeps the verdict's
  /// category, code and errors (the text received, judged whole, would only
  /// say that it ends early), unless the text received is poison.
  [[nodiscard]] LLMDLQ_INLINE expected<accepted, envelope> finish(std::string_view finish_reason = {});

  [[nodiscard]] const stream_verdict& verdict() const noexcept { return verdict_; }
  /// The context finish() judges with: a host may add what the stream told
  /// after it began (the API's refusal, a confidence).
  [[nodiscard]] request_context& context() noexcept { return context_; }
  /// The bytes fed so far.
  [[nodiscard]] std::string_view received() const noexcept { return received_; }

  /// The answer so far as a document, for a host that shows progress: the
  /// array or object at its first `{` or `[`, with the members and elements
  /// received whole (a number at the end is not, until a byte after it
  /// comes), each container still open closed; read as strict JSON, so a
  /// text a repair would mend (single quotes, ...) counts up to its first
  /// byte that is not. Nothing before such a value arrives. Not validated:
  /// a value may still fail keywords judged at the end (required, minItems,
  /// ...). Costs a pass over the bytes received.
  [[nodiscard]] LLMDLQ_INLINE std::optional<boost::json::value> partial() const;

 private:
  struct reader;
  LLMDLQ_INLINE void judge_new_bytes(std::size_t from);
  template <class Die>
  void read_json(std::size_t from, std::size_t until, Die& die);

  const schema* schema_;
  request_context context_;
  process_config config_;
  std::string received_;
  std::size_t longest_marker_ = 0;  // longest_injection_marker(config_.judging.guard)
  stream_verdict verdict_;
  std::unique_ptr<reader> reader_;
};

LLMDLQ_END_NAMESPACE

#ifdef LLMDLQ_HEADER_ONLY
#  include "llmdlq/impl/stream_judge.ipp"
#endif
