// SPDX-License-Identifier: MIT
// Fuzzing the redactor: nothing it detects survives (a second pass over its
// output finds nothing and changes nothing), the output stays within a
// constant factor of the input, summaries describe spans of the input, and
// a JSON text keeps each value in its place, unchanged unless something was
// found in it, and stays JSON when redacted as a document.
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <llmdlq/envelope.hpp>
#include <llmdlq/json_parser.hpp>
#include <llmdlq/redaction.hpp>

namespace {

// A value of a JSON text and where it stands: its bytes, and for an object
// or an array its members' keys and values in order.
struct value_place {
  char kind = 0;  // '{', '[', '"', or 'w' for a bare word (number, literal, placeholder)
  std::size_t begin = 0, end = 0;
  std::vector<value_place> keys, items;
};

// Reads a JSON text's values; a bare word may be anything up to a
// delimiter, so that a placeholder standing where a number stood reads as
// a value too.
class place_reader {
 public:
  explicit place_reader(std::string_view text) : text_(text) {}

  std::optional<value_place> document() {
    auto v = value(0);
    skip();
    if (!v || at_ != text_.size()) return std::nullopt;
    return v;
  }

 private:
  void skip() {
    while (at_ < text_.size() && std::string_view(" \t\n\r").find(text_[at_]) != std::string_view::npos) ++at_;
  }

  std::optional<value_place> value(int depth) {
    skip();
    if (depth > 256 || at_ >= text_.size()) return std::nullopt;
    value_place v;
    v.begin = at_;
    const char c = text_[at_];
    if (c == '{' || c == '[') {
      v.kind = c;
      const char close = c == '{' ? '}' : ']';
      ++at_;
      skip();
      if (at_ < text_.size() && text_[at_] == close) {
        v.end = ++at_;
        return v;
      }
      for (;;) {
        if (c == '{') {
          auto key = value(depth + 1);
          if (!key || key->kind != '"') return std::nullopt;
          v.keys.push_back(std::move(*key));
          skip();
          if (at_ >= text_.size() || text_[at_] != ':') return std::nullopt;
          ++at_;
        }
        auto item = value(depth + 1);
        if (!item) return std::nullopt;
        v.items.push_back(std::move(*item));
        skip();
        if (at_ >= text_.size()) return std::nullopt;
        if (text_[at_] == close) {
          v.end = ++at_;
          return v;
        }
        if (text_[at_++] != ',') return std::nullopt;
      }
    }
    if (c == '"') {
      for (++at_; at_ < text_.size() && text_[at_] != '"'; ++at_) {
        if (text_[at_] == '\\') ++at_;
      }
      if (at_ >= text_.size()) return std::nullopt;
      v.kind = '"';
      v.end = ++at_;
      return v;
    }
    while (at_ < text_.size() && std::string_view(" \t\n\r,]}[{\"").find(text_[at_]) == std::string_view::npos) ++at_;
    if (at_ == v.begin) return std::nullopt;
    v.kind = 'w';
    v.end = at_;
    return v;
  }

  std::string_view text_;
  std::size_t at_ = 0;
};

// Whether `is` (in `out`) keeps the place of `was` (in `in`): the same bytes;
// or the same container with the same keys and values in the same order; or,
// where the report names a replacement, a replacement standing alone in its
// place (a string stays a string). When the report lists every replacement
// (`complete`), a value it names none in is kept byte for byte.
bool same_places(const value_place& was, std::string_view in, const value_place& is, std::string_view out,
                 const std::vector<llmdlq::redaction_summary>& report, bool complete) {
  if (in.substr(was.begin, was.end - was.begin) == out.substr(is.begin, is.end - is.begin)) return true;
  if (was.kind == is.kind && (was.kind == '{' || was.kind == '[')) {
    if (was.items.size() != is.items.size() || was.keys.size() != is.keys.size()) return false;
    for (std::size_t i = 0; i < was.keys.size(); ++i) {
      if (!same_places(was.keys[i], in, is.keys[i], out, report, complete)) return false;
    }
    for (std::size_t i = 0; i < was.items.size(); ++i) {
      if (!same_places(was.items[i], in, is.items[i], out, report, complete)) return false;
    }
    return true;
  }
  if (is.kind == '{' || is.kind == '[' || (was.kind == '"' && is.kind != '"')) return false;
  if (!complete) return true;
  for (const auto& s : report) {
    for (const auto& [offset, length] : s.spans) {
      if (offset < was.end && offset + length > was.begin) return true;
    }
  }
  return false;
}

const llmdlq::redactor& with_tokens() {
  static const llmdlq::redactor r = [] {
    llmdlq::redaction_options o;
    o.national_ids = {llmdlq::national_ids::nl_bsn(), llmdlq::national_ids::ru_inn(),
                      llmdlq::national_ids::ru_snils(), llmdlq::national_ids::lk_nic()};
    o.pointers = {"/a", "/*/b", "/c/*"};
    o.key = llmdlq::redaction_key{"fuzz", std::string(32, 'f')};
    return *llmdlq::redactor::create(o);
  }();
  return r;
}

const llmdlq::redactor& masking() {
  static const llmdlq::redactor r = [] {
    llmdlq::redaction_options o;
    o.action = llmdlq::redaction_action::mask;
    o.mask_keep = 6;
    return *llmdlq::redactor::create(o);
  }();
  return r;
}

void check(const llmdlq::redactor& r, std::string_view input, bool document) {
  std::vector<llmdlq::redaction_summary> report;
  const std::vector<llmdlq::pii_path> schema_paths = {{"/d", "name"}};
  const std::string once = document ? r.redact_document(input, schema_paths, "raw_response", &report)
                                    : r.redact_text(input, "raw_response", &report);
  // Placeholders are at most ~40 bytes, and a value takes at least 2.
  if (once.size() > 24 * input.size() + 64) std::abort();
  for (const auto& s : report) {
    if (s.count == 0 || s.spans.empty() || s.spans.size() > llmdlq::redaction_summary::max_spans) std::abort();
    for (const auto& [offset, length] : s.spans) {
      if (length == 0 || offset + length > input.size()) std::abort();
    }
  }
  // A JSON text keeps each value in its place, and what nothing was found in unchanged.
  if (llmdlq::is_strict_json(input)) {
    bool complete = true;
    for (const auto& s : report) complete = complete && s.count <= s.spans.size();
    const auto was = place_reader(input).document();
    const auto is = place_reader(once).document();
    if (!was || !is || !same_places(*was, input, *is, once, report, complete)) std::abort();
    if (document && !llmdlq::is_strict_json(once)) std::abort();
  }
  std::vector<llmdlq::redaction_summary> again;
  const std::string twice = document ? r.redact_document(once, schema_paths, "raw_response", &again)
                                     : r.redact_text(once, "raw_response", &again);
  if (twice != once || !again.empty()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  check(with_tokens(), input, false);
  check(with_tokens(), input, true);
  check(masking(), input, false);
  check(llmdlq::redactor::standard(), input, true);
  return 0;
}
