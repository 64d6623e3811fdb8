// SPDX-License-Identifier: MIT
// fit_envelope: every field bounded, then the stored texts cut (their length
// and hash kept) until the envelope's JSON fits its size limit.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include <boost/json/serialize.hpp>
#include <fmt/format.h>

#include "llmdlq/config.hpp"
#include "llmdlq/envelope.hpp"
#include "llmdlq/impl/envelope/writer.ipp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

// Bytes each byte takes inside a JSON string as Boost.JSON writes it: control
// bytes as \u00XX (or \n, \t, ...), quotes and backslashes with a backslash,
// everything else (UTF-8 included) as it is.
inline constexpr auto json_string_width = [] {
  std::array<std::uint8_t, 256> width{};
  width.fill(1);
  for (std::size_t c = 0; c < 0x20; ++c) width[c] = 6;
  for (const unsigned char c : {'\b', '\t', '\n', '\f', '\r', '"', '\\'}) width[c] = 2;
  return width;
}();

// The number of bytes at the start of `text` whose escaped form takes at most
// `budget` bytes, and that escaped size. Reads no further than it must.
inline std::pair<std::size_t, std::size_t> escaped_prefix(std::string_view text, std::size_t budget) noexcept {
  const auto* width = json_string_width.data();
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  std::size_t used = 0;
  std::size_t n = 0;
  for (; n < text.size() && used + width[bytes[n]] <= budget; ++n) used += width[bytes[n]];
  return {n, used};
}

// The length of the longest prefix of valid UTF-8 `text` that takes at most
// `budget` bytes escaped and ends on a code point boundary.
inline std::size_t escaped_prefix_length(std::string_view text, std::size_t budget) noexcept {
  std::size_t n = escaped_prefix(text, budget).first;
  while (n > 0 && n < text.size() && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  return n;
}

// What marks a string field that was cut.
enum class cut_mark : std::uint8_t {
  none,      // a plain prefix
  ellipsis,  // prefix…
  hash,      // prefix…sha256:<hex of the whole>: unique, and the same everywhere
};

// Cuts `text` when its JSON takes more than `limit` bytes (escaped, without
// quotes): it keeps the longest prefix that fits with the mark. `pointer`
// keeps a JSON Pointer valid (no "~" left without its digit).
inline void bound_text(std::string& text, std::size_t limit, cut_mark mark, bool pointer = false) {
  if (text.size() <= limit / 6 || escaped_prefix(text, limit).first == text.size()) return;
  std::string marker;
  if (mark == cut_mark::ellipsis) marker = "\u2026";
  if (mark == cut_mark::hash) marker = "\u2026sha256:" + sha256_hex(text);
  std::size_t keep = escaped_prefix_length(text, limit - marker.size());
  if (pointer && keep > 0 && text[keep - 1] == '~') --keep;
  text.resize(keep);
  text += marker;
}

inline constexpr std::string_view dropped_extensions_key = "llmdlq_dropped";
inline constexpr std::string_view reduced_envelope_key = "llmdlq_reduced";

inline std::size_t replace_extensions(envelope& e, std::string_view key, std::string note) {
  e.extensions.clear();
  e.extensions.emplace(key, std::move(note));
  return boost::json::serialize(e.extensions).size();
}

// Bounds every string field of `e` (see envelope_limits) and removes
// non-finite numbers. Returns the size of the extensions' JSON.
inline std::size_t bound_fields(envelope& e) {
  using limits = envelope_limits;
  bound_text(e.dlq_id, limits::label, cut_mark::hash);
  for (std::string* id : {&e.idempotency_key, &e.record_id, &e.correlation_id, &e.trace_id}) {
    bound_text(*id, limits::identifier, cut_mark::hash);
  }
  bound_text(e.source_ref.uri, limits::uri, cut_mark::hash);
  for (std::string* label :
       {&e.source_ref.sha256, &e.prompt.template_id, &e.prompt.version, &e.prompt.sha256, &e.model.provider,
        &e.model.name, &e.model.version, &e.versions.schema, &e.versions.prompt, &e.versions.model, &e.versions.ocr,
        &e.versions.pipeline, &e.raw_response.sha256, &e.origin.service, &e.origin.worker, &e.origin.topic}) {
    bound_text(*label, limits::label, cut_mark::hash);
  }
  if (e.original_input) bound_text(e.original_input->sha256, limits::label, cut_mark::hash);
  if (e.tool_call) {
    bound_text(e.tool_call->name, limits::label, cut_mark::hash);
    bound_text(e.tool_call->id, limits::identifier, cut_mark::hash);
  }
  bound_text(e.failure.code, limits::label, cut_mark::none);
  bound_text(e.failure.message, limits::message, cut_mark::ellipsis);
  for (auto& error : e.failure.errors) {
    bound_text(error.instance_path, limits::error_text, cut_mark::hash, true);
    bound_text(error.schema_path, limits::error_text, cut_mark::hash);
    bound_text(error.keyword, limits::keyword, cut_mark::ellipsis);
    bound_text(error.message, limits::error_text, cut_mark::ellipsis);
  }
  for (auto& attempt : e.attempts.history) {
    bound_text(attempt.strategy, limits::keyword, cut_mark::ellipsis);
    bound_text(attempt.outcome, limits::keyword, cut_mark::ellipsis);
    bound_text(attempt.model, limits::label, cut_mark::hash);
    bound_text(attempt.fingerprint, limits::label, cut_mark::hash);
  }
  if (e.redactions.size() > limits::redactions) e.redactions.resize(limits::redactions);
  for (auto& r : e.redactions) {
    for (std::string* word : {&r.field, &r.kind, &r.action}) bound_text(*word, limits::keyword, cut_mark::ellipsis);
    bound_text(r.path, limits::error_text, cut_mark::hash, true);
    bound_text(r.key_id, limits::label, cut_mark::hash);
    if (r.spans.size() > redaction_summary::max_spans) r.spans.resize(redaction_summary::max_spans);
  }
  for (captured_text* c : {&e.raw_response, e.original_input ? &*e.original_input : nullptr}) {
    if (c && c->sealed) {
      bound_text(c->sealed->key_id, limits::label, cut_mark::hash);
      bound_text(c->sealed->algorithm, limits::keyword, cut_mark::ellipsis);
    }
  }
  for (std::optional<double>* number : {&e.model.temperature, &e.confidence.score, &e.confidence.threshold}) {
    if (*number && !std::isfinite(**number)) number->reset();
  }
  if (e.extensions.empty()) return 0;
  const std::size_t size = boost::json::serialize(e.extensions).size();
  if (size <= limits::extensions) return size;
  return replace_extensions(e, dropped_extensions_key,
                            fmt::format("the extensions took {} bytes of JSON, over the limit of {}", size,
                                        limits::extensions));
}

// An upper bound on the JSON size of `e`: every byte of text escaped to six
// (\u00XX), plus room for the fixed fields. Cheap, and usually enough to
// show that an envelope fits without serializing it.
inline std::size_t envelope_size_bound(const envelope& e, std::size_t extensions_size) {
  std::size_t text = e.dlq_id.size() + e.idempotency_key.size() + e.record_id.size() + e.correlation_id.size() +
                     e.trace_id.size() + e.source_ref.uri.size() + e.source_ref.sha256.size() +
                     e.prompt.template_id.size() + e.prompt.version.size() + e.prompt.sha256.size() +
                     e.model.provider.size() + e.model.name.size() + e.model.version.size() + e.versions.schema.size() +
                     e.versions.prompt.size() + e.versions.model.size() + e.versions.ocr.size() +
                     e.versions.pipeline.size() + e.failure.code.size() + e.failure.message.size() +
                     e.origin.service.size() + e.origin.worker.size() + e.origin.topic.size() +
                     e.raw_response.sha256.size() +
                     (e.tool_call ? e.tool_call->name.size() + e.tool_call->id.size() + 48 : 0) +
                     (e.redrive ? e.redrive->of.size() + 48 : 0);
  if (e.raw_response.text) text += e.raw_response.text->size();
  if (e.original_input)
    text += e.original_input->sha256.size() + (e.original_input->text ? e.original_input->text->size() : 0);
  for (const auto& error : e.failure.errors) {
    text += error.instance_path.size() + error.schema_path.size() + error.keyword.size() + error.message.size() + 96;
  }
  for (const auto& a : e.attempts.history) {
    text += a.strategy.size() + a.outcome.size() + a.model.size() + a.fingerprint.size() + 160;
  }
  for (const auto& r : e.redactions) {
    text += r.field.size() + r.kind.size() + r.action.size() + r.path.size() + r.key_id.size() + 96 +
            48 * r.spans.size();
  }
  for (const captured_text* c : {&e.raw_response, e.original_input ? &*e.original_input : nullptr}) {
    if (c && c->sealed) {
      text += c->sealed->key_id.size() + c->sealed->algorithm.size() + c->sealed->nonce.size() +
              c->sealed->ciphertext.size() + 128;
    }
  }
  return 6 * text + 2048 + extensions_size;
}

inline constexpr std::size_t cut_flag_size = std::string_view(R"(,"cut":true)").size();

// A stored text taken out of its envelope while the rest is measured, then
// given back whole or cut to the room it is granted.
class shared_text {
 public:
  // `enough`: more room than the text can be granted; its size is measured up to there.
  shared_text(captured_text* captured, std::size_t enough) {
    if (!captured || !captured->text || captured->text->empty()) return;
    captured_ = captured;
    whole_ = std::move(*captured->text);
    captured->text.emplace();
    if (captured->base64) {
      needed_ = whole_.size();
    } else {
      const auto [length, size] = escaped_prefix(whole_, enough);
      needed_ = length < whole_.size() ? enough + 1 : size;
    }
    was_cut_ = captured->cut;
    captured->cut = true;  // measured as if cut; the flag's bytes come back if it is not
  }

  [[nodiscard]] std::size_t needed() const noexcept { return needed_; }
  // The bytes the measured envelope saves when this text stays whole.
  [[nodiscard]] std::size_t flag_refund() const noexcept { return captured_ && !was_cut_ ? cut_flag_size : 0; }

  // Puts back the whole text when its JSON fits in `room` (with the flag's
  // bytes it then saves), else the longest prefix whose JSON fits.
  void give(std::size_t room) {
    if (!captured_) return;
    if (needed_ <= room + flag_refund()) {
      keep_whole();
      return;
    }
    if (captured_->base64) {
      whole_.resize(room - room % 4);
    } else {
      whole_.resize(escaped_prefix_length(whole_, room));
    }
    *captured_->text = std::move(whole_);
  }

  void keep_whole() {
    if (!captured_) return;
    captured_->cut = was_cut_;
    *captured_->text = std::move(whole_);
  }

 private:
  captured_text* captured_ = nullptr;
  std::string whole_;
  std::size_t needed_ = 0;
  bool was_cut_ = false;
};

// Splits `room` between the two texts: one that needs at most half keeps all
// of it and the other gets the rest; else each gets half.
inline void share_room(shared_text& a, shared_text& b, std::size_t room) {
  if (a.needed() + b.needed() <= room + a.flag_refund() + b.flag_refund()) {
    a.keep_whole();
    b.keep_whole();
  } else if (a.needed() <= room / 2) {
    a.give(a.needed());
    b.give(room - a.needed() + a.flag_refund());
  } else if (b.needed() <= room / 2) {
    b.give(b.needed());
    a.give(room - b.needed() + b.flag_refund());
  } else {
    a.give(room / 2);
    b.give(room - room / 2);
  }
}

// Removes elements from the end of `list` until the envelope's size `size`
// is at most `target`; `json_size` gives an element's JSON size.
template <class T, class Measure>
void drop_trailing(std::vector<T>& list, std::size_t& size, std::size_t target, Measure json_size) {
  if (size <= target || list.empty()) return;
  std::vector<std::size_t> sizes;
  sizes.reserve(list.size());
  for (const auto& item : list) sizes.push_back(json_size(item) + (sizes.empty() ? 0 : 1));  // with its comma
  while (size > target && !list.empty()) {
    size -= std::min(size, sizes[list.size() - 1]);
    list.pop_back();
  }
}

// Keeps only the envelope's identity, hashes, failure summary, triage,
// confidence, attempt counts, origin and redrive link: what fits in
// envelope_limits::min_bytes.
inline void reduce_envelope(envelope& e) {
  e.source_ref.uri.clear();
  e.prompt.template_id.clear();
  e.prompt.version.clear();
  e.model = {};
  e.versions = {};
  // A tool call keeps its index and the start of its name, with room taken from the message.
  std::size_t message_room = envelope_limits::reduced_message;
  if (e.tool_call) {
    e.tool_call->id.clear();
    bound_text(e.tool_call->name, envelope_limits::reduced_tool_name, cut_mark::ellipsis);
    message_room -= envelope_limits::reduced_tool_name + 64;
  }
  if (e.redrive) message_room -= 80;  // the link (`"redrive":{"of":"<dlq_id>","count":N}`) is kept whole
  bound_text(e.failure.message, message_room, cut_mark::ellipsis);
  e.failure.errors.clear();
  e.attempts.history.clear();
  e.raw_response.sealed.reset();
  if (e.original_input) e.original_input->sealed.reset();
  if (e.redactions.size() > envelope_limits::reduced_redactions)
    e.redactions.resize(envelope_limits::reduced_redactions);
  for (auto& r : e.redactions) {
    r.path.clear();
    r.spans.clear();
  }
  replace_extensions(e, reduced_envelope_key,
                     "the envelope exceeded its size limit: only its identity, hashes and failure summary were kept");
}

inline std::size_t fit_large_envelope(envelope& e, std::size_t max_bytes) {
  const std::size_t enough = max_bytes + cut_flag_size + 1;
  shared_text raw(&e.raw_response, enough);
  shared_text input(e.original_input ? &*e.original_input : nullptr, enough);
  std::size_t size = serialize(e).size();
  // The other fields give way until the texts get a quarter of the room, or all they need.
  const std::size_t target = max_bytes - std::min(raw.needed() + input.needed(), max_bytes / 4);
  if (size > target && !e.failure.errors.empty()) {
    drop_trailing(e.failure.errors, size, target,
                  [](const validation_error& error) { return boost::json::serialize(to_json(error)).size(); });
    size = serialize(e).size();
  }
  if (size > target && !e.attempts.history.empty()) {
    drop_trailing(e.attempts.history, size, target,
                  [](const attempt_record& a) { return boost::json::serialize(attempt_to_json(a)).size(); });
    size = serialize(e).size();
  }
  if (size > target && !e.extensions.empty()) {
    boost::json::object kept = std::move(e.extensions);
    replace_extensions(e, dropped_extensions_key, "the extensions did not fit in the envelope's size limit");
    if (const std::size_t smaller = serialize(e).size(); smaller < size) {
      size = smaller;
    } else {
      e.extensions = std::move(kept);
    }
  }
  if (size > target && (e.raw_response.sealed || (e.original_input && e.original_input->sealed))) {
    e.raw_response.sealed.reset();
    if (e.original_input) e.original_input->sealed.reset();
    size = serialize(e).size();
  }
  if (size > max_bytes) {
    reduce_envelope(e);
    size = serialize(e).size();
  }
  share_room(raw, input, max_bytes - std::min(size, max_bytes));
  return serialize(e).size();
}

}  // namespace detail

LLMDLQ_INLINE std::size_t fit_envelope(envelope& e, std::size_t max_bytes) {
  max_bytes = std::max(max_bytes, envelope_limits::min_bytes);
  const std::size_t extensions_size = detail::bound_fields(e);
  if (const std::size_t bound = detail::envelope_size_bound(e, extensions_size); bound <= max_bytes) return bound;
  return detail::fit_large_envelope(e, max_bytes);
}

LLMDLQ_END_NAMESPACE
