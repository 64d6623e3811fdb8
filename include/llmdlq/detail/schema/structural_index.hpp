// SPDX-License-Identifier: MIT
// simdjson's stage 1 alone: where a text's structural characters and
// scalars start, found at SIMD speed with the kernel chosen for this CPU,
// and no tape built.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <string_view>

#include <simdjson.h>

#include "llmdlq/config.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

/// The positions of `{ } [ ] , :` and of the first byte of every string,
/// number and literal of a text, in order, as simdjson's stage 1 finds them.
/// Stage 1 has checked that the text is UTF-8, that every string is closed
/// and that no string holds an unescaped control character; the grammar,
/// the escapes and the scalars themselves are the reader's to check.
///
/// One per thread: it keeps its buffers from one text to the next.
class structural_index {
 public:
  /// Indexes `json`: in place when it carries simdjson's padding (stage 1
  /// reads past the end), else a padded copy of it. False when stage 1
  /// rejects the text, when it is empty or larger than `max_size`, or when
  /// memory runs out.
  [[nodiscard]] bool index(std::string_view json, bool padded, std::size_t max_size) {
    count_ = 0;
    if (json.empty() || json.size() > max_size || json.size() > simdjson::SIMDJSON_MAXSIZE_BYTES) return false;
    if (parser_.capacity() < json.size() || !parser_.implementation) {
      const std::size_t capacity = std::max<std::size_t>(json.size(), simdjson::dom::MINIMAL_DOCUMENT_CAPACITY);
      if (parser_.allocate(capacity) != simdjson::SUCCESS) return false;
    }
    text_ = padded ? json.data() : copy(json);
    if (text_ == nullptr) return false;
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(text_);
    if (parser_.implementation->stage1(bytes, json.size(), simdjson::stage1_mode::regular) != simdjson::SUCCESS) {
      return false;
    }
    count_ = parser_.implementation->n_structural_indexes;
    return count_ != 0;
  }

  /// The indexed text, padded: the bytes past its end read as no JSON character.
  [[nodiscard]] const char* text() const noexcept { return text_; }
  /// count() positions, then the text's length twice: the end of the last
  /// scalar is always the next position.
  [[nodiscard]] const std::uint32_t* positions() const noexcept {
    return parser_.implementation->structural_indexes.get();
  }
  [[nodiscard]] std::uint32_t count() const noexcept { return count_; }

 private:
  // A padded copy of `json` in the buffer kept for them, or nullptr without memory.
  const char* copy(std::string_view json) {
    if (copy_capacity_ < json.size()) {
      copy_capacity_ = std::max(json.size(), 2 * copy_capacity_);
      copy_.reset(new (std::nothrow) char[copy_capacity_ + simdjson::SIMDJSON_PADDING]);
      if (!copy_) {
        copy_capacity_ = 0;
        return nullptr;
      }
    }
    std::memcpy(copy_.get(), json.data(), json.size());
    std::memset(copy_.get() + json.size(), 0, simdjson::SIMDJSON_PADDING);
    return copy_.get();
  }

  simdjson::dom::parser parser_;
  std::unique_ptr<char[]> copy_;
  std::size_t copy_capacity_ = 0;
  const char* text_ = nullptr;
  std::uint32_t count_ = 0;
};

}  // namespace detail
LLMDLQ_END_NAMESPACE
