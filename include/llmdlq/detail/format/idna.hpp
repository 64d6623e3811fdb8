// SPDX-License-Identifier: MIT
// Host name checks for llmdlq::matches_format: RFC 1123 names, A-labels and U-labels (IDNA2008).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string_view>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/format/idna_table.hpp"
#include "llmdlq/detail/json/byte_classes.hpp"
#include "llmdlq/detail/json/utf8.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

// --- Code point properties (bit layout in format_idna_table.hpp) ---

enum class idna_derived : std::uint8_t { disallowed, pvalid, contextj, contexto };

enum class bidi_class : std::uint8_t { other, l, r, al, en, an, es, cs, et, on, bn, nsm };

enum class joining_type : std::uint8_t { u, d, l, r, t, c };

enum class idna_script : std::uint8_t { other, greek, hebrew, hiragana_katakana_han };

struct idna_properties {
  std::uint16_t bits = 0;

  [[nodiscard]] constexpr idna_derived derived() const noexcept { return idna_derived(bits & 3); }
  [[nodiscard]] constexpr bidi_class bidi() const noexcept { return bidi_class((bits >> 2) & 15); }
  [[nodiscard]] constexpr joining_type joining() const noexcept { return joining_type((bits >> 6) & 7); }
  [[nodiscard]] constexpr bool mark() const noexcept { return (bits >> 9) & 1; }
  [[nodiscard]] constexpr bool virama() const noexcept { return (bits >> 10) & 1; }
  [[nodiscard]] constexpr idna_script script() const noexcept { return idna_script((bits >> 11) & 3); }
};

inline idna_properties idna_lookup(char32_t cp) noexcept {
  const auto* first = std::begin(idna_run_starts);
  const auto* run = std::upper_bound(first, std::end(idna_run_starts), static_cast<std::uint32_t>(cp));
  return {idna_run_props[run - first - 1]};
}

// --- RFC 3492 Punycode ---

/// The most code points (and A-label bytes) one DNS label can have.
inline constexpr std::size_t max_label_length = 63;

namespace punycode {
inline constexpr std::uint32_t base = 36, tmin = 1, tmax = 26, skew = 38, damp = 700;
inline constexpr std::uint32_t initial_bias = 72, initial_n = 0x80;
inline constexpr std::uint32_t max_int = 0xFFFFFFFF;

constexpr std::uint32_t adapt(std::uint32_t delta, std::uint32_t points, bool first) noexcept {
  delta = first ? delta / damp : delta / 2;
  delta += delta / points;
  std::uint32_t k = 0;
  while (delta > ((base - tmin) * tmax) / 2) {
    delta /= base - tmin;
    k += base;
  }
  return k + (base - tmin + 1) * delta / (delta + skew);
}

constexpr std::uint32_t threshold(std::uint32_t k, std::uint32_t bias) noexcept {
  return k <= bias ? tmin : k >= bias + tmax ? tmax : k - bias;
}

/// 0-35 for a Punycode digit (either case), 36 for anything else.
constexpr std::uint32_t digit_of(char c) noexcept {
  if (c >= '0' && c <= '9') return static_cast<std::uint32_t>(c - '0') + 26;
  if (c >= 'a' && c <= 'z') return static_cast<std::uint32_t>(c - 'a');
  if (c >= 'A' && c <= 'Z') return static_cast<std::uint32_t>(c - 'A');
  return base;
}

constexpr char digit_char(std::uint32_t d) noexcept {
  return static_cast<char>(d < 26 ? 'a' + d : '0' + (d - 26));
}
}  // namespace punycode

/// Decodes `in` (an A-label without its "xn--") into at most max_label_length
/// code points; false when it is not well-formed Punycode or decodes to a
/// basic code point, a surrogate or a value past U+10FFFF.
constexpr bool punycode_decode(std::string_view in, char32_t* out, std::size_t& count) noexcept {
  using namespace punycode;
  const std::size_t delimiter = in.rfind('-');
  std::size_t length = 0;
  std::size_t pos = 0;
  if (delimiter != std::string_view::npos) {
    if (delimiter > max_label_length) return false;
    for (; length < delimiter; ++length) {
      if (static_cast<unsigned char>(in[length]) >= 0x80) return false;
      out[length] = static_cast<unsigned char>(in[length]);
    }
    pos = delimiter + 1;
  }
  std::uint32_t n = initial_n, i = 0, bias = initial_bias;
  while (pos < in.size()) {
    const std::uint32_t old_i = i;
    std::uint32_t w = 1;
    for (std::uint32_t k = base;; k += base) {
      if (pos >= in.size()) return false;
      const std::uint32_t digit = digit_of(in[pos++]);
      if (digit >= base || digit > (max_int - i) / w) return false;
      i += digit * w;
      const std::uint32_t t = threshold(k, bias);
      if (digit < t) break;
      if (w > max_int / (base - t)) return false;
      w *= base - t;
    }
    const auto points = static_cast<std::uint32_t>(length + 1);
    bias = adapt(i - old_i, points, old_i == 0);
    if (i / points > max_int - n) return false;
    n += i / points;
    i %= points;
    if (n < initial_n || n > 0x10FFFF || (n >= 0xD800 && n <= 0xDFFF)) return false;
    if (length == max_label_length) return false;
    std::copy_backward(out + i, out + length, out + length + 1);
    out[i++] = n;
    ++length;
  }
  count = length;
  return true;
}

/// Encodes `count` code points as Punycode into `out`; false (and nothing
/// reliable in `out`) when the result would exceed `capacity` bytes.
constexpr bool punycode_encode(const char32_t* in, std::size_t count, char* out, std::size_t capacity,
                               std::size_t& length) noexcept {
  using namespace punycode;
  length = 0;
  for (std::size_t j = 0; j < count; ++j) {
    if (in[j] < initial_n) {
      if (length == capacity) return false;
      out[length++] = static_cast<char>(in[j]);
    }
  }
  const auto basic = static_cast<std::uint32_t>(length);
  if (basic > 0) {
    if (length == capacity) return false;
    out[length++] = '-';
  }
  std::uint32_t n = initial_n, delta = 0, bias = initial_bias, handled = basic;
  while (handled < count) {
    std::uint32_t m = max_int;
    for (std::size_t j = 0; j < count; ++j)
      if (in[j] >= n && in[j] < m) m = in[j];
    if ((m - n) > (max_int - delta) / (handled + 1)) return false;
    delta += (m - n) * (handled + 1);
    n = m;
    for (std::size_t j = 0; j < count; ++j) {
      if (in[j] < n && ++delta == 0) return false;
      if (in[j] != n) continue;
      std::uint32_t q = delta;
      for (std::uint32_t k = base;; k += base) {
        const std::uint32_t t = threshold(k, bias);
        if (q < t) break;
        if (length == capacity) return false;
        out[length++] = digit_char(t + (q - t) % (base - t));
        q = (q - t) / (base - t);
      }
      if (length == capacity) return false;
      out[length++] = digit_char(q);
      bias = adapt(delta, handled + 1, handled == basic);
      delta = 0;
      ++handled;
    }
    ++delta;
    ++n;
  }
  return true;
}

// --- Labels ---

constexpr bool is_ascii_alpha(char c) noexcept { return static_cast<unsigned char>((c | 0x20) - 'a') < 26; }

constexpr bool is_ldh(char c) noexcept { return is_ascii_alpha(c) || is_ascii_digit(c) || c == '-'; }

constexpr bool ascii_iequal(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
  }
  return true;
}

/// What one name's labels add up to: its length in A-label form, and what
/// RFC 5893's Bidi rule needs (it binds every label once any label is RTL).
struct name_state {
  std::size_t length = 0;
  bool has_rtl_label = false;
  bool all_labels_bidi_ok = true;
};

/// RFC 5893 section 2: whether a label with these Bidi classes satisfies the
/// Bidi rule, and whether it is an RTL label (has R, AL or AN).
inline void apply_bidi_rule(const idna_properties* props, std::size_t n, name_state& state) noexcept {
  bool rtl = false, has_en = false, has_an = false, allowed = true;
  const bidi_class first = props[0].bidi();
  const bool rtl_first = first == bidi_class::r || first == bidi_class::al;
  bidi_class last = first;
  for (std::size_t i = 0; i < n; ++i) {
    const bidi_class b = props[i].bidi();
    rtl |= b == bidi_class::r || b == bidi_class::al || b == bidi_class::an;
    has_en |= b == bidi_class::en;
    has_an |= b == bidi_class::an;
    if (b != bidi_class::nsm) last = b;
    switch (b) {
      case bidi_class::en:
      case bidi_class::es:
      case bidi_class::cs:
      case bidi_class::et:
      case bidi_class::on:
      case bidi_class::bn:
      case bidi_class::nsm: break;
      case bidi_class::l: allowed &= !rtl_first; break;
      case bidi_class::r:
      case bidi_class::al:
      case bidi_class::an: allowed &= rtl_first; break;
      default: allowed = false;
    }
  }
  bool ok;
  if (rtl_first) {
    ok =
        allowed && !(has_en && has_an) &&
        (last == bidi_class::r || last == bidi_class::al || last == bidi_class::en || last == bidi_class::an);
  } else {
    ok = first == bidi_class::l && allowed && (last == bidi_class::l || last == bidi_class::en);
  }
  state.has_rtl_label |= rtl;
  state.all_labels_bidi_ok &= ok;
}

/// RFC 5891 section 5.4 checks of a U-label (given as code points): hyphens,
/// no leading combining mark, every code point PVALID or CONTEXTJ/CONTEXTO with
/// its RFC 5892 appendix A rule met. ASCII capitals count as their small
/// letters, as DNS compares ASCII without case. Not checked: NFC.
inline bool valid_u_label(const char32_t* label, std::size_t n, name_state& state) noexcept {
  if (n == 0 || n > max_label_length) return false;
  if (label[0] == '-' || label[n - 1] == '-' || (n >= 4 && label[2] == '-' && label[3] == '-')) return false;
  char32_t cps[max_label_length];
  idna_properties props[max_label_length];
  bool has_arabic_indic = false, has_extended_arabic_indic = false, has_kana_or_han = false;
  for (std::size_t i = 0; i < n; ++i) {
    cps[i] = label[i] >= 'A' && label[i] <= 'Z' ? label[i] + 0x20 : label[i];
    props[i] = idna_lookup(cps[i]);
    if (props[i].derived() == idna_derived::disallowed) return false;
    has_arabic_indic |= cps[i] >= 0x0660 && cps[i] <= 0x0669;
    has_extended_arabic_indic |= cps[i] >= 0x06F0 && cps[i] <= 0x06F9;
    has_kana_or_han |= props[i].script() == idna_script::hiragana_katakana_han;
  }
  if (props[0].mark()) return false;
  for (std::size_t i = 0; i < n; ++i) {
    const char32_t cp = cps[i];
    const bool has_before = i > 0, has_after = i + 1 < n;
    switch (props[i].derived()) {
      case idna_derived::contextj: {
        if (has_before && props[i - 1].virama()) break;
        if (cp != 0x200C) return false;  // ZERO WIDTH JOINER needs a virama before it
        // ZERO WIDTH NON-JOINER: (L|D) T* ZWNJ T* (R|D) by Joining_Type.
        std::size_t b = i;
        while (b > 0 && props[b - 1].joining() == joining_type::t) --b;
        std::size_t a = i + 1;
        while (a < n && props[a].joining() == joining_type::t) ++a;
        if (b == 0 || a == n) return false;
        const joining_type before = props[b - 1].joining(), after = props[a].joining();
        if (!(before == joining_type::l || before == joining_type::d)) return false;
        if (!(after == joining_type::r || after == joining_type::d)) return false;
        break;
      }
      case idna_derived::contexto:
        if (cp == 0x00B7) {  // MIDDLE DOT: only in "l·l" (Catalan)
          if (!has_before || !has_after || cps[i - 1] != 'l' || cps[i + 1] != 'l') return false;
        } else if (cp == 0x0375) {  // GREEK KERAIA: before Greek
          if (!has_after || props[i + 1].script() != idna_script::greek) return false;
        } else if (cp == 0x05F3 || cp == 0x05F4) {  // HEBREW GERESH, GERSHAYIM: after Hebrew
          if (!has_before || props[i - 1].script() != idna_script::hebrew) return false;
        } else if (cp == 0x30FB) {  // KATAKANA MIDDLE DOT: with Hiragana, Katakana or Han
          if (!has_kana_or_han) return false;
        } else if (cp >= 0x0660 && cp <= 0x0669) {
          if (has_extended_arabic_indic) return false;
        } else if (cp >= 0x06F0 && cp <= 0x06F9) {
          if (has_arabic_indic) return false;
        } else {
          return false;
        }
        break;
      default: break;
    }
  }
  apply_bidi_rule(props, n, state);
  return true;
}

/// An A-label's Punycode part (after "xn--"): it must decode, contain a
/// non-ASCII code point, re-encode to itself, and decode to a valid U-label.
inline bool valid_a_label_tail(std::string_view encoded, name_state& state) noexcept {
  char32_t label[max_label_length] = {};  // zeroed: GCC cannot see that only [0, n) is read
  std::size_t n = 0;
  if (!punycode_decode(encoded, label, n)) return false;
  if (std::all_of(label, label + n, [](char32_t cp) { return cp < 0x80; })) return false;
  char again[max_label_length];
  std::size_t again_length = 0;
  if (!punycode_encode(label, n, again, max_label_length, again_length) ||
      !ascii_iequal(encoded, std::string_view(again, again_length)))
    return false;
  return valid_u_label(label, n, state);
}

/// An all-ASCII label: LDH, 1 to 63 bytes, no hyphen at either end. A label
/// with "--" in its third and fourth places must be an A-label ("xn--", any
/// case); under `idn` no other such reserved label is accepted.
inline bool valid_ascii_label(std::string_view label, bool idn, name_state& state) noexcept {
  if (label.empty() || label.size() > max_label_length) return false;
  if (label.front() == '-' || label.back() == '-') return false;
  for (const char c : label)
    if (!is_ldh(c)) return false;
  state.length += label.size();
  if (label.size() >= 4 && label[2] == '-' && label[3] == '-') {
    if (ascii_iequal(label.substr(0, 2), "xn")) return valid_a_label_tail(label.substr(4), state);
    if (idn) return false;
  }
  state.all_labels_bidi_ok &= is_ascii_alpha(label[0]);  // Bidi rule 1 for an LTR label
  return true;
}

/// A label holding non-ASCII text, as a U-label; counts its A-label length.
inline bool valid_unicode_label(std::string_view text, name_state& state) noexcept {
  char32_t label[max_label_length] = {};  // zeroed: GCC cannot see that only [0, n) is read
  std::size_t n = 0;
  while (!text.empty()) {
    const auto cp = decode_utf8(text);
    if (!cp || n == max_label_length) return false;
    label[n++] = *cp;
    text.remove_prefix(utf8_sequence_length(static_cast<unsigned char>(text[0])));
  }
  if (!valid_u_label(label, n, state)) return false;
  char encoded[max_label_length - 4];
  std::size_t encoded_length = 0;
  if (!punycode_encode(label, n, encoded, sizeof encoded, encoded_length)) return false;
  state.length += 4 + encoded_length;
  return true;
}

/// Classes of bytes in an ASCII host name: 1 letter or digit, 2 hyphen, 3 dot.
inline constexpr auto hostname_byte_class = [] {
  std::array<std::uint8_t, 256> table{};
  for (unsigned c = 0; c < 26; ++c) table['a' + c] = table['A' + c] = 1;
  for (unsigned c = 0; c < 10; ++c) table['0' + c] = 1;
  table['-'] = 2;
  table['.'] = 3;
  return table;
}();

/// RFC 1123 host name (labels of letters, digits and hyphens, at most 63 bytes,
/// no hyphen at either end, at most 253 bytes, no trailing dot), whose A-labels
/// must be valid IDNA2008.
inline bool is_hostname(std::string_view text) noexcept {
  const std::size_t n = text.size();
  if (n == 0 || n > 253) return false;
  // One pass over the bytes; labels with "--" in their third and fourth places
  // (A-labels, say) send the name to the label-by-label check.
  bool reserved = false;
  std::size_t start = 0;
  const auto label_ends = [&](std::size_t end) {
    const std::size_t length = end - start;
    reserved |= length >= 4 && text[start + 2] == '-' && text[start + 3] == '-';
    return length - 1 < max_label_length && text[start] != '-' && text[end - 1] != '-';
  };
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint8_t byte_class = hostname_byte_class[static_cast<unsigned char>(text[i])];
    if (byte_class == 3) {
      if (!label_ends(i)) return false;
      start = i + 1;
    } else if (byte_class == 0) {
      return false;
    }
  }
  if (!label_ends(n)) return false;
  if (!reserved) return true;
  name_state state;
  start = 0;
  for (std::size_t i = 0;; ++i) {
    if (i == n || text[i] == '.') {
      if (!valid_ascii_label(text.substr(start, i - start), false, state)) return false;
      if (i == n) break;
      start = i + 1;
    }
  }
  return !state.has_rtl_label || state.all_labels_bidi_ok;
}

/// Length of the IDNA label separator at the start of `text` ("." or U+3002,
/// U+FF0E, U+FF61 as RFC 3490 names them), or 0.
constexpr std::size_t idna_separator_length(std::string_view text) noexcept {
  if (text[0] == '.') return 1;
  if (text.size() < 3) return 0;
  const auto b0 = static_cast<unsigned char>(text[0]), b1 = static_cast<unsigned char>(text[1]),
             b2 = static_cast<unsigned char>(text[2]);
  const bool separator = (b0 == 0xE3 && b1 == 0x80 && b2 == 0x82) ||  // U+3002
                         (b0 == 0xEF && b1 == 0xBC && b2 == 0x8E) ||  // U+FF0E
                         (b0 == 0xEF && b1 == 0xBD && b2 == 0xA1);    // U+FF61
  return separator ? 3 : 0;
}

/// RFC 5890 internationalised host name: each label an NR-LDH label, an
/// A-label or a U-label, at most 253 bytes in A-label form, and RFC 5893's
/// Bidi rule on every label when any label is right-to-left.
inline bool is_idn_hostname(std::string_view text) noexcept {
  if (text.empty()) return false;
  name_state state;
  std::size_t labels = 0, start = 0, i = 0;
  bool ascii = true;
  for (;;) {
    const std::size_t separator = i == text.size() ? 0 : idna_separator_length(text.substr(i));
    if (i == text.size() || separator != 0) {
      const std::string_view label = text.substr(start, i - start);
      if (!(ascii ? valid_ascii_label(label, true, state) : valid_unicode_label(label, state))) return false;
      ++labels;
      if (i == text.size()) break;
      i += separator;
      start = i;
      ascii = true;
      continue;
    }
    ascii &= static_cast<unsigned char>(text[i]) < 0x80;
    ++i;
  }
  if (state.length + labels - 1 > 253) return false;
  return !state.has_rtl_label || state.all_labels_bidi_ok;
}

}  // namespace detail
LLMDLQ_END_NAMESPACE
