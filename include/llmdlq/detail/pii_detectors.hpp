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
enum : std::uint8_t { digit = 1, upper = 2, lower = 4, hex = 8, email_local = 16, token = 32, domain = 64 };

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
  return t;
}
inline constexpr std::array<std::uint8_t, 256> table = make_table();

inline std::uint8_t of(char c) noexcept { return table[static_cast<unsigned char>(c)]; }
inline bool is(char c, std::uint8_t cls) noexcept { return (of(c) & cls) != 0; }
inline bool alnum(char c) noexcept { return is(c, digit | upper | lower); }
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

/// The longest an examined candidate may be: keeps the pass linear.
inline constexpr std::size_t max_candidate = 128;

class pii_scanner {
 public:
  /// Appends every match in `s` to `out`, in order, not overlapping.
  pii_scanner(const pii_kinds& kinds, const std::vector<national_id_rule>& ids, std::string_view s,
              std::vector<pii_match>& out) noexcept
      : kinds_(kinds), ids_(ids), s_(s), out_(&out) {
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
    std::size_t i = 0;
    const std::size_t n = s.size();
    while (i < n) {
      const char c = s[i];
      const std::uint8_t cls = pii_chars::of(c);
      if (cls & (pii_chars::digit | pii_chars::upper | pii_chars::lower)) {
        std::size_t end = i + 1;
        while (end < n && pii_chars::alnum(s[end])) ++end;
        if (i > 0 && s[i - 1] == '*') {  // the kept end of a mask: reading it again could join it to what follows
          i = end;
          continue;
        }
        const std::size_t matched = at_word(i, end);
        i = matched > end ? matched : end;
      } else if (c == '@') {
        i = std::max(at_sign(i), i + 1);
      } else if (c == '+') {
        i = std::max(plus_sign(i), i + 1);
      } else if (c == ':' && i + 1 < n && s[i + 1] == ':' && on(pii_kind::ipv6)) {
        i = std::max(ipv6_at(i), i + 1);
      } else {
        ++i;
      }
    }
  }

 private:
  [[nodiscard]] bool on(pii_kind k) const noexcept { return kinds_.contains(k); }

  std::size_t add(std::size_t begin, std::size_t end, pii_kind kind, std::uint32_t id = 0) {
    out_->push_back({begin, end, kind, id});
    floor_ = end;
    return end;
  }

  [[nodiscard]] char at(std::size_t i) const noexcept { return i < s_.size() ? s_[i] : '\0'; }
  [[nodiscard]] bool boundary_after(std::size_t i) const noexcept { return !pii_chars::alnum(at(i)); }

  // A word of letters and digits starts at `i` (the character before is not
  // one) and ends at `end`. Returns where a match ends, or 0.
  std::size_t at_word(std::size_t i, std::size_t end) {
    const char c = s_[i];
    if (pii_chars::is(c, pii_chars::digit)) {
      if (const std::size_t m = digits_at(i)) return m;
    } else if (pii_chars::is(c, pii_chars::upper)) {
      if (const std::size_t m = upper_at(i, end)) return m;
    } else {
      if (const std::size_t m = lower_at(i)) return m;
    }
    if (on(pii_kind::ipv6) && pii_chars::is(c, pii_chars::hex) && at(end) == ':') return ipv6_at(i);
    return 0;
  }

  // The digits in the number starting at `i`, through single separators, up to 20.
  [[nodiscard]] std::size_t run_digits(std::size_t i) const noexcept {
    std::size_t digits = 0;
    const std::size_t limit = std::min(s_.size(), i + 40);
    for (; i < limit && digits < 20; ++i) {
      const char c = s_[i];
      if (pii_chars::is(c, pii_chars::digit)) {
        ++digits;
      } else if (c != ' ' && c != '-' && c != '.' && c != '(' && c != ')' && c != '/') {
        break;
      }
    }
    return digits;
  }

  std::size_t digits_at(std::size_t i) {
    // The rest of a number (`1.2.3.4.5`, `85.07.30`): its start decided already.
    if (i >= 2 && pii_chars::is(s_[i - 2], pii_chars::digit) &&
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
    return 0;
  }

  std::size_t upper_at(std::size_t i, std::size_t word_end) {
    if (on(pii_kind::iban)) {
      const auto [match, shaped] = iban_at(i);
      if (match) return add(i, match, pii_kind::iban);
      if (shaped) return shaped;  // an IBAN's shape that fails mod-97: its groups are not read as anything else
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
      case 'b': case 'e': if (second != 'e' && second != 'y') return 0; break;
      case 'g': if (second != 'h' && second != 'i' && second != 'l') return 0; break;
      case 'r': case 's': if (second != 'k') return 0; break;
      case 'x': if (second != 'o') return 0; break;
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
        {"sk-", 20},  {"sk_live_", 16}, {"rk_live_", 16}, {"ghp_", 30}, {"gho_", 30},   {"ghu_", 30},
        {"ghs_", 30}, {"ghr_", 30},     {"github_pat_", 22}, {"glpat-", 20}, {"xoxb-", 10}, {"xoxp-", 10},
        {"xoxa-", 10}, {"xoxs-", 10},   {"xoxr-", 10}};
    for (const auto& key : keys) {
      if (rest.starts_with(key.prefix)) {
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
      while (j < s_.size() && j - start < 4 && pii_chars::is(s_[j], pii_chars::digit)) value = value * 10 + unsigned(s_[j++] - '0');
      const std::size_t length = j - start;
      if (length == 0 || length > 3 || value > 255 || (length > 1 && s_[start] == '0')) return 0;
    }
    if (!boundary_after(j) || (at(j) == '.' && pii_chars::is(at(j + 1), pii_chars::digit))) return 0;
    return j;
  }

  // Hex digits, colons and (for an embedded IPv4) dots, validated by
  // inet_pton. Returns where the address ends, or where the shape it failed
  // to be ends (without a match), or 0.
  std::size_t ipv6_at(std::size_t i) {
    std::size_t j = i;
    int colons = 0;
    const std::size_t limit = std::min(s_.size(), i + 45);
    while (j < limit && (pii_chars::is(s_[j], pii_chars::hex) || s_[j] == ':' || s_[j] == '.')) colons += s_[j++] == ':';
    while (j > i && (s_[j - 1] == '.' || (s_[j - 1] == ':' && !(j - i >= 2 && s_[j - 2] == ':')))) --j;
    if (colons < 2 || boundary_after(j) == false || at(j) == ':') return 0;
    // `::` alone (no digit) is the unspecified address in theory and JSON's punctuation in practice.
    if (std::none_of(s_.begin() + std::ptrdiff_t(i), s_.begin() + std::ptrdiff_t(j),
                     [](char c) { return pii_chars::is(c, pii_chars::hex); })) {
      return 0;
    }
    char buffer[46] = {};
    s_.copy(buffer, j - i, i);
    in6_addr address{};
    // An address's shape that is not one (`fe8::10::1`, `12:30:45`) is
    // passed over whole: a part of it is not read as an address either.
    if (inet_pton(AF_INET6, buffer, &address) != 1) return j;
    return add(i, j, pii_kind::ipv6);
  }

  // 13 to 19 digits, single spaces or dashes between groups, Luhn valid,
  // starting as card numbers do (2-6).
  [[nodiscard]] std::size_t card_at(std::size_t i) const noexcept {
    if (s_[i] < '2' || s_[i] > '6') return 0;
    std::size_t j = i;
    std::size_t digits = 0;
    char digits_only[20];
    while (j < s_.size() && digits < 20) {
      if (pii_chars::is(s_[j], pii_chars::digit)) {
        digits_only[digits++] = s_[j++];
      } else if ((s_[j] == ' ' || s_[j] == '-') && pii_chars::is(at(j + 1), pii_chars::digit)) {
        ++j;
      } else {
        break;
      }
    }
    if (digits < 13 || digits > 19 || !boundary_after(j)) return 0;
    return luhn_valid(std::string_view(digits_only, digits)) ? j : 0;
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
    if (!on(pii_kind::phone) || (i > 0 && pii_chars::alnum(s_[i - 1]))) return 0;
    const char next = at(i + 1);
    if (next < '1' || next > '9') return 0;
    if (const std::size_t m = phone_at(i, i + 1)) return add(i, m, pii_kind::phone);
    return 0;
  }

  // ISO 13616: a country code, two check digits and 11 to 30 letters and
  // digits, grouped by single spaces or not; mod-97 decides where it ends.
  // Returns where the IBAN ends (0: none), and where its shape ends when
  // it has one of at least 15 characters.
  [[nodiscard]] std::pair<std::size_t, std::size_t> iban_at(std::size_t i) const noexcept {
    if (!pii_chars::is(at(i + 1), pii_chars::upper) || !pii_chars::is(at(i + 2), pii_chars::digit) ||
        !pii_chars::is(at(i + 3), pii_chars::digit)) {
      return {0, 0};
    }
    char compact[34];
    std::size_t ends[34];  // where the candidate of each length ends in the text
    std::size_t length = 0;
    std::size_t j = i;
    while (j < s_.size() && length < 34) {
      const char c = s_[j];
      if (pii_chars::is(c, pii_chars::digit | pii_chars::upper)) {
        compact[length] = c;
        ends[length++] = ++j;
      } else if (c == ' ' && pii_chars::is(at(j + 1), pii_chars::digit | pii_chars::upper)) {
        ++j;
      } else {
        break;
      }
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
    return {0, length >= 15 && boundary_after(ends[length - 1]) ? ends[length - 1] : 0};
  }

  [[nodiscard]] std::size_t national_id_at(std::size_t i, std::uint32_t rule) const {
    const auto& r = ids_[rule];
    for (const auto& shape : r.shapes) {
      const std::size_t length = match_shape(shape, s_.substr(i, std::min(max_candidate, s_.size() - i)));
      if (length == 0 || !boundary_after(i + length)) continue;
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
    while (begin > lowest && pii_chars::is(s_[begin - 1], pii_chars::email_local)) --begin;
    while (begin < i && (s_[begin] == '.' || s_[begin] == '+' || s_[begin] == '-')) ++begin;
    if (begin == i || s_[i - 1] == '.') return 0;
    if (begin > 0 && s_[begin - 1] == '*') return 0;  // a mask's kept end (see run)
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
    // The top-level domain is letters, at least two.
    std::size_t tld_letters = 0;
    for (std::size_t k = last_label; k < j; ++k) {
      if (!pii_chars::is(s_[k], pii_chars::upper | pii_chars::lower)) return 0;
      ++tld_letters;
    }
    if (tld_letters < 2) return 0;
    if (!out_->empty() && out_->back().end > begin) return 0;
    return add(begin, j, pii_kind::email);
  }

  const pii_kinds& kinds_;
  const std::vector<national_id_rule>& ids_;
  std::string_view s_;
  std::vector<pii_match>* out_;
  std::size_t floor_ = 0;
  std::size_t ids_min_digits_ = 20;  // the fewest digits a national id rule's shape has
  bool ids_start_upper_ = false;     // a rule's shape can start with a letter
};

}  // namespace detail
LLMDLQ_END_NAMESPACE
