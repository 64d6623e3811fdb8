// SPDX-License-Identifier: MIT
// The redactor's detectors: one forward pass over a text that finds e-mail
// addresses, phone numbers, IBANs, payment cards, IP addresses, API keys,
// bearer tokens and national ids, each validated (mod-97, Luhn, inet_pton, a
// checksum) rather than matched by shape alone. Every candidate is examined
// in a bounded window, so the pass is linear in the text.
#pragma once

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/json/byte_block.hpp"
#include "llmdlq/detail/redaction/placeholder_shape.hpp"
#include "llmdlq/redaction.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

/// A value found in a text: [begin, end) and what it is.
struct pii_match {
  std::size_t begin = 0;
  std::size_t end = 0;
  pii_kind kind = pii_kind::email;
  std::uint32_t national_id = 0;  ///< for pii_kind::national_id: the rule's index
};

namespace pii_chars {
enum : std::uint8_t {
  digit = 1,
  upper = 2,
  lower = 4,
  hex = 8,
  email_local = 16,
  token = 32,
  domain = 64,
  non_ascii = 128
};

constexpr std::array<std::uint8_t, 256> make_table() {
  std::array<std::uint8_t, 256> t{};
  for (int c = '0'; c <= '9'; ++c) t[c] |= digit | hex | email_local | token | domain;
  for (int c = 'A'; c <= 'Z'; ++c) t[c] |= upper | email_local | token | domain;
  for (int c = 'a'; c <= 'z'; ++c) t[c] |= lower | email_local | token | domain;
  for (int c = 'a'; c <= 'f'; ++c) t[c] |= hex;
  for (int c = 'A'; c <= 'F'; ++c) t[c] |= hex;
  for (char c : {'.', '_', '%', '+', '-'}) t[static_cast<unsigned char>(c)] |= email_local;
  for (char c : {'_', '-'}) t[static_cast<unsigned char>(c)] |= token;
  t['-'] |= domain;
  for (int b = 0x80; b < 0x100; ++b) t[b] |= domain | non_ascii;  // internationalised domain names
  return t;
}
inline constexpr std::array<std::uint8_t, 256> table = make_table();

inline std::uint8_t of(char c) noexcept { return table[static_cast<unsigned char>(c)]; }
inline bool is(char c, std::uint8_t cls) noexcept { return (of(c) & cls) != 0; }
inline bool alnum(char c) noexcept { return is(c, digit | upper | lower); }
inline bool letter(char c) noexcept { return is(c, upper | lower); }
inline char upper_case(char c) noexcept { return is(c, lower) ? char(c - 'a' + 'A') : c; }
// What may stand between the groups of a card number or an IBAN: spaces
// (Unicode spaces are read as ' '), dashes, dots and line breaks.
inline bool group_separator(char c) noexcept {
  return c == ' ' || c == '-' || c == '.' || c == '\n' || c == '\r' || c == '\t';
}
// The first two letters of the labelled AWS secrets (any case), the
// uppercase keys (`AKIA`, `AIza`, `Bearer`) and the lowercase prefixes the
// scanner reads: a set of byte pairs.
constexpr std::array<std::uint64_t, 1024> make_first_letters() {
  std::array<std::uint64_t, 1024> t{};
  auto set = [&t](unsigned char a, unsigned char b) {
    const unsigned pair = unsigned{a} << 8 | b;
    t[pair / 64] |= std::uint64_t{1} << (pair % 64);
  };
  for (const char* pair : {"aw", "aW", "Aw", "AW", "se", "sE", "Se", "SE"}) set(pair[0], pair[1]);
  for (int b = 0; b < 256; ++b) {
    set('A', static_cast<unsigned char>(b));
    set('B', static_cast<unsigned char>(b));
  }
  for (const char* pair : {"be", "by", "ee", "ey", "gh", "gi", "gl", "rk", "sk", "wh", "xo"}) set(pair[0], pair[1]);
  return t;
}
inline constexpr std::array<std::uint64_t, 1024> first_letters = make_first_letters();

// Whether every pair in first_letters starts with one of `firsts`.
constexpr bool first_letters_start_with(std::string_view firsts) {
  for (unsigned pair = 0; pair < 65536; ++pair) {
    const bool set = (first_letters[pair / 64] >> (pair % 64)) & 1u;
    if (set && firsts.find(static_cast<char>(pair >> 8)) == std::string_view::npos) return false;
  }
  return true;
}
}  // namespace pii_chars

/// Luhn's check over the digits of `s` (other characters are skipped).
inline bool luhn_valid(std::string_view s) noexcept {
  int sum = 0;
  bool twice = false;
  for (auto it = s.rbegin(); it != s.rend(); ++it) {
    if (*it < '0' || *it > '9') continue;
    int d = *it - '0';
    if (twice) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
    twice = !twice;
  }
  return sum % 10 == 0;
}

/// Matches a national id's shape at the start of `s`: `#` a digit, `A` an
/// uppercase letter, `[..]` one of the listed characters, anything else
/// itself. Returns the length matched, or 0.
inline std::size_t match_shape(std::string_view shape, std::string_view s) noexcept {
  std::size_t at = 0;
  for (std::size_t i = 0; i < shape.size(); ++i, ++at) {
    if (at >= s.size()) return 0;
    const char c = s[at];
    const char want = shape[i];
    if (want == '#') {
      if (!pii_chars::is(c, pii_chars::digit)) return 0;
    } else if (want == 'A') {
      if (!pii_chars::is(c, pii_chars::upper)) return 0;
    } else if (want == '[') {
      const std::size_t close = shape.find(']', i + 1);
      if (close == std::string_view::npos) return 0;
      if (shape.substr(i + 1, close - i - 1).find(c) == std::string_view::npos) return 0;
      i = close;
    } else if (c != want) {
      return 0;
    }
  }
  return at;
}

/// The regions whose domestic phone formats are read (redaction_options::phone_regions).
enum class phone_region : std::uint8_t { nanp, ru, in, cn };

class phone_regions {
 public:
  void add(phone_region r) noexcept { bits_ |= std::uint8_t(1u << unsigned(r)); }
  [[nodiscard]] bool contains(phone_region r) const noexcept { return (bits_ >> unsigned(r)) & 1u; }
  [[nodiscard]] bool any() const noexcept { return bits_ != 0; }

 private:
  std::uint8_t bits_ = 0;
};

/// The longest an examined candidate may be: keeps the pass linear.
inline constexpr std::size_t max_candidate = 128;

class pii_scanner {
 public:
  /// Appends every match in `s` to `out`, in order, not overlapping.
  pii_scanner(const pii_kinds& kinds, const std::vector<national_id_rule>& ids, std::string_view s,
              std::vector<pii_match>& out, phone_regions regions = {}) noexcept
      : kinds_(kinds), ids_(ids), s_(s), out_(&out), regions_(regions) {
    for (const auto& rule : ids_) {
      for (const auto& shape : rule.shapes) {
        const std::size_t digits = static_cast<std::size_t>(std::count(shape.begin(), shape.end(), '#'));
        ids_min_digits_ = std::min(ids_min_digits_, digits);
        ids_start_upper_ = ids_start_upper_ || shape.front() == 'A' || shape.front() == '[' ||
                           pii_chars::is(shape.front(), pii_chars::upper);
      }
    }
  }

  void run() {
    const std::string_view s = s_;
    const std::size_t n = s.size();
    std::size_t i = 0;        // where reading goes on
    std::size_t read_to = 0;  // the end of the last word read
    std::uint64_t carry = 0;  // whether the byte before the block is a letter or digit
    // Only a word's first letter or digit, `@`, `+`, `::`, `://`, `(` and
    // `--` can start a value, and a word before `:` (an IPv6 address).
    for (std::size_t block = 0; block < n; block += byte_block::size) {
      const byte_block bytes(s, block);
      const block_masks m{bytes.alphanumeric(), bytes.in_range<'0', '9'>(), bytes.equal_any<':'>()};
      const char after = block + byte_block::size < n ? s[block + byte_block::size] : '\0';
      auto before_next = [](std::uint64_t mask, bool next_block_starts_with_one) {
        return mask >> 1 | std::uint64_t{next_block_starts_with_one} << 63;
      };
      const std::uint64_t dashes = bytes.equal_any<'-'>();
      const std::uint64_t word_starts = m.words & ~(m.words << 1 | carry);
      const std::uint64_t colons_after_words = m.colons & (m.words << 1 | carry);
      // The words may_start_value could let through, told from the masks:
      // a digit first, or third and fourth (an IBAN), a first letter of a
      // pair it knows, an uppercase one when a national id can start so;
      // the last three of the block cannot be told here. The others are
      // not visited at all.
      std::uint64_t maybe = m.digits | (m.digits >> 2 & m.digits >> 3) | first_letters(bytes) | std::uint64_t{7} << 61;
      if (ids_start_upper_) maybe |= bytes.in_range<'A', 'Z'>();
      std::uint64_t starts = (word_starts & maybe) | colons_after_words | bytes.equal_any<'@', '+'>() |
                             (m.colons & before_next(bytes.equal_any<':', '/'>(), after == ':' || after == '/')) |
                             (dashes & before_next(dashes, after == '-'));
      if (regions_.any()) starts |= bytes.equal_any<'('>();
      carry = m.words >> 63;
      starts &= i > block ? bits_from(i - block) : ~std::uint64_t{0};
      for (; starts != 0; starts &= starts - 1) {
        const unsigned bit = lowest_bit(starts);
        const std::size_t k = block + bit;
        if (ahead_.end != 0 && k >= ahead_.begin) i = reach(std::max(i, k));
        if (k < i) continue;
        if ((word_starts >> bit) & 1u) {
          const std::size_t end = word_end(k, m.words, block);
          if (!may_start_value(k, end, m, block)) {
            i = end;
            continue;
          }
          read_to = end;
          i = word(k, end);
        } else {
          if ((colons_after_words >> bit) & 1u && read_to != k) {  // the word before was not visited: it is read now
            const std::size_t start = word_start_before(k, word_starts, block);
            if (start >= i) {
              read_to = k;
              i = word(start, k);
              if (i > k) continue;
            }
          }
          i = sign(k);
        }
        // A match can end inside a word: the word's rest is read from there.
        while (i < n && pii_chars::alnum(s[i]) && pii_chars::alnum(s[i - 1])) {
          if (ahead_.end != 0 && i >= ahead_.begin) {
            i = reach(i);
            continue;
          }
          const std::size_t end = word_end(i, m.words, block);
          i = may_start_value(i, end, m, block) ? word(i, end) : end;
        }
      }
    }
    reach(n);
  }

 private:
  // The letters, digits and colons of the block at `block`.
  struct block_masks {
    std::uint64_t words;
    std::uint64_t digits;
    std::uint64_t colons;
  };

  // The bytes that are the first of a pair in pii_chars::first_letters.
  [[nodiscard]] static std::uint64_t first_letters(const byte_block& bytes) noexcept {
    static_assert(pii_chars::first_letters_start_with("aAsSbBegrwx"));
    return bytes.equal_any<'a', 'A', 's', 'S', 'b', 'B', 'e', 'g', 'r', 'w', 'x'>();
  }

  // Where the word ending at `end` starts: a start in `word_starts`, the
  // block's, or before the block.
  [[nodiscard]] std::size_t word_start_before(std::size_t end, std::uint64_t word_starts,
                                              std::size_t block) const noexcept {
    const std::uint64_t below = word_starts & ((std::uint64_t{1} << (end - block)) - 1);
    if (below != 0) return block + 63 - static_cast<unsigned>(__builtin_clzll(below));
    std::size_t start = block;
    while (start > 0 && pii_chars::alnum(s_[start - 1])) --start;
    return start;
  }

  // Where the word of letters and digits at `i` ends.
  [[nodiscard]] std::size_t word_end(std::size_t i, std::uint64_t words, std::size_t block) const noexcept {
    const std::uint64_t rest = i - block < byte_block::size ? ~words >> (i - block) : 0;
    if (rest != 0) return i + lowest_bit(rest);
    std::size_t end = std::max(i + 1, block + byte_block::size);
    while (end < s_.size() && pii_chars::alnum(s_[end])) ++end;
    return end;
  }

  // Reads the word [i, end); returns where reading goes on, past `i`.
  std::size_t word(std::size_t i, std::size_t end) {
    if (mask_end(i, end - i)) {  // reading it again could join it to what follows
      // But an address's shape from it is passed over as the first pass
      // did, when the word was text after a mask and a star (`****` `*e:12:34`).
      if (at(end) == ':' && on(pii_kind::ipv6) && is_hex(i, end)) {
        if (const std::size_t shape = ipv6_shape_end(i)) return pass_over(shape);
      }
      return end;
    }
    if (i > 0 && (s_[i - 1] == '<' || s_[i - 1] == ':')) {  // a placeholder's kind or token is no value
      if (const std::size_t e = placeholder_around(i)) return e;
    }
    const std::size_t matched = at_word(i, end);
    return matched > end ? matched : end;
  }

  // Reads what a character other than a letter or digit starts at `i`;
  // returns where reading goes on, past `i`.
  std::size_t sign(std::size_t i) {
    const std::string_view s = s_;
    const std::size_t n = s.size();
    const char c = s[i];
    if (c == '@') return std::max(at_sign(i), i + 1);
    if (c == '+') return std::max(plus_sign(i), i + 1);
    if (c == ':' && i + 1 < n && s[i + 1] == ':' && on(pii_kind::ipv6)) return std::max(ipv6_at(i), i + 1);
    if (c == ':' && at(i + 1) == '/' && at(i + 2) == '/' && on(pii_kind::password)) {
      return std::max(url_password_at(i + 3), i + 1);
    }
    if (c == '(' && regions_.any() && on(pii_kind::phone) && pii_chars::is(at(i + 1), pii_chars::digit) &&
        (i == 0 || !joins(i - 1))) {
      const std::size_t m = domestic_phone_at(i);
      return m ? add(i, m, pii_kind::phone) : i + 1;
    }
    if (c == '-' && at(i + 1) == '-' && s.substr(i, 11) == "-----BEGIN " && on(pii_kind::private_key)) {
      return std::max(private_key_at(i), i + 1);
    }
    return i + 1;
  }

  [[nodiscard]] bool on(pii_kind k) const noexcept { return kinds_.contains(k); }

  std::size_t add(std::size_t begin, std::size_t end, pii_kind kind, std::uint32_t id = 0) {
    if (ahead_.end != 0 && end > ahead_.begin) ahead_ = {};  // a value read from before it holds it
    out_->push_back({begin, end, kind, id});
    floor_ = end;
    return end;
  }

  // A value's shape that is none, read to `end` like a match: nothing after
  // it looks back into it (an e-mail's local part), as nothing could into
  // a placeholder.
  std::size_t pass_over(std::size_t end) noexcept {
    floor_ = end;
    return end;
  }

  [[nodiscard]] char at(std::size_t i) const noexcept { return i < s_.size() ? s_[i] : '\0'; }
  [[nodiscard]] bool is_hex(std::size_t begin, std::size_t end) const noexcept {
    for (std::size_t k = begin; k < end; ++k) {
      if (!pii_chars::is(s_[k], pii_chars::hex)) return false;
    }
    return true;
  }
  [[nodiscard]] bool boundary_after(std::size_t i) const noexcept { return !joins(i); }
  // Whether a number's separator and digit follow `i` (`1112.22.333.4`): the
  // value read so far is part of a longer number, as digits_at tells from
  // the other end. A placeholder or a mask after the separator stands for
  // what the first pass read there (`:<email:…>` for `:4123k@h.de`).
  [[nodiscard]] bool number_goes_on(std::size_t i) const noexcept {
    const char c = at(i);
    return (c == '.' || c == ',' || c == '-' || c == '/' || c == ':') &&
           (pii_chars::is(at(i + 1), pii_chars::digit) || stands_for_value(i + 1));
  }

  // Whether the byte at `k` joins what is beside it into one word: a letter
  // or digit, or an edge of a placeholder this redactor writes (`<iban:…>`,
  // quoted or not), which stands for a value whose edges were letters or
  // digits. So a second pass over the output reads what is beside a
  // placeholder as the first read what was beside the value, and finds
  // nothing new there.
  [[nodiscard]] bool joins(std::size_t k) const noexcept {
    const char c = at(k);
    if (pii_chars::alnum(c)) return true;
    return (c == '<' || c == '>' || c == '"' || c == '*') && edge_joins(k);
  }

  [[nodiscard]] bool edge_joins(std::size_t k) const noexcept {
    switch (at(k)) {
      case '<': return placeholder_end(k) != 0;
      case '>': return placeholder_ends_at(k + 1);
      case '"': {  // a quote of a quoted placeholder (`"<card>"`, a bare value's replacement)
        if (at(k + 1) == '<') return quoted_placeholder(k + 1);
        return placeholder_ends_at(k) && quoted_placeholder(placeholder_start_before(k - 1));
      }
      case '*': return in_mask(k);
      default: return false;
    }
  }

  // Whether the byte at `k` is a placeholder's or a mask's edge.
  [[nodiscard]] bool stands_for_value(std::size_t k) const noexcept { return !pii_chars::alnum(at(k)) && joins(k); }

  // Whether the `*` at `k` is in a run of four or more: a mask's hidden
  // part, longer than Markdown's emphasis.
  [[nodiscard]] bool in_mask(std::size_t k) const noexcept {
    std::size_t b = k;
    std::size_t e = k + 1;
    while (b > 0 && k - b < 4 && s_[b - 1] == '*') --b;
    while (e < s_.size() && e - b < 4 && s_[e] == '*') ++e;
    return e - b >= 4;
  }

  [[nodiscard]] std::size_t placeholder_end(std::size_t p) const noexcept { return detail::placeholder_end(s_, p); }

  // Whether a placeholder between quotes starts at `p`, as a bare value's
  // replacement is written: its quotes are its edges. A quote on one side
  // only was in the text before the value was replaced.
  [[nodiscard]] bool quoted_placeholder(std::size_t p) const noexcept {
    if (p == npos || p == 0 || s_[p - 1] != '"') return false;
    const std::size_t e = placeholder_end(p);
    return e != 0 && at(e) == '"';
  }

  // Whether a placeholder ends at `e` (its `>` at e - 1).
  [[nodiscard]] bool placeholder_ends_at(std::size_t e) const noexcept {
    if (e < 3 || s_[e - 1] != '>') return false;
    const std::size_t p = placeholder_start_before(e - 1);
    return p != npos && placeholder_end(p) == e;
  }

  // The end of the placeholder whose kind or token holds [i], or 0.
  [[nodiscard]] std::size_t placeholder_around(std::size_t i) const noexcept {
    const std::size_t p = placeholder_start_before(i);
    if (p == npos) return 0;
    const std::size_t e = placeholder_end(p);
    return e > i ? e : 0;
  }

  // The `<` before `i` with only a kind, a colon and a token between, or npos.
  [[nodiscard]] std::size_t placeholder_start_before(std::size_t i) const noexcept {
    const std::size_t lowest = i > placeholder_max_kind + 18 ? i - placeholder_max_kind - 18 : 0;
    bool colon = false;
    for (std::size_t p = i; p > lowest; --p) {
      const char c = s_[p - 1];
      if (c == '<') return p - 1;
      if (c == ':' ? std::exchange(colon, true) : !pii_chars::is(c, pii_chars::token)) return npos;
    }
    return npos;
  }
  static constexpr std::size_t npos = ~std::size_t{0};

  // Whether the `length` characters at `i` are the kept end of a mask
  // (`**********4300`): at most 6 letters and digits after a run of at
  // least four stars and at least as many as it keeps. So a word after
  // Markdown's `*`, `**` or `***` is read.
  [[nodiscard]] bool mask_end(std::size_t i, std::size_t length) const noexcept {
    if (length > 6 || i == 0 || s_[i - 1] != '*') return false;
    for (std::size_t k = i; k < i + length; ++k) {
      if (!pii_chars::alnum(s_[k])) return false;
    }
    std::size_t run = 0;  // the stars before it
    while (run < 64 && i > run && s_[i - run - 1] == '*') ++run;
    return run >= 4 && run >= length;
  }

  // Whether a value can start the word [i, end): a cheap test most words
  // fail, passing every word a detector in at_word could take. `m` holds
  // the masks of the block at `block`, which `i` is in.
  [[nodiscard]] bool may_start_value(std::size_t i, std::size_t end, const block_masks& m,
                                     std::size_t block) const noexcept {
    // Whether the byte at `k` is a digit or a colon: from the masks when it is in the block.
    auto digit = [&](std::size_t k) {
      return k - block < byte_block::size ? ((m.digits >> (k - block)) & 1u) != 0
                                          : pii_chars::is(at(k), pii_chars::digit);
    };
    auto colon = [&](std::size_t k) {
      return k - block < byte_block::size ? ((m.colons >> (k - block)) & 1u) != 0 : at(k) == ':';
    };
    if (colon(end)) return true;  // an IPv6 address, a URL's scheme
    if (digit(i)) {               // four digits, or fewer and a separator
      if (end - i >= 4 || ids_min_digits_ < 4) return true;
      const char next = at(end);
      return pii_chars::group_separator(next) || next == '(' || next == ')' || next == '/';
    }
    if (digit(i + 2) && digit(i + 3)) return true;  // an IBAN
    const char c = s_[i];
    if (ids_start_upper_ && pii_chars::is(c, pii_chars::upper)) return true;
    const unsigned pair = static_cast<unsigned char>(c) << 8 | static_cast<unsigned char>(at(i + 1));
    return (pii_chars::first_letters[pair / 64] >> (pair % 64)) & 1u;
  }

  // A word of letters and digits starts at `i` (the character before is not
  // one) and ends at `end`. Returns where a match ends, or 0.
  std::size_t at_word(std::size_t i, std::size_t end) {
    const char c = s_[i];
    if (pii_chars::letter(c) && on(pii_kind::api_key)) {
      if (const std::size_t m = labelled_secret_at(i)) return m;
    }
    if (pii_chars::is(c, pii_chars::digit)) {
      if (const std::size_t m = digits_at(i)) return m;
    } else if (pii_chars::is(c, pii_chars::upper)) {
      if (const std::size_t m = upper_at(i, end)) return m;
    } else {
      if (on(pii_kind::iban)) {  // written in lowercase; mod-97 alone decides, its shape claims nothing
        if (const std::size_t m = iban_at(i).first) return add(i, m, pii_kind::iban);
      }
      if (const std::size_t m = lower_at(i)) return m;
    }
    if (on(pii_kind::ipv6) && pii_chars::is(c, pii_chars::hex) && at(end) == ':') return ipv6_at(i);
    return 0;
  }

  // The digits in the number starting at `i`, through separators, up to 20.
  [[nodiscard]] std::size_t run_digits(std::size_t i) const noexcept {
    std::size_t digits = 0;
    const std::size_t limit = std::min(s_.size(), i + 48);
    for (; i < limit && digits < 20; ++i) {
      const char c = s_[i];
      if (pii_chars::is(c, pii_chars::digit)) {
        ++digits;
      } else if (!pii_chars::group_separator(c) && c != '(' && c != ')' && c != '/') {
        break;
      }
    }
    return digits;
  }

  std::size_t digits_at(std::size_t i) {
    // The rest of a number (`1.2.3.4.5`, `85.07.30`): its start decided already.
    if (i >= 2 && (pii_chars::is(s_[i - 2], pii_chars::digit) || (!pii_chars::alnum(s_[i - 2]) && joins(i - 2))) &&
        (s_[i - 1] == '.' || s_[i - 1] == ',' || s_[i - 1] == '-' || s_[i - 1] == '/' || s_[i - 1] == ':')) {
      return 0;
    }
    // Prices, quantities and dates have too few digits for anything but an address.
    const std::size_t digits = run_digits(i);
    if (digits >= 4 && on(pii_kind::ipv4)) {
      if (const std::size_t m = ipv4_at(i)) return add(i, m, pii_kind::ipv4);
    }
    if (on(pii_kind::ipv6)) {
      std::size_t j = i;
      while (j < s_.size() && pii_chars::is(s_[j], pii_chars::hex)) ++j;
      if (at(j) == ':') {
        if (const std::size_t m = ipv6_at(i)) return m;
      }
    }
    if (on(pii_kind::national_id) && digits >= ids_min_digits_) {
      for (std::uint32_t r = 0; r < ids_.size(); ++r) {
        if (const std::size_t m = national_id_at(i, r)) return add(i, m, pii_kind::national_id, r);
      }
    }
    if (digits >= 13 && on(pii_kind::card)) {
      if (const std::size_t m = card_at(i)) return add(i, m, pii_kind::card);
    }
    if (digits >= 9 && on(pii_kind::phone) && s_[i] == '0') {
      if (const std::size_t m = phone_at(i, i)) return add(i, m, pii_kind::phone);
    }
    if (digits >= 10 && regions_.any() && on(pii_kind::phone)) {
      if (const std::size_t m = domestic_phone_at(i)) return add(i, m, pii_kind::phone);
    }
    return 0;
  }

  std::size_t upper_at(std::size_t i, std::size_t word_end) {
    if (on(pii_kind::iban)) {
      const auto [match, shaped] = iban_at(i);
      if (match) return add(i, match, pii_kind::iban);
      if (shaped)
        return pass_over(shaped);  // an IBAN's shape that fails mod-97: its groups are not read as anything else
    }
    if (ids_start_upper_ && on(pii_kind::national_id)) {
      for (std::uint32_t r = 0; r < ids_.size(); ++r) {
        if (const std::size_t m = national_id_at(i, r)) return add(i, m, pii_kind::national_id, r);
      }
    }
    const char c = s_[i];
    if (c != 'A' && c != 'B') return 0;
    const std::string_view rest = s_.substr(i);
    if (c == 'A' && on(pii_kind::api_key)) {
      // AWS access key ids and Google API keys.
      if ((rest.starts_with("AKIA") || rest.starts_with("ASIA")) && word_end - i == 20) {
        return add(i, word_end, pii_kind::api_key);
      }
      if (rest.starts_with("AIza")) {
        const std::size_t m = token_run(i + 4);
        if (m - (i + 4) == 35) return add(i, m, pii_kind::api_key);
      }
    }
    if (on(pii_kind::bearer_token) && rest.starts_with("Bearer ")) return bearer_at(i + 7);
    return 0;
  }

  std::size_t lower_at(std::size_t i) {
    const char second = at(i + 1);
    switch (s_[i]) {  // the first two letters of the shapes below
      case 'b':
      case 'e':
        if (second != 'e' && second != 'y') return 0;
        break;
      case 'g':
        if (second != 'h' && second != 'i' && second != 'l') return 0;
        break;
      case 'r':
      case 's':
        if (second != 'k' || (at(i + 2) != '-' && at(i + 2) != '_')) return 0;
        break;
      case 'w':
        if (second != 'h') return 0;
        break;
      case 'x':
        if (second != 'o') return 0;
        break;
      default: return 0;
    }
    const std::string_view rest = s_.substr(i);
    if (on(pii_kind::bearer_token) && rest.starts_with("bearer ")) return bearer_at(i + 7);
    if (!on(pii_kind::api_key)) return 0;
    struct prefixed {
      std::string_view prefix;
      std::size_t min_rest;
    };
    static constexpr prefixed keys[] = {
        {"sk-", 20},    {"sk_live_", 16}, {"rk_live_", 16}, {"sk_test_", 16}, {"rk_test_", 16}, {"whsec_", 24},
        {"ghp_", 30},   {"gho_", 30},     {"ghu_", 30},     {"ghs_", 30},     {"ghr_", 30},     {"github_pat_", 22},
        {"glpat-", 20}, {"xoxb-", 10},    {"xoxp-", 10},    {"xoxa-", 10},    {"xoxs-", 10},    {"xoxr-", 10}};
    for (const auto& key : keys) {
      if (key.prefix[1] == rest[1] && rest.starts_with(key.prefix)) {
        const std::size_t m = token_run(i + key.prefix.size());
        if (m - (i + key.prefix.size()) >= key.min_rest) return add(i, m, pii_kind::api_key);
        return 0;
      }
    }
    if (rest.starts_with("eyJ")) return jwt_at(i);
    return 0;
  }

  // Letters, digits, `_` and `-` from `i`, bounded.
  [[nodiscard]] std::size_t token_run(std::size_t i) const noexcept {
    const std::size_t limit = std::min(s_.size(), i + 512);
    while (i < limit && pii_chars::is(s_[i], pii_chars::token)) ++i;
    return i;
  }

  std::size_t bearer_at(std::size_t i) {
    std::size_t j = i;
    const std::size_t limit = std::min(s_.size(), i + 4096);
    auto token_char = [](char c) {
      return pii_chars::is(c, pii_chars::token) || c == '.' || c == '~' || c == '+' || c == '/' || c == '=';
    };
    while (j < limit && token_char(s_[j])) ++j;
    if (j - i < 16) return 0;
    return add(i, j, pii_kind::bearer_token);
  }

  // A JSON Web Token: three base64url parts, the first two starting `eyJ`.
  std::size_t jwt_at(std::size_t i) {
    std::size_t j = token_run(i);
    if (j - i < 10 || at(j) != '.' || s_.substr(j + 1, 3) != "eyJ") return 0;
    const std::size_t second = token_run(j + 1);
    if (second - (j + 1) < 10 || at(second) != '.') return 0;
    return add(i, token_run(second + 1), pii_kind::api_key);
  }

  // d.d.d.d, each 0-255 without a leading zero, not part of a longer dotted number.
  [[nodiscard]] std::size_t ipv4_at(std::size_t i) const noexcept {
    std::size_t j = i;
    for (int part = 0; part < 4; ++part) {
      if (part > 0) {
        if (at(j) != '.') return 0;
        ++j;
      }
      const std::size_t start = j;
      unsigned value = 0;
      while (j < s_.size() && j - start < 4 && pii_chars::is(s_[j], pii_chars::digit))
        value = value * 10 + unsigned(s_[j++] - '0');
      const std::size_t length = j - start;
      if (length == 0 || length > 3 || value > 255 || (length > 1 && s_[start] == '0')) return 0;
    }
    if (!boundary_after(j) ||
        (at(j) == '.' && (pii_chars::is(at(j + 1), pii_chars::digit) || stands_for_value(j + 1)))) {
      return 0;
    }
    return j;
  }

  // Hex digits, colons and (for an embedded IPv4) dots, validated by
  // inet_pton. Returns where the address ends, or where the shape it failed
  // to be ends (without a match), or 0.
  std::size_t ipv6_at(std::size_t i) {
    const std::size_t j = ipv6_shape_end(i);
    if (j == 0) return 0;
    char buffer[max_ipv6 + 1] = {};
    if (j - i <= max_ipv6) s_.copy(buffer, j - i, i);
    in6_addr address{};
    // An address's shape that is not one (`fe8::10::1`, `12:30:45`) is
    // passed over whole: a part of it is not read as an address either.
    if (j - i > max_ipv6 || inet_pton(AF_INET6, buffer, &address) != 1) return pass_over(j);
    return add(i, j, pii_kind::ipv6);
  }

  static constexpr std::size_t max_ipv6 = 45;  // INET6_ADDRSTRLEN less its terminator

  // Where the shape of an IPv6 address starting at `i` ends (hex digits,
  // colons and dots, two colons at least), or 0. It ends where its run of
  // those ends, wherever in the run it starts, so that a second pass
  // reading it from a mask's kept end (`*****1::…`) ends it where the first
  // did from the colons after the value; a run longer than any address is
  // a shape that is none.
  [[nodiscard]] std::size_t ipv6_shape_end(std::size_t i) noexcept {
    std::size_t j = shape_run_end(i);
    if (stands_for_value(j)) return 0;  // it went on into what a placeholder stands for
    if (j - i > max_ipv6) return boundary_after(j) ? j : 0;
    while (j > i && (s_[j - 1] == '.' || (s_[j - 1] == ':' && !(j - i >= 2 && s_[j - 2] == ':')))) --j;
    // A colon after it is punctuation: `at 2001:db8::1: ...`.
    if (std::count(s_.begin() + std::ptrdiff_t(i), s_.begin() + std::ptrdiff_t(j), ':') < 2 || !boundary_after(j)) {
      return 0;
    }
    // `::` alone (no digit) is the unspecified address in theory and JSON's punctuation in practice.
    if (std::none_of(s_.begin() + std::ptrdiff_t(i), s_.begin() + std::ptrdiff_t(j),
                     [](char c) { return pii_chars::is(c, pii_chars::hex); })) {
      return 0;
    }
    return j;
  }

  // The end of the run of hex digits, colons and dots that holds `i`: read
  // once per run, which the scanner may enter at each of its colons.
  std::size_t shape_run_end(std::size_t i) noexcept {
    if (i < run_.begin || i >= run_.end) {
      run_ = {i, i};
      while (run_.end < s_.size() &&
             (pii_chars::is(s_[run_.end], pii_chars::hex) || s_[run_.end] == ':' || s_[run_.end] == '.')) {
        ++run_.end;
      }
    }
    return run_.end;
  }

  // 13 to 19 digits starting as card numbers do (2-6), Luhn valid, in
  // groups between which up to two separators stand (`4111 1111`,
  // `4111-1111`, `4111.1111`, a line break); the longest valid run of whole
  // groups, so that a number written after it does not hide it.
  [[nodiscard]] std::size_t card_at(std::size_t i) const noexcept {
    if (s_[i] < '2' || s_[i] > '6') return 0;
    std::size_t j = i;
    std::size_t digits = 0;
    std::size_t best = 0;
    char digits_only[20];
    for (;;) {
      while (j < s_.size() && digits < 20 && pii_chars::is(s_[j], pii_chars::digit)) digits_only[digits++] = s_[j++];
      if (pii_chars::is(at(j), pii_chars::digit)) break;  // over 19 digits in a row
      if (digits >= 13 && boundary_after(j) && luhn_valid(std::string_view(digits_only, digits))) best = j;
      std::size_t k = j;
      while (k < s_.size() && k - j < 2 && pii_chars::group_separator(s_[k])) ++k;
      if (k == j || digits >= 19 || !pii_chars::is(at(k), pii_chars::digit)) break;
      j = k;
    }
    return best;
  }

  // A phone number: digits with single separators, `(` and `)`. From a
  // `+`: 8 to 15 digits; from `00`: 10 to 17; from `0`: 9 to 11.
  [[nodiscard]] std::size_t phone_at(std::size_t start, std::size_t i) const noexcept {
    std::size_t lo = 9, hi = 11;
    if (s_[start] == '+') {
      lo = 8;
      hi = 15;
    } else if (s_.substr(start, 2) == "00") {
      lo = 10;
      hi = 17;
    }
    // The longest run of whole digit groups with a count in range: digits
    // that follow (another number) do not hide the number before them.
    std::size_t j = i;
    std::size_t digits = 0;
    std::size_t best = 0;
    int open = 0;
    auto group_ends = [&] {
      if (open == 0 && digits >= lo && digits <= hi && boundary_after(j)) best = j;
    };
    const std::size_t limit = std::min(s_.size(), start + 32);
    while (j < limit) {
      const char c = s_[j];
      if (pii_chars::is(c, pii_chars::digit)) {
        ++digits;
        ++j;
        continue;
      }
      group_ends();
      if ((c == ' ' || c == '-' || c == '.') && (pii_chars::is(at(j + 1), pii_chars::digit) || at(j + 1) == '(')) {
        ++j;
      } else if (c == '(' && open == 0 && pii_chars::is(at(j + 1), pii_chars::digit)) {
        ++open;
        ++j;
      } else if (c == ')' && open == 1 && (pii_chars::is(at(j + 1), pii_chars::digit) || at(j + 1) == ' ')) {
        --open;
        ++j;
        if (at(j) == ' ' && !pii_chars::is(at(j + 1), pii_chars::digit)) break;
        if (at(j) == ' ') ++j;
      } else {
        break;
      }
    }
    if (j == limit) group_ends();
    return best;
  }

  std::size_t plus_sign(std::size_t i) {
    if (!on(pii_kind::phone) || (i > 0 && joins(i - 1))) return 0;
    const char next = at(i + 1);
    if (next < '1' || next > '9') return 0;
    if (const std::size_t m = phone_at(i, i + 1)) return add(i, m, pii_kind::phone);
    return 0;
  }

  // ISO 13616: a country code, two check digits and 11 to 30 letters and
  // digits, in either case, grouped by up to two separators or not; mod-97
  // decides where it ends. Returns where the IBAN ends (0: none), and where
  // its shape ends when it has one of at least 15 uppercase characters
  // grouped by single spaces.
  [[nodiscard]] std::pair<std::size_t, std::size_t> iban_at(std::size_t i) const noexcept {
    if (!pii_chars::letter(s_[i]) || !pii_chars::letter(at(i + 1)) || !pii_chars::is(at(i + 2), pii_chars::digit) ||
        !pii_chars::is(at(i + 3), pii_chars::digit)) {
      return {0, 0};
    }
    char compact[34];
    std::size_t ends[34];  // where the candidate of each length ends in the text
    std::size_t length = 0;
    std::size_t plain = 0;  // the length written in uppercase with single spaces
    bool still_plain = true;
    std::size_t j = i;
    while (j < s_.size() && length < 34) {
      const char c = s_[j];
      if (pii_chars::alnum(c)) {
        still_plain = still_plain && !pii_chars::is(c, pii_chars::lower);
        compact[length] = pii_chars::upper_case(c);
        ends[length++] = ++j;
        if (still_plain) plain = length;
        continue;
      }
      std::size_t k = j;
      while (k < s_.size() && k - j < 2 && pii_chars::group_separator(s_[k])) ++k;
      if (k == j || !pii_chars::alnum(at(k))) break;
      still_plain = still_plain && k == j + 1 && c == ' ';
      j = k;
    }
    // mod-97 of every length at once: the remainder of the characters after
    // the first four, then the first four appended (ISO 13616's rotation).
    if (length >= 15) {
      unsigned head = 0;  // the first four as digits, and how many digits that is
      unsigned head_scale = 1;
      for (std::size_t k = 0; k < 4; ++k) {
        const bool letter = compact[k] >= 'A';
        const unsigned v = letter ? unsigned(compact[k] - 'A') + 10 : unsigned(compact[k] - '0');
        head = head * (letter ? 100 : 10) + v;
        head_scale *= letter ? 100 : 10;
      }
      head %= 97;
      head_scale %= 97;
      std::array<unsigned, 35> remainder{};  // of compact[4, n)
      for (std::size_t k = 4; k < length; ++k) {
        const char ch = compact[k];
        remainder[k + 1] = ch >= 'A' ? (remainder[k] * 100 + unsigned(ch - 'A') + 10) % 97
                                     : (remainder[k] * 10 + unsigned(ch - '0')) % 97;
      }
      for (std::size_t n = length; n >= 15; --n) {
        if ((remainder[n] * head_scale + head) % 97 == 1 && boundary_after(ends[n - 1])) return {ends[n - 1], 0};
      }
    }
    return {0, plain >= 15 && boundary_after(ends[plain - 1]) ? ends[plain - 1] : 0};
  }

  [[nodiscard]] std::size_t national_id_at(std::size_t i, std::uint32_t rule) const {
    const auto& r = ids_[rule];
    for (const auto& shape : r.shapes) {
      const std::size_t length = match_shape(shape, s_.substr(i, std::min(max_candidate, s_.size() - i)));
      if (length == 0 || !boundary_after(i + length) || number_goes_on(i + length)) continue;
      if (!r.checksum || r.checksum(s_.substr(i, length))) return i + length;
    }
    return 0;
  }

  // An address: the local part before the `@` (back to the last match, at
  // most 64 bytes) and a domain of at least two labels after it.
  std::size_t at_sign(std::size_t i) {
    if (!on(pii_kind::email)) return 0;
    std::size_t begin = i;
    const std::size_t lowest = std::max(floor_, i > 64 ? i - 64 : 0);
    // Letters of any script may stand in the local part (RFC 6531).
    while (begin > lowest && pii_chars::is(s_[begin - 1], pii_chars::email_local | pii_chars::non_ascii)) --begin;
    while (begin < i && (s_[begin] == '.' || s_[begin] == '+' || s_[begin] == '-' || s_[begin] == '_')) ++begin;
    while (begin < i && (static_cast<unsigned char>(s_[begin]) & 0xC0) == 0x80) ++begin;  // never half a character
    if (begin == i || s_[i - 1] == '.') return 0;
    if (mask_end(begin, i - begin) || (begin > 0 && in_mask(begin - 1))) return 0;  // see run
    std::size_t j = i + 1;
    std::size_t labels = 0;
    std::size_t last_label = j;
    const std::size_t limit = std::min(s_.size(), i + 1 + 253);
    while (j < limit) {
      const std::size_t label = j;
      while (j < limit && pii_chars::is(s_[j], pii_chars::domain)) ++j;
      if (j == label || s_[label] == '-' || s_[j - 1] == '-') break;
      ++labels;
      last_label = label;
      if (at(j) == '.' && pii_chars::is(at(j + 1), pii_chars::domain)) {
        ++j;
      } else {
        break;
      }
    }
    if (labels < 2) return 0;
    // The domain goes on into what a placeholder stands for.
    if (joins(j) || (at(j) == '.' && joins(j + 1))) return 0;
    // The top-level domain is letters, at least two (or an internationalised one).
    std::size_t tld_letters = 0;
    for (std::size_t k = last_label; k < j; ++k) {
      if (!pii_chars::is(s_[k], pii_chars::upper | pii_chars::lower | pii_chars::non_ascii)) return 0;
      ++tld_letters;
    }
    if (tld_letters < 2) return 0;
    if (!out_->empty() && out_->back().end > begin) return 0;
    return add(begin, j, pii_kind::email);
  }

  // A phone number in a domestic format of a configured region:
  // `(415) 555-2671`, `8 (916) 123-45-67`, `98765 43210`, `138 0013 8000`.
  // Groups are read one by one; after each (parentheses closed, the number
  // standing alone) each region's shape is tried, and the longest that
  // fits wins, so that a number written after it does not hide it.
  // Returns where it ends, or 0.
  [[nodiscard]] std::size_t domestic_phone_at(std::size_t start) const noexcept {
    std::array<std::uint8_t, 8> groups{};
    std::size_t count = 0;
    char digits[16];
    std::size_t total = 0;
    bool open = false;
    bool parenthesised = false;
    std::size_t best = 0;
    std::size_t j = start;
    const std::size_t limit = std::min(s_.size(), start + 28);
    auto separator = [](char c) { return c == ' ' || c == '-' || c == '.' || c == '(' || c == ')'; };
    while (j < limit && count < groups.size()) {
      const std::size_t gap = j;
      while (j < limit && j - gap < 2 && separator(s_[j])) {
        if (s_[j] == '(') {
          if (open || parenthesised) return best;
          open = parenthesised = true;
        } else if (s_[j] == ')') {
          if (!open) return best;
          open = false;
        }
        ++j;
      }
      if (j >= limit || !pii_chars::is(s_[j], pii_chars::digit) || (count > 0 && j == gap)) return best;
      const std::size_t group = j;
      while (j < limit && total < sizeof digits && pii_chars::is(s_[j], pii_chars::digit)) digits[total++] = s_[j++];
      if (pii_chars::is(at(j), pii_chars::digit)) return best;  // longer than any domestic number
      groups[count++] = static_cast<std::uint8_t>(j - group);
      if (!open && boundary_after(j) && fits_region(std::string_view(digits, total), groups, count)) best = j;
    }
    return best;
  }

  // Whether the digits, in these groups, are a domestic number of a configured region.
  [[nodiscard]] bool fits_region(std::string_view d, const std::array<std::uint8_t, 8>& groups,
                                 std::size_t count) const noexcept {
    auto shaped = [&](std::initializer_list<int> want) {
      if (want.size() != count) return false;
      std::size_t g = 0;
      for (const int w : want) {
        if (groups[g++] != w) return false;
      }
      return true;
    };
    // An area code and exchange that start 2-9, after an optional trunk `1`.
    if (regions_.contains(phone_region::nanp) && (shaped({3, 3, 4}) || (shaped({1, 3, 3, 4}) && d[0] == '1'))) {
      const std::size_t area = count == 4 ? 1 : 0;
      if (d[area] >= '2' && d[area + 3] >= '2') return true;
    }
    // A trunk `8` and ten digits, in groups.
    if (regions_.contains(phone_region::ru) && d.size() == 11 && d[0] == '8' && count >= 3) return true;
    // Mobiles: ten digits from 6-9, whole or in groups of 5 or 3-3-4.
    if (regions_.contains(phone_region::in) && d.size() == 10 && d[0] >= '6' &&
        (count == 1 || shaped({5, 5}) || shaped({3, 3, 4}))) {
      return true;
    }
    // Mobiles: eleven digits from 13-19, whole or 3-4-4.
    return regions_.contains(phone_region::cn) && d.size() == 11 && d[0] == '1' && d[1] >= '3' &&
           (count == 1 || shaped({3, 4, 4}));
  }

  // A secret access key after the label that names it (`aws_secret_access_key
  // = ...`, `"SecretAccessKey": "..."`): 40 characters of base64. Alone it is
  // any 40 characters, so the label is what tells it.
  std::size_t labelled_secret_at(std::size_t i) {
    static constexpr std::string_view labels[] = {"aws_secret_access_key", "aws-secret-access-key", "secret_access_key",
                                                  "secretaccesskey",       "aws_secret_key",        "aws_secret"};
    const char first = pii_chars::upper_case(s_[i]);
    const char second = pii_chars::upper_case(at(i + 1));
    if (first == 'A' ? second != 'W' : first != 'S' || second != 'E') return 0;
    std::size_t label_end = 0;
    for (const std::string_view label : labels) {
      if (s_.size() - i < label.size()) continue;
      bool same = true;
      for (std::size_t k = 0; k < label.size() && same; ++k) {
        same = pii_chars::upper_case(s_[i + k]) == pii_chars::upper_case(label[k]);
      }
      if (same) {
        label_end = i + label.size();
        break;
      }
    }
    if (label_end == 0) return 0;
    std::size_t j = label_end;
    while (j < s_.size() && j - label_end < 8 &&
           (s_[j] == ' ' || s_[j] == '"' || s_[j] == '\'' || s_[j] == ':' || s_[j] == '=' || s_[j] == '\t')) {
      ++j;
    }
    auto base64 = [](char c) { return pii_chars::alnum(c) || c == '/' || c == '+'; };
    const std::size_t key = j;
    while (j < s_.size() && j - key <= 40 && base64(s_[j])) ++j;
    if (j - key != 40 || at(j) == '=') return 0;
    return add(key, j, pii_kind::api_key);
  }

  // The password in a URL's authority: `postgres://user:PASSWORD@host`,
  // kept ahead until the user part before it is read (it can hold an
  // address). Returns the authority, or 0.
  std::size_t url_password_at(std::size_t authority) {
    const std::size_t limit = std::min(s_.size(), authority + 256);
    std::size_t colon = 0;
    std::size_t last_at = 0;
    for (std::size_t j = authority; j < limit; ++j) {
      const char c = s_[j];
      if (c == '<' && colon != 0 && j == colon + 1) {  // redacted already: the user part is passed over as before
        const std::size_t e = placeholder_end(j);
        if (e != 0 && at(e) == '@') return keep_ahead(j, e, false, authority);
      }
      if (c == '*' && in_mask(j)) {  // masked already: as at '<'
        if (colon == 0 || j != colon + 1) break;
        std::size_t stars = j;
        while (stars < limit && s_[stars] == '*') ++stars;
        std::size_t e = stars;
        while (e < limit && e - stars < 6 && pii_chars::alnum(s_[e])) ++e;
        return at(e) == '@' && (e == stars || mask_end(stars, e - stars)) ? keep_ahead(j, e, false, authority) : 0;
      }
      if (c == '/' || c == '?' || c == '#' || c == ' ' || c == '"' || c == '\'' || c == '<' || c == '>' || c == '\n' ||
          c == '\r' || c == '\t' || c == '\\') {
        break;
      }
      if (c == ':' && colon == 0) colon = j;
      if (c == '@') last_at = j;
    }
    if (colon == 0 || last_at <= colon + 1) return 0;
    return keep_ahead(colon + 1, last_at, true, authority);
  }

  // Keeps [begin, end) ahead, a password or (`added` false) one redacted
  // already, to be taken when reading reaches it; returns `resume`.
  std::size_t keep_ahead(std::size_t begin, std::size_t end, bool added, std::size_t resume) noexcept {
    ahead_ = {begin, end, added};
    return resume;
  }

  // Takes what is kept ahead once reading reaches `i`; returns where reading goes on.
  std::size_t reach(std::size_t i) {
    if (ahead_.end == 0 || i < ahead_.begin) return i;
    const kept_ahead a = std::exchange(ahead_, {});
    return std::max(i, a.added ? add(a.begin, a.end, pii_kind::password) : pass_over(a.end));
  }

  // A PEM private key, `-----BEGIN ... PRIVATE KEY-----` to its END line;
  // one cut short (a truncated reply) to where its base64 stops.
  std::size_t private_key_at(std::size_t i) {
    const std::size_t header_end = std::min(s_.size(), i + 64);
    const std::size_t name = s_.substr(i, header_end - i).find("PRIVATE KEY-----");
    if (name == std::string_view::npos) return 0;
    // The algorithm's name (`RSA `, `ENCRYPTED `, `OPENSSH `) or none.
    for (std::size_t k = i + 11; k < i + name; ++k) {
      if (!pii_chars::is(s_[k], pii_chars::upper | pii_chars::digit) && s_[k] != ' ') return 0;
    }
    std::size_t j = i + name + 16;
    const std::size_t limit = std::min(s_.size(), j + 64 * 1024);
    // The body: base64, line breaks, and the headers of an encrypted key (`Proc-Type: 4,ENCRYPTED`).
    auto body = [](char c) {
      return pii_chars::alnum(c) || c == '+' || c == '/' || c == '=' || c == ' ' || c == '\n' || c == '\r' ||
             c == '\t' || c == ':' || c == ',' || c == '-';
    };
    const std::size_t from = j;
    while (j < limit && body(s_[j])) {
      if (s_[j] == '-' && s_.substr(j, 8) == "-----END") {
        const std::size_t close = s_.substr(j + 8, 64).find("-----");
        if (close != std::string_view::npos) return add(i, j + 8 + close + 5, pii_kind::private_key);
        break;
      }
      ++j;
    }
    while (j > from && (s_[j - 1] == ' ' || s_[j - 1] == '\n' || s_[j - 1] == '\r' || s_[j - 1] == '\t')) --j;
    return add(i, j, pii_kind::private_key);
  }

  const pii_kinds& kinds_;
  const std::vector<national_id_rule>& ids_;
  std::string_view s_;
  std::vector<pii_match>* out_;
  std::size_t floor_ = 0;
  struct kept_ahead {
    std::size_t begin = 0;
    std::size_t end = 0;  // 0: none
    bool added = false;
  } ahead_;
  struct {
    std::size_t begin = 0;
    std::size_t end = 0;
  } run_;                            // the last run shape_run_end read
  std::size_t ids_min_digits_ = 20;  // the fewest digits a national id rule's shape has
  bool ids_start_upper_ = false;     // a rule's shape can start with a letter
  phone_regions regions_;
};

}  // namespace detail
LLMDLQ_END_NAMESPACE
