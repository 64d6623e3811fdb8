// SPDX-License-Identifier: MIT
// The text as the redactor's detectors read it: every way of writing a
// character that models and the formats they quote use is decoded first —
// JSON escapes at any depth of nesting (`\n`, `\\\"`, `\u0040`, surrogate
// pairs), JSON Pointer escapes (`~1`), percent-encoding, HTML character
// references, full-width forms, Unicode spaces, dashes, quotes and dots —
// and invisible format characters are dropped. Each byte read keeps the
// span of the original it came from, so a finding is replaced in the
// original at its exact bytes. One forward pass, linear in the text.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/json/byte_classes.hpp"
#include "llmdlq/detail/json/byte_block.hpp"
#include "llmdlq/detail/json/utf8.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

/// A decoded reading of a text: the characters decoded (or dropped) in it,
/// in order, each with the span of the original it came from. Between two
/// of them the reading is the original byte for byte. Nothing is kept when
/// the original needed no decoding (`same`).
struct pii_reading {
  struct piece {
    std::uint32_t at;    // where the character starts in `text`
    std::uint32_t size;  // its bytes there: 0 for a character read as nothing
    std::uint32_t from;  // the original's span it was read from
    std::uint32_t to;
  };
  std::string text;
  std::vector<piece> pieces;
  bool same = true;

  /// The original span of the reading's [b, e). Spans asked for in order
  /// share `cursor` (start it at 0): the pieces are then walked once.
  [[nodiscard]] std::pair<std::size_t, std::size_t> original(std::size_t b, std::size_t e,
                                                             std::size_t& cursor) const noexcept {
    if (same) return {b, e};
    const piece* first = last_at_or_before(b, cursor);
    const piece* last = last_at_or_before(e - 1, cursor);
    const std::size_t begin = !first ? b : b < first->at + first->size ? first->from : first->to + (b - first->at - first->size);
    const std::size_t end = !last                                 ? e
                            : e - 1 < last->at + last->size ? last->to
                                                            : last->to + (e - last->at - last->size);
    return {begin, end};
  }

 private:
  // The last piece at or before `k` in the reading (the one `k` is in, or
  // the one the copied run holding `k` follows), or none.
  [[nodiscard]] const piece* last_at_or_before(std::size_t k, std::size_t& cursor) const noexcept {
    if (cursor >= pieces.size() || pieces[cursor].at > k) cursor = 0;  // asked out of order: from the start
    if (pieces.empty() || pieces[cursor].at > k) return nullptr;
    while (cursor + 1 < pieces.size() && pieces[cursor + 1].at <= k) ++cursor;
    return &pieces[cursor];
  }
};

namespace pii_read {

// What a code point is read as: an ASCII character, nothing (0: invisible),
// or itself (-1).
inline constexpr int ascii_reading(char32_t cp) noexcept {
  if (cp < 0x80) return static_cast<int>(cp);
  if (cp >= 0xFF01 && cp <= 0xFF5E) return static_cast<int>(cp - 0xFEE0);  // full-width ASCII
  switch (cp) {
    case 0x00A0: case 0x1680: case 0x202F: case 0x205F: case 0x3000: return ' ';
    case 0x2010: case 0x2011: case 0x2012: case 0x2013: case 0x2014: case 0x2015: case 0x2212:
    case 0xFE58: case 0xFE63: return '-';
    case 0x2018: case 0x2019: case 0x201A: case 0x201B: case 0x2032: return '\'';
    case 0x201C: case 0x201D: case 0x201E: case 0x201F: case 0x00AB: case 0x00BB: case 0x2039: case 0x203A:
    case 0x2033: return '"';
    case 0x3002: case 0xFF61: case 0x2024: return '.';  // the dots IDNA reads as label separators
    case 0x2026: return '.';
    case 0x2028: case 0x2029: case 0x0085: return '\n';
    case 0x00AD: case 0x061C: case 0x180E: case 0xFEFF: return 0;  // soft hyphen, marks, BOM
    default: break;
  }
  if (cp >= 0x2000 && cp <= 0x200A) return ' ';
  if ((cp >= 0x200B && cp <= 0x200F) || (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2060 && cp <= 0x2069)) return 0;
  return -1;
}

// HTML's named references for the characters the detectors care about.
inline int named_reference(std::string_view name) noexcept {
  struct entry {
    std::string_view name;
    char c;
  };
  static constexpr entry entries[] = {{"commat", '@'}, {"period", '.'}, {"plus", '+'},   {"nbsp", ' '},
                                      {"hyphen", '-'}, {"dash", '-'},   {"lpar", '('},   {"rpar", ')'},
                                      {"amp", '&'},    {"colon", ':'},  {"sol", '/'},    {"lowbar", '_'},
                                      {"quot", '"'},   {"apos", '\''},  {"lt", '<'},     {"gt", '>'},
                                      {"num", '#'},    {"percnt", '%'}, {"NewLine", '\n'}};
  for (const auto& e : entries) {
    if (e.name == name) return e.c;
  }
  return -1;
}

class reader {
 public:
  reader(std::string_view raw, pii_reading& out) : s_(raw), out_(out) {}

  /// Reads the text; false when nothing in it needed decoding (`out` untouched).
  bool run() {
    const std::size_t n = s_.size();
    std::size_t i = 0;  // where reading goes on
    for (std::size_t block = 0; block < n; block += byte_block::size) {
      // Escapes, and the lead bytes of the code points ascii_reading reads
      // otherwise: every other character is kept as written, so text of any
      // script without these is not copied.
      const byte_block bytes(s_, block);
      std::uint64_t starts = bytes.equal_any<'\\', '%', '&', '~'>();
      if (bytes.high() != 0) starts |= bytes.equal_any<0xC2, 0xD8, 0xE1, 0xE2, 0xE3, 0xEF>();
      starts &= i > block ? bits_from(i - block) : ~std::uint64_t{0};
      for (; starts != 0; starts &= starts - 1) {
        const std::size_t k = block + lowest_bit(starts);
        if (k < i) continue;
        std::size_t next = 0;
        switch (s_[k]) {
          case '\\': next = backslash(k); break;
          case '%': next = percent(k); break;
          case '&': next = reference(k); break;
          case '~': next = pointer_escape(k); break;
          default: next = code_point(k); break;
        }
        i = next == 0 ? k + 1 : next;  // 0: nothing to decode, the byte as it is
      }
    }
    if (!changed_) return false;
    copy_to(n);
    out_.text.resize(written_);
    return true;
  }

 private:
  // The original up to `b` read as it is.
  void copy_to(std::size_t b) {
    if (!changed_) {
      // Every reading is at most as long as what it reads, so the reading
      // fits in the original's length, sized once.
      out_.text.resize(s_.size());
      out_.pieces.reserve(std::min<std::size_t>(s_.size() / 16, 4096));  // a text with one escape decodes more
      changed_ = true;
    }
    if (copied_ < b) write(s_.data() + copied_, b - copied_);
    copied_ = b;
  }

  void write(const char* bytes, std::size_t size) noexcept {
    char* to = out_.text.data() + written_;
    if (size <= 4) {  // a decoded character, or a short run between two: not worth a call
      for (std::size_t k = 0; k < size; ++k) to[k] = bytes[k];
    } else {
      std::memcpy(to, bytes, size);
    }
    written_ += size;
  }

  // One character decoded from the original's [b, e), read as `bytes`.
  void emit(std::string_view bytes, std::size_t b, std::size_t e) {
    copy_to(b);
    out_.pieces.push_back({static_cast<std::uint32_t>(written_), static_cast<std::uint32_t>(bytes.size()),
                           static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(e)});
    write(bytes.data(), bytes.size());
    copied_ = e;
  }
  void emit(char c, std::size_t b, std::size_t e) { emit(std::string_view(&c, 1), b, e); }

  // The original's [b, e) read as nothing.
  std::size_t drop(std::size_t b, std::size_t e) {
    emit(std::string_view(), b, e);
    return e;
  }

  // A code point read from [b, e) of the original: as ASCII, dropped, or as UTF-8.
  void emit_code_point(char32_t cp, std::size_t b, std::size_t e) {
    const int a = ascii_reading(cp);
    if (a == 0) {
      drop(b, e);
      return;
    }
    if (a > 0) return emit(static_cast<char>(a), b, e);
    struct {
      char bytes[4];
      int size = 0;
      void push_back(char c) noexcept { bytes[size++] = c; }
    } utf8;
    append_utf8(utf8, cp);
    emit(std::string_view(utf8.bytes, static_cast<std::size_t>(utf8.size)), b, e);
  }

  // A run of backslashes and the escape they end in reads as that one
  // character, however deep the JSON it was quoted in: `\n`, `\\n` and
  // `\\\\n` are all a line break, `\\\"` a quote, `\\u0040` an `@`.
  std::size_t backslash(std::size_t i) {
    std::size_t j = i;
    while (j < s_.size() && s_[j] == '\\') ++j;
    if (j == s_.size()) return 0;
    const char c = s_[j];
    switch (c) {
      case 'n': case 'r': case 't': case 'f': case 'b':
        emit(c == 't' ? '\t' : '\n', i, j + 1);
        return j + 1;
      case '"': case '/': case '\'':
        emit(c, i, j + 1);
        return j + 1;
      case 'u': {
        const long unit = hex4_at(s_, j + 1);
        if (unit < 0) return 0;
        std::size_t e = j + 5;
        char32_t cp = static_cast<char32_t>(unit);
        if (is_high_surrogate(unit)) {  // its low half follows, escaped alike
          std::size_t k = e;
          while (k < s_.size() && s_[k] == '\\') ++k;
          const long low = k > e && k < s_.size() && s_[k] == 'u' ? hex4_at(s_, k + 1) : -1;
          if (!is_low_surrogate(low)) return drop(i, e);  // a lone half reads as nothing
          cp = surrogate_pair(unit, low);
          e = k + 5;
        } else if (is_low_surrogate(unit)) {
          return drop(i, e);
        }
        emit_code_point(cp, i, e);
        return e;
      }
      default:
        // `\\` before anything else: a backslash, read once.
        if (j - i < 2) return 0;
        emit('\\', i, j);
        return j;
    }
  }

  std::size_t percent(std::size_t i) {
    if (i + 2 >= s_.size()) return 0;
    const int hi = hex_value(s_[i + 1]);
    const int lo = hex_value(s_[i + 2]);
    if (hi < 0 || lo < 0) return 0;
    const char c = static_cast<char>(hi * 16 + lo);
    if (static_cast<unsigned char>(c) < 0x80) {
      emit(c, i, i + 3);
      return i + 3;
    }
    // Percent-encoded UTF-8: decoded whole, so that it is read as one character.
    std::string bytes(1, c);
    std::size_t e = i + 3;
    const std::size_t length = utf8_sequence_length(static_cast<unsigned char>(c));
    while (bytes.size() < length && e + 2 < s_.size() && s_[e] == '%' && hex_value(s_[e + 1]) >= 0 &&
           hex_value(s_[e + 2]) >= 0) {
      bytes.push_back(static_cast<char>(hex_value(s_[e + 1]) * 16 + hex_value(s_[e + 2])));
      e += 3;
    }
    if (const auto cp = decode_utf8(bytes); cp && bytes.size() == length) {
      emit_code_point(*cp, i, e);
      return e;
    }
    emit(c, i, i + 3);
    return i + 3;
  }

  // `&#64;`, `&#x40;`, `&commat;`.
  std::size_t reference(std::size_t i) {
    const std::size_t limit = std::min(s_.size(), i + 12);
    const std::size_t semicolon = s_.substr(i, limit - i).find(';');
    if (semicolon == std::string_view::npos || semicolon < 2) return 0;
    const std::string_view body = s_.substr(i + 1, semicolon - 1);
    const std::size_t e = i + semicolon + 1;
    if (body.front() == '#') {
      const bool hex = body.size() > 1 && (body[1] == 'x' || body[1] == 'X');
      const std::string_view digits = body.substr(hex ? 2 : 1);
      if (digits.empty() || digits.size() > 7) return 0;
      unsigned long cp = 0;
      for (const char c : digits) {
        const int v = hex ? hex_value(c) : (c >= '0' && c <= '9' ? c - '0' : -1);
        if (v < 0) return 0;
        cp = cp * (hex ? 16 : 10) + static_cast<unsigned>(v);
      }
      if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
      emit_code_point(static_cast<char32_t>(cp), i, e);
      return e;
    }
    const int c = named_reference(body);
    if (c < 0) return 0;
    emit(static_cast<char>(c), i, e);
    return e;
  }

  // `~1` is `/` and `~0` is `~` in a JSON Pointer: `/iban~1GB82…`.
  std::size_t pointer_escape(std::size_t i) {
    if (i + 1 >= s_.size() || (s_[i + 1] != '0' && s_[i + 1] != '1')) return 0;
    emit(s_[i + 1] == '1' ? '/' : '~', i, i + 2);
    return i + 2;
  }

  std::size_t code_point(std::size_t i) {
    const std::size_t length = utf8_sequence_length(static_cast<unsigned char>(s_[i]));
    const auto cp = decode_utf8(s_.substr(i, length));
    if (!cp) return 0;
    if (ascii_reading(*cp) != -1) emit_code_point(*cp, i, i + length);  // else kept as written
    return i + length;
  }

  std::string_view s_;
  pii_reading& out_;
  std::size_t copied_ = 0;   // the original before it is in `out_.text`
  std::size_t written_ = 0;  // how much of `out_.text` is read so far
  bool changed_ = false;
};

}  // namespace pii_read

/// Reads `raw` for the detectors. A text with nothing to decode is read as
/// it is (`same`, no copy made but `text` left empty: read `raw` itself).
inline bool read_for_detection(std::string_view raw, pii_reading& out) {
  out.text.clear();
  out.pieces.clear();
  out.same = true;
  if (raw.size() >= std::numeric_limits<std::uint32_t>::max()) return false;
  out.same = !pii_read::reader(raw, out).run();
  return !out.same;
}

}  // namespace detail
LLMDLQ_END_NAMESPACE
