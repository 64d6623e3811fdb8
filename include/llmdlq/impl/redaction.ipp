// SPDX-License-Identifier: MIT
// Definitions for redaction.hpp: the options compiled once, the keyed
// tokens (HMAC-SHA-256 through OpenSSL's EVP_MAC), and the rewriting of
// texts and envelopes.
#pragma once

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <algorithm>
#include <array>
#include <mutex>
#include <stdexcept>

#include <boost/json/parse.hpp>
#include <fmt/format.h>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/identifiers.hpp"
#include "llmdlq/detail/json/byte_classes.hpp"
#include "llmdlq/detail/json/number_grammar.hpp"
#include "llmdlq/detail/json/text_passes.hpp"
#include "llmdlq/detail/redaction/json_path_scan.hpp"
#include "llmdlq/detail/redaction/pii_detectors.hpp"
#include "llmdlq/detail/redaction/pii_reading.hpp"
#include "llmdlq/detail/redaction/placeholder_shape.hpp"
#include "llmdlq/envelope.hpp"
#include "llmdlq/redaction.hpp"

LLMDLQ_BEGIN_NAMESPACE

LLMDLQ_INLINE std::string_view to_string(pii_kind k) noexcept {
  switch (k) {
    case pii_kind::email: return "email";
    case pii_kind::phone: return "phone";
    case pii_kind::iban: return "iban";
    case pii_kind::card: return "card";
    case pii_kind::ipv4: return "ipv4";
    case pii_kind::ipv6: return "ipv6";
    case pii_kind::api_key: return "api_key";
    case pii_kind::bearer_token: return "bearer_token";
    case pii_kind::national_id: return "national_id";
    case pii_kind::private_key: return "private_key";
    case pii_kind::password: return "password";
  }
  return "pii";
}

LLMDLQ_INLINE std::string_view to_string(redaction_action a) noexcept {
  switch (a) {
    case redaction_action::remove: return "remove";
    case redaction_action::mask: return "mask";
    case redaction_action::token: return "token";
  }
  return "remove";
}

namespace detail {

inline int digit_at(std::string_view s, std::size_t i) noexcept { return s[i] - '0'; }

// The digits of `s`, when it holds exactly `count` of them.
inline std::string only_digits(std::string_view s, std::size_t count) {
  std::string d;
  for (const char c : s) {
    if (c >= '0' && c <= '9') d += c;
  }
  return d.size() == count ? d : std::string();
}

inline bool bsn_valid(std::string_view id) {
  const std::string d = only_digits(id, 9);
  if (d.empty() || d == "000000000") return false;
  int sum = 0;
  for (std::size_t i = 0; i < 8; ++i) sum += int(9 - i) * digit_at(d, i);
  sum -= digit_at(d, 8);
  return sum % 11 == 0;
}

inline int weighted_check(std::string_view d, std::initializer_list<int> weights) {
  int sum = 0;
  std::size_t i = 0;
  for (const int w : weights) sum += w * digit_at(d, i++);
  return sum % 11 % 10;
}

inline bool inn_valid(std::string_view id) {
  if (id.size() == 10) {
    return weighted_check(id, {2, 4, 10, 3, 5, 9, 4, 6, 8}) == digit_at(id, 9);
  }
  if (id.size() == 12) {
    return weighted_check(id, {7, 2, 4, 10, 3, 5, 9, 4, 6, 8}) == digit_at(id, 10) &&
           weighted_check(id, {3, 7, 2, 4, 10, 3, 5, 9, 4, 6, 8}) == digit_at(id, 11);
  }
  return false;
}

inline bool snils_valid(std::string_view id) {
  const std::string d = only_digits(id, 11);
  if (d.empty()) return false;
  int sum = 0;
  for (std::size_t i = 0; i < 9; ++i) sum += int(9 - i) * digit_at(d, i);
  int check = sum % 101;
  if (check == 100) check = 0;
  return check == digit_at(d, 9) * 10 + digit_at(d, 10);
}

inline bool nic_valid(std::string_view id) {
  // The day of the year follows the year: 1-366 for men, 501-866 for women.
  const std::size_t day_at = id.size() == 10 ? 2 : 4;
  if (id.size() == 12 && !(id.starts_with("19") || id.starts_with("20"))) return false;
  const int day = digit_at(id, day_at) * 100 + digit_at(id, day_at + 1) * 10 + digit_at(id, day_at + 2);
  return (day >= 1 && day <= 366) || (day >= 501 && day <= 866);
}

}  // namespace detail

namespace national_ids {
// As printed on passports, identity cards and driving licences (4.2.3, with
// dots or spaces) and unbroken. Not 3.3.3: that is how an amount is grouped.
LLMDLQ_INLINE national_id_rule nl_bsn() {
  return {"nl_bsn", {"#########", "####.##.###", "#### ## ###"}, detail::bsn_valid};
}
LLMDLQ_INLINE national_id_rule ru_inn() { return {"ru_inn", {"############", "##########"}, detail::inn_valid}; }
LLMDLQ_INLINE national_id_rule ru_snils() { return {"ru_snils", {"###-###-### ##", "###########"}, detail::snils_valid}; }
LLMDLQ_INLINE national_id_rule lk_nic() { return {"lk_nic", {"#########[VXvx]", "############"}, detail::nic_valid}; }
}  // namespace national_ids

namespace detail {

// HMAC-SHA-256 keyed once. Contexts are copied from the keyed one once and
// then reused: re-initialising without a key restarts from the keyed state,
// without the allocations a copy per token would cost.
class keyed_hmac {
 public:
  explicit keyed_hmac(std::string_view secret) {
    mac_ = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
    if (mac_) ctx_ = EVP_MAC_CTX_new(mac_);
    char digest[] = "SHA256";
    const OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                                 OSSL_PARAM_construct_end()};
    if (!ctx_ || EVP_MAC_init(ctx_, reinterpret_cast<const unsigned char*>(secret.data()), secret.size(), params) != 1) {
      release();
      throw std::runtime_error("OpenSSL cannot compute HMAC-SHA-256");
    }
  }
  keyed_hmac(const keyed_hmac&) = delete;
  keyed_hmac& operator=(const keyed_hmac&) = delete;
  ~keyed_hmac() { release(); }

  [[nodiscard]] std::array<unsigned char, 32> operator()(std::string_view a, std::string_view b) const {
    std::array<unsigned char, 32> out{};
    EVP_MAC_CTX* c = acquire();
    std::size_t length = 0;
    const unsigned char separator = 0;
    const bool done = EVP_MAC_init(c, nullptr, 0, nullptr) == 1 &&
                      EVP_MAC_update(c, reinterpret_cast<const unsigned char*>(a.data()), a.size()) == 1 &&
                      EVP_MAC_update(c, &separator, 1) == 1 &&
                      EVP_MAC_update(c, reinterpret_cast<const unsigned char*>(b.data()), b.size()) == 1 &&
                      EVP_MAC_final(c, out.data(), &length, out.size()) == 1;
    release(c);
    if (!done) throw std::runtime_error("OpenSSL failed to compute HMAC-SHA-256");
    return out;
  }

 private:
  EVP_MAC_CTX* acquire() const {
    {
      const std::lock_guard lock(mutex_);
      if (!idle_.empty()) {
        EVP_MAC_CTX* c = idle_.back();
        idle_.pop_back();
        return c;
      }
    }
    EVP_MAC_CTX* c = EVP_MAC_CTX_dup(ctx_);
    if (!c) throw std::bad_alloc();
    return c;
  }
  void release(EVP_MAC_CTX* c) const {
    const std::lock_guard lock(mutex_);
    idle_.push_back(c);
  }

  void release() noexcept {
    for (EVP_MAC_CTX* c : idle_) EVP_MAC_CTX_free(c);
    idle_.clear();
    EVP_MAC_CTX_free(ctx_);
    EVP_MAC_free(mac_);
    ctx_ = nullptr;
    mac_ = nullptr;
  }
  EVP_MAC* mac_ = nullptr;
  EVP_MAC_CTX* ctx_ = nullptr;
  mutable std::mutex mutex_;
  mutable std::vector<EVP_MAC_CTX*> idle_;  // at most one per thread that made tokens at once
};

// The first 80 bits in RFC 4648's base32, lowercase: 16 characters, hardly
// ever a run of digits another detector could take for a value.
inline std::string base32_token(const std::array<unsigned char, 32>& digest) {
  static constexpr char alphabet[] = "abcdefghijklmnopqrstuvwxyz234567";
  std::string out;
  out.reserve(16);
  std::uint64_t buffer = 0;
  int bits = 0;
  for (std::size_t i = 0; i < 10; ++i) {
    buffer = (buffer << 8) | digest[i];
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(buffer >> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return out;
}

// The value as tokens compare it, into `out`: equal values differently
// written get one token.
inline void normalize(std::string_view kind, std::string_view value, std::string& out) {
  using namespace std::string_view_literals;  // compared by length first, then inline
  out.resize(value.size());  // never longer than the value
  char* w = out.data();
  if (kind == "card"sv || kind == "phone"sv || kind == "iban"sv) {
    for (const char c : value) {
      if ((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || c == '+') *w++ = c;
      if (c >= 'a' && c <= 'z') *w++ = char(c - 'a' + 'A');
    }
  } else if (kind == "email"sv || kind == "ipv6"sv) {
    for (const char c : value) *w++ = (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c;
  } else {
    w = std::copy(value.begin(), value.end(), w);
  }
  out.resize(static_cast<std::size_t>(w - out.data()));
}

// Whether `text` is one JSON number, at [begin, end), and blanks.
inline bool only_number(std::string_view text, std::size_t begin, std::size_t end) noexcept {
  const auto blanks = [](std::string_view s) { return std::all_of(s.begin(), s.end(), is_json_blank); };
  return is_json_number(text.substr(begin, end - begin)) && blanks(text.substr(0, begin)) && blanks(text.substr(end));
}

// One replacement to make: [begin, end) of the text, and what it is.
struct replacement {
  std::size_t begin = 0;
  std::size_t end = 0;
  std::string_view kind;
  std::string_view path;       // the pattern, for schema- and pointer-chosen values
  bool json_value = false;     // a whole JSON value: the replacement must stay JSON
  bool json_string = false;    // ... that is a quoted string
  std::string_view value;      // a detected value as it was read (escapes decoded): what a token or mask is of
};


// A value the document's structure chose (a schema-marked name, a pointer's
// date), as messages would quote it, and what replaced it: error messages
// quote values (`found integer 123456782`, `2027-01-02 is after ...`) that
// no detector knows.
struct removed_value {
  std::string value;
  std::string placeholder;
};

inline constexpr std::size_t max_removed_values = 64;

inline void note_removed(std::vector<removed_value>& removed, std::string_view kind, std::string_view raw,
                         bool quoted, const std::string& placeholder) {
  (void)kind;
  if (removed.size() >= max_removed_values) return;
  std::string value(raw);
  if (quoted) {  // the string as JSON spells it: decoded as a message would quote it
    boost::system::error_code ec;
    const auto parsed = boost::json::parse(fmt::format("\"{}\"", raw), ec);
    if (!ec && parsed.is_string()) value = std::string(parsed.get_string());
  }
  if (value.size() < 3) return;  // shorter values would match ordinary words
  for (const auto& r : removed) {
    if (r.value == value) return;
  }
  removed.push_back({std::move(value), placeholder});
}

// `text` with every occurrence of a removed value replaced as it was in the raw text.
inline bool replace_removed(std::string& text, const std::vector<removed_value>& removed) {
  bool changed = false;
  for (const auto& r : removed) {
    for (std::size_t at = text.find(r.value); at != std::string::npos; at = text.find(r.value, at + r.placeholder.size())) {
      text.replace(at, r.value.size(), r.placeholder);
      changed = true;
    }
  }
  return changed;
}

}  // namespace detail

struct redactor::state {
  redaction_options options;
  std::vector<detail::pointer_pattern> pointers;
  std::unique_ptr<detail::keyed_hmac> hmac;
  detail::phone_regions regions;

  [[nodiscard]] redaction_action action_for(std::string_view kind) const {
    if (const auto it = options.actions.find(kind); it != options.actions.end()) return it->second;
    if (options.action) return *options.action;
    return hmac ? redaction_action::token : redaction_action::remove;
  }

  [[nodiscard]] std::string_view kind_name(const detail::pii_match& m) const {
    if (m.kind == pii_kind::national_id) return options.national_ids[m.national_id].name;
    return to_string(m.kind);
  }

  // The tokens one call has made: a value the text repeats is hashed once.
  struct made_token {
    std::string_view kind;
    std::string value;  // normalized
    std::string token;
  };
  static constexpr std::size_t max_made_tokens = 32;

  // What one call reuses from value to value.
  struct scratch {
    std::vector<made_token> made;
    std::string value;  // the value normalized
  };

  // Appends to `out` what replaces `value`.
  void placeholder(std::string& out, std::string_view kind, redaction_action action, std::string_view value,
                   scratch& reuse) const {
    switch (action) {
      case redaction_action::remove: break;
      case redaction_action::mask: {
        detail::normalize(kind, value, reuse.value);
        const std::string_view v = reuse.value;
        // At least four stars, more than Markdown's emphasis: a second pass
        // knows a mask by them (see pii_scanner::in_mask).
        const std::size_t keep = std::min({options.mask_keep, v.size() / 2, v.size() > 4 ? v.size() - 4 : 0});
        // Only the letters and digits that end it are kept: `::1` could be
        // read as an address again, and `**a*bc` as a mask's end and a word.
        std::size_t kept = 0;
        while (kept < keep && detail::pii_chars::alnum(v[v.size() - 1 - kept])) ++kept;
        out.append(std::max<std::size_t>(v.size() - kept, 4), '*');
        out += v.substr(v.size() - kept);
        return;
      }
      case redaction_action::token: {
        detail::normalize(kind, value, reuse.value);
        for (const auto& m : reuse.made) {
          if (m.kind == kind && m.value == reuse.value) {
            out += m.token;
            return;
          }
        }
        std::string token = fmt::format("<{}:{}>", kind, detail::base32_token((*hmac)(kind, reuse.value)));
        out += token;
        if (reuse.made.size() < max_made_tokens) reuse.made.push_back({kind, reuse.value, std::move(token)});
        return;
      }
    }
    fmt::format_to(std::back_inserter(out), "<{}>", kind);
  }

  // Rewrites `text` with `found` (ordered, not overlapping) and reports
  // each; `removed` (when given) gains each value chosen by its place.
  std::string apply(std::string_view text, const std::vector<detail::replacement>& found, std::string_view field,
                    std::vector<redaction_summary>* report, std::vector<detail::removed_value>* removed = nullptr) const {
    if (found.empty()) return std::string(text);
    std::string out;
    out.reserve(text.size() + found.size() * 24);
    scratch reuse;
    std::string replaced;
    std::size_t last = 0;
    for (const auto& r : found) {
      out.append(text, last, r.begin - last);
      const redaction_action action = action_for(r.kind);
      std::string_view value = r.value.empty() ? text.substr(r.begin, r.end - r.begin) : r.value;
      if (r.json_string && value.size() >= 2 && (value.front() == '"' || value.front() == '\'') && value.back() == value.front()) {
        value = value.substr(1, value.size() - 2);
      }
      if (r.json_value && detail::is_placeholder(value)) {  // chosen again on a second pass
        out.append(text, r.begin, r.end - r.begin);
        last = r.end;
        continue;
      }
      replaced.clear();
      if (r.json_value) replaced += '"';
      placeholder(replaced, r.kind, action, value, reuse);
      if (r.json_value) {
        const std::string_view inner = std::string_view(replaced).substr(1);
        if (removed) detail::note_removed(*removed, r.kind, value, r.json_string, std::string(inner));
        // A mask's kept characters never hold a broken escape: it masks everything instead.
        if (inner.find('\\') != std::string_view::npos || inner.find('"') != std::string_view::npos) {
          replaced.replace(1, std::string::npos, inner.size(), '*');
        }
        replaced += '"';
      }
      const bool already = replaced == text.substr(r.begin, r.end - r.begin);  // a second pass
      out += replaced;
      last = r.end;
      if (report && !already) note(*report, field, r, action);
    }
    out.append(text, last, std::string_view::npos);
    return out;
  }

  void note(std::vector<redaction_summary>& report, std::string_view field, const detail::replacement& r,
            redaction_action action) const {
    const std::string_view act = to_string(action);
    auto it = std::find_if(report.begin(), report.end(), [&](const redaction_summary& s) {
      return s.field == field && s.kind == r.kind && s.action == act && s.path == r.path;
    });
    if (it == report.end()) {
      redaction_summary s;
      s.field = std::string(field);
      s.kind = std::string(r.kind);
      s.action = std::string(act);
      s.path = std::string(r.path);
      if (action == redaction_action::token) s.key_id = options.key->id;
      report.push_back(std::move(s));
      it = report.end() - 1;
    }
    ++it->count;
    if (it->spans.size() < redaction_summary::max_spans) it->spans.emplace_back(r.begin, r.end - r.begin);
  }

  // The detectors over `text` as it is meant (see pii_reading), each
  // finding at its span of `text`; `reading` keeps what they read.
  std::string document(std::string_view text, std::span<const pii_path> schema_paths, std::string_view field,
                       std::vector<redaction_summary>* report, std::vector<detail::removed_value>* removed) const;

  void detect(std::string_view text, detail::pii_reading& reading, std::vector<detail::replacement>& out) const {
    if (options.detect.empty()) return;
    std::vector<detail::pii_match> matches;
    matches.reserve(text.size() / 256 + 4);
    detail::read_for_detection(text, reading);
    const std::string_view read = reading.same ? text : std::string_view(reading.text);
    detail::pii_scanner(options.detect, options.national_ids, read, matches, regions).run();
    out.reserve(out.size() + matches.size());
    std::size_t cursor = 0;
    for (const auto& m : matches) {
      const auto [begin, end] = reading.original(m.begin, m.end, cursor);
      out.push_back({begin, end, kind_name(m), {}, false, false, read.substr(m.begin, m.end - m.begin)});
    }
  }
};

LLMDLQ_INLINE expected<redactor, redaction_error> redactor::create(redaction_options options) {
  auto s = std::make_shared<state>();
  if (options.key) {
    if (options.key->id.empty()) return unexpected(redaction_error{"key", "the key needs an id, reported with its tokens"});
    if (options.key->secret.size() < 32) {
      return unexpected(redaction_error{
          "key", fmt::format("the key's secret has {} bytes; at least 32 are needed", options.key->secret.size())});
    }
    s->hmac = std::make_unique<detail::keyed_hmac>(options.key->secret);
  }
  if (options.mask_keep > 6) {
    return unexpected(redaction_error{"mask_keep", "a mask keeps at most 6 characters: more could be detected again"});
  }
  const bool tokens_wanted = options.action == redaction_action::token ||
                             std::any_of(options.actions.begin(), options.actions.end(),
                                         [](const auto& a) { return a.second == redaction_action::token; });
  if (tokens_wanted && !options.key) {
    return unexpected(redaction_error{"key", "the token action needs a key: without one a token could be reversed by a dictionary"});
  }
  for (const auto& rule : options.national_ids) {
    if (rule.name.empty() || rule.shapes.empty() ||
        std::any_of(rule.shapes.begin(), rule.shapes.end(), [](const std::string& shape) { return shape.empty(); })) {
      return unexpected(redaction_error{"national_ids", "a national id rule needs a name and non-empty shapes"});
    }
  }
  if (options.national_ids.empty()) options.detect.remove(pii_kind::national_id);
  for (const std::string& region : options.phone_regions) {
    if (region == "US" || region == "CA") {
      s->regions.add(detail::phone_region::nanp);
    } else if (region == "RU" || region == "KZ") {
      s->regions.add(detail::phone_region::ru);
    } else if (region == "IN") {
      s->regions.add(detail::phone_region::in);
    } else if (region == "CN") {
      s->regions.add(detail::phone_region::cn);
    } else {
      return unexpected(redaction_error{
          "phone_regions", fmt::format("no domestic phone format is known for '{}' (US, CA, RU, KZ, IN, CN are); numbers "
                                       "written with +, 00 or a trunk 0 are read in every region",
                                       region)});
    }
  }
  for (std::uint32_t i = 0; i < options.pointers.size(); ++i) {
    const std::string& p = options.pointers[i];
    if (p.empty() || p.front() != '/') {
      return unexpected(redaction_error{"pointers", fmt::format("'{}' is not a JSON Pointer to a value inside the document", p)});
    }
    s->pointers.push_back(detail::compile_pointer_pattern(p, i));
  }
  s->options = std::move(options);
  return redactor(std::move(s));
}

LLMDLQ_INLINE const redactor& redactor::standard() {
  static const redactor r = *create({});
  return r;
}

LLMDLQ_INLINE const redactor& redactor::none() {
  static const redactor r = [] {
    redaction_options o;
    o.detect = {};
    o.schema_annotations = false;
    return *create(std::move(o));
  }();
  return r;
}

LLMDLQ_INLINE bool redactor::active() const noexcept {
  return !state_->options.detect.empty() || !state_->pointers.empty() || state_->options.schema_annotations;
}

LLMDLQ_INLINE std::string redactor::redact_text(std::string_view text, std::string_view field,
                                                std::vector<redaction_summary>* report) const {
  std::vector<detail::replacement> found;
  detail::pii_reading reading;
  state_->detect(text, reading, found);
  return state_->apply(text, found, field, report);
}

LLMDLQ_INLINE std::string redactor::redact_document(std::string_view text, std::span<const pii_path> schema_paths,
                                                    std::string_view field,
                                                    std::vector<redaction_summary>* report) const {
  return state_->document(text, schema_paths, field, report, nullptr);
}

LLMDLQ_INLINE std::string redactor::state::document(std::string_view text, std::span<const pii_path> schema_paths,
                                                    std::string_view field, std::vector<redaction_summary>* report,
                                                    std::vector<detail::removed_value>* removed) const {
  detail::count_text_pass(detail::text_pass::redaction);
  const state& st = *this;
  // The configured pointers are labelled `pii`; the schema's paths follow them.
  const std::vector<detail::pointer_pattern>* patterns = &st.pointers;
  std::vector<detail::pointer_pattern> with_schema;
  std::vector<std::string> labels;  // as placeholders' kinds
  if (st.options.schema_annotations && !schema_paths.empty()) {
    with_schema = st.pointers;
    for (const auto& p : schema_paths) {
      with_schema.push_back(detail::compile_pointer_pattern(p.pointer, static_cast<std::uint32_t>(with_schema.size())));
      labels.push_back(detail::placeholder_kind(p.label));
    }
    patterns = &with_schema;
  }
  std::vector<detail::replacement> detected;
  detail::pii_reading reading;
  st.detect(text, reading, detected);
  // A detected value is one word to the walk, whatever it holds, as its
  // placeholder will be on a second pass.
  std::vector<detail::opaque_span> opaque;
  opaque.reserve(detected.size());
  for (const auto& d : detected) opaque.push_back({d.begin, d.end});
  std::vector<detail::replacement> chosen;
  detail::json_path_scan scan(text, *patterns, opaque);
  for (const auto& m : scan.run()) {
    const auto& pattern = (*patterns)[m.pattern];
    const std::string_view label =
        pattern.label < st.pointers.size() ? std::string_view("pii") : std::string_view(labels[pattern.label - st.pointers.size()]);
    chosen.push_back({m.begin, m.end, label, pattern.pointer, true, m.is_string, {}});
  }
  // A value found where JSON has a bare one (a card number written as a
  // number) is replaced by a string, so that the text stays JSON: in a text
  // that starts as a container does, where the walk reads what JSON would
  // (in one that starts otherwise, a top-level string or prose, brackets
  // may be text), and in a text that is one number.
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && (text[first] == '{' || text[first] == '[')) {
    // A value found in a number is replaced with the whole number, its
    // token or mask still of the value alone.
    std::size_t kept = 0;
    for (std::size_t i = 0; i < detected.size(); ++i) {
      auto d = detected[i];
      if (const detail::opaque_span number = scan.standalone(i); number.end != 0) {
        if (kept > 0 && detected[kept - 1].end > number.begin) continue;  // a second value in the same number
        if (d.value.empty()) d.value = text.substr(d.begin, d.end - d.begin);
        d.begin = number.begin;
        d.end = number.end;
        d.json_value = true;
      }
      detected[kept++] = d;
    }
    detected.resize(kept);
  } else if (detected.size() == 1) {
    detected[0].json_value = detail::only_number(text, detected[0].begin, detected[0].end);
  }
  if (chosen.empty()) return st.apply(text, detected, field, report, removed);
  // The values the document's structure chose win over detections inside them.
  std::sort(chosen.begin(), chosen.end(), [](const auto& a, const auto& b) { return a.begin < b.begin; });
  std::vector<detail::replacement> merged;
  merged.reserve(chosen.size() + detected.size());
  std::size_t c = 0;
  for (const auto& d : detected) {
    while (c < chosen.size() && chosen[c].end <= d.begin) merged.push_back(chosen[c++]);
    if (c < chosen.size() && chosen[c].begin < d.end) continue;  // overlaps a chosen value
    merged.push_back(d);
  }
  while (c < chosen.size()) merged.push_back(chosen[c++]);
  return st.apply(text, merged, field, report, removed);
}

namespace detail {

// Redacts a captured text in place: as a document or as plain text, through
// its bytes when it is stored in base64.
template <class Redact>
void redact_captured(captured_text& c, Redact&& redact) {
  if (!c.text) return;
  if (!c.base64) {
    std::string redacted = redact(std::string_view(*c.text));
    if (redacted != *c.text) *c.text = std::move(redacted);
    return;
  }
  const std::string bytes = base64_decode(*c.text);
  std::string redacted = redact(std::string_view(bytes));
  if (redacted != bytes) *c.text = base64(redacted);
}

inline void redact_json_strings(boost::json::value& v, const redactor& r, std::vector<redaction_summary>& report,
                                const std::vector<removed_value>& removed, int depth = 0) {
  if (depth > 64) return;
  if (auto* s = v.if_string()) {
    std::string known(*s);
    replace_removed(known, removed);
    std::string redacted = r.redact_text(known, "extensions", &report);
    if (redacted != *s) *s = redacted;
  } else if (auto* a = v.if_array()) {
    for (auto& item : *a) redact_json_strings(item, r, report, removed, depth + 1);
  } else if (auto* o = v.if_object()) {
    for (auto& member : *o) redact_json_strings(member.value(), r, report, removed, depth + 1);
  }
}

}  // namespace detail

LLMDLQ_INLINE void redactor::redact(envelope& e, std::span<const pii_path> schema_paths) const {
  if (!active()) return;
  auto& report = e.redactions;
  std::vector<detail::removed_value> removed;
  detail::redact_captured(e.raw_response, [&](std::string_view text) {
    return state_->document(text, schema_paths, "raw_response", &report, &removed);
  });
  if (e.original_input) {
    detail::redact_captured(*e.original_input,
                            [&](std::string_view text) { return redact_text(text, "original_input", &report); });
  }
  auto redact_in_place = [&](std::string& text) {
    detail::replace_removed(text, removed);
    std::string redacted = redact_text(text, "failure", &report);
    if (redacted != text) text = std::move(redacted);
  };
  redact_in_place(e.failure.message);
  for (auto& error : e.failure.errors) {
    redact_in_place(error.message);
    redact_in_place(error.instance_path);
  }
  if (!e.extensions.empty()) {
    boost::json::value extensions(std::move(e.extensions));
    detail::redact_json_strings(extensions, *this, report, removed);
    e.extensions = std::move(extensions.as_object());
  }
}

LLMDLQ_END_NAMESPACE
