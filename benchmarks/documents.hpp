// SPDX-License-Identifier: MIT
// Deterministic benchmark documents of a chosen size, and the single-fault
// variants the benchmark's checks use: receipts (compact, valid against
// examples/data/receipt.schema.json) and batches of user records
// (pretty-printed, valid against benchmarks/data/users.schema.json).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

namespace llmdlq_bench {

/// Faults a generated receipt can carry, one per keyword the benchmark's
/// validators must be seen to enforce. Combine with `|`.
enum mutation : unsigned {
  no_mutation = 0,
  extra_item_field = 1u << 0,     ///< additionalProperties: false (on items)
  missing_currency = 1u << 1,     ///< required
  unknown_currency = 1u << 2,     ///< enum
  bad_sku = 1u << 3,              ///< pattern
  zero_quantity = 1u << 4,        ///< exclusiveMinimum
  negative_unit_price = 1u << 5,  ///< minimum
  total_as_string = 1u << 6,      ///< type
  long_description = 1u << 7,     ///< maxLength (counted in code points)
  impossible_date = 1u << 8,      ///< format: date
  bad_date_time = 1u << 9,        ///< format: date-time
  bad_uuid = 1u << 10,            ///< format: uuid
  bad_iban_checksum = 1u << 11,   ///< format: iban
  bad_email = 1u << 12,           ///< format: email
  total_not_in_cents = 1u << 13,  ///< multipleOf
};

namespace detail {

// splitmix64: the same sequence on every platform, unlike <random>'s distributions.
class rng {
 public:
  explicit rng(std::uint64_t seed) noexcept : state_(seed) {}
  std::uint64_t next() noexcept {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform enough in [0, n) for picking test data.
  std::uint64_t below(std::uint64_t n) noexcept { return next() % n; }

 private:
  std::uint64_t state_;
};

struct product {
  std::string_view description;
  std::string_view sku;  // empty: the line carries no SKU
  std::int64_t unit_price_cents;
  bool sold_by_weight;  // quantity in kilograms with three decimals
  int vat_rate;
};

// Lines of a Dutch supermarket receipt, a third of them for Russian and Sri
// Lankan products as a world-food shelf labels them: ASCII, two-byte Cyrillic
// and three-byte Sinhala UTF-8 in every document, whatever its size.
inline constexpr product products[] = {
    {"Halfvolle melk 1L", "AH-8710400", 119, false, 9},
    {"Volkoren brood", "", 249, false, 9},
    {"Goudse kaas jong belegen", "AH-8718907", 1398, true, 9},
    {"Koffiebonen 1kg", "AH-8711000", 1161, false, 9},
    {"Appelsap troebel 1,5L", "", 229, false, 9},
    {"Pindakaas met stukjes 600g", "AH-8710605", 389, false, 9},
    {"Bananen los", "", 189, true, 9},
    {"Afwasmiddel citroen 500ml", "AH-8714100", 179, false, 21},
    {"Молоко 3,2% 930 мл", "", 109, false, 9},
    {"Хлеб Бородинский", "RU-4607001", 189, false, 9},
    {"Сыр Российский весовой", "", 1290, true, 9},
    {"Гречка ядрица 900 г", "RU-4600300", 249, false, 9},
    {"Кефир 1% 1 л", "", 159, false, 9},
    {"Пельмени «Сибирские» 800 г", "RU-4607065", 599, false, 9},
    {"Яблоки Голден", "", 279, true, 9},
    {"Средство для мытья посуды 450 мл", "RU-4600702", 349, false, 21},
    {"තේ කොළ 400g", "LK-4791000", 649, false, 9},
    {"පොල් තෙල් 1L", "", 549, false, 9},
    {"කිරි පිටි 400g", "LK-4792034", 479, false, 9},
    {"සීනි", "", 189, true, 9},
    {"හාල් කිලෝ 5", "LK-4793301", 1199, false, 9},
    {"පරිප්පු 500g", "", 299, false, 9},
    {"බිස්කට් පැකට්", "LK-4794420", 219, false, 9},
    {"අල", "", 249, true, 9},
};

inline void append_string(std::string& out, std::string_view text) {
  out += '"';
  out += text;  // the generator's strings need no escaping
  out += '"';
}

/// `cents` as a decimal with two places: 1450 -> 14.50.
inline void append_cents(std::string& out, std::int64_t cents) {
  if (cents < 0) {
    out += '-';
    cents = -cents;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld.%02lld", static_cast<long long>(cents / 100),
                static_cast<long long>(cents % 100));
  out += buf;
}

/// A quantity in thousandths: 2000 -> 2, 750 -> 0.75, 1234 -> 1.234.
inline void append_quantity(std::string& out, std::int64_t milli) {
  char buf[32];
  if (milli % 1000 == 0) {
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(milli / 1000));
  } else {
    std::snprintf(buf, sizeof buf, "%lld.%03lld", static_cast<long long>(milli / 1000),
                  static_cast<long long>(milli % 1000));
    std::string_view text(buf);
    while (text.back() == '0') text.remove_suffix(1);
    out += text;
    return;
  }
  out += buf;
}

inline std::string make_uuid_v7(rng& r) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string id;
  const std::uint64_t hi = r.next(), lo = r.next();
  for (int i = 0; i < 32; ++i) {
    const std::uint64_t word = i < 16 ? hi : lo;
    char c = hex[(word >> (4 * (i % 16))) & 0xF];
    if (i == 12) c = '7';                          // version
    if (i == 16) c = hex[8 + ((lo >> 60) & 0x3)];  // RFC 4122 variant
    if (i == 8 || i == 12 || i == 16 || i == 20) id += '-';
    id += c;
  }
  return id;
}

}  // namespace detail

/// A compact (unindented, as structured-output APIs emit it) receipt of about
/// `target_bytes` bytes that validates against receipt.schema.json unless
/// `faults` asks otherwise. The same size and faults always give the same bytes.
///
/// Documents under 512 bytes carry a minimal header (id, merchant name, date,
/// date-time, currency, total) and one line; larger ones the full header
/// (VAT id, IBAN, e-mail, tax, payment method, card digits, confidence) and as
/// many lines as it takes to reach the size.
inline std::string make_receipt(std::size_t target_bytes, unsigned faults = no_mutation) {
  detail::rng r(0x5EC7E1F7ull ^ target_bytes);
  const bool full = target_bytes >= 512;

  std::string lines;
  std::int64_t total_cents = 0;
  std::int64_t tax_cents = 0;
  // The header and the closing take ~390 bytes on full receipts, ~210 on small ones.
  const std::size_t header_estimate = full ? 390 : 210;
  for (std::size_t index = 0; index == 0 || header_estimate + lines.size() < target_bytes; ++index) {
    const auto& p = detail::products[index == 0 ? 0 : r.below(std::size(detail::products))];
    const std::int64_t quantity_milli = p.sold_by_weight
                                            ? 150 + static_cast<std::int64_t>(r.below(1850))
                                            : 1000 * (1 + static_cast<std::int64_t>(r.below(3)));
    const std::int64_t price = (faults & negative_unit_price) && index == 0 ? -p.unit_price_cents
                                                                            : p.unit_price_cents;
    const std::int64_t amount = (quantity_milli * price + 500) / 1000;
    total_cents += amount;
    tax_cents += amount * p.vat_rate / (100 + p.vat_rate);

    if (index != 0) lines += ',';
    lines += R"({"description":)";
    if ((faults & long_description) && index == 0) {
      std::string text;
      while (text.size() < 3 * 520) text += "පොල් තෙල් ";  // > 500 code points
      detail::append_string(lines, text);
    } else {
      detail::append_string(lines, p.description);
    }
    if (!p.sku.empty()) {
      lines += R"(,"sku":)";
      detail::append_string(lines, (faults & bad_sku) && index == 0 ? "ah_8710400" : p.sku);
    }
    lines += R"(,"quantity":)";
    detail::append_quantity(lines, (faults & zero_quantity) && index == 0 ? 0 : quantity_milli);
    lines += R"(,"unit_price":)";
    detail::append_cents(lines, price);
    lines += R"(,"amount":)";
    detail::append_cents(lines, amount);
    if (full) {
      lines += R"(,"vat_rate":)";
      lines += std::to_string(p.vat_rate);
    }
    if ((faults & extra_item_field) && index == 0) lines += R"(,"note":"2+1 gratis")";
    lines += '}';
  }

  std::string out;
  out.reserve(header_estimate + lines.size() + 64);
  out += R"({"receipt_id":)";
  detail::append_string(out, (faults & bad_uuid) ? "0190f3a2-7c1e-7d4b-9a55-3f2e8b1c4d6" : detail::make_uuid_v7(r));
  out += R"(,"merchant":{"name":"Albert Heijn 1423")";
  if (full) {
    out += R"(,"vat_id":"NL003028112B01","iban":)";
    detail::append_string(out, (faults & bad_iban_checksum) ? "NL91ABNA0417164301" : "NL91ABNA0417164300");
    out += R"(,"email":)";
    detail::append_string(out, (faults & bad_email) ? "kassa@@ah.nl" : "kassa.1423@ah.nl");
  }
  out += R"(},"date":)";
  detail::append_string(out, (faults & impossible_date) ? "2026-02-30" : "2026-09-28");
  out += R"(,"issued_at":)";
  detail::append_string(out, (faults & bad_date_time) ? "2026-09-28T25:42:05+02:00"
                                                      : "2026-09-28T17:42:05+02:00");
  if (!(faults & missing_currency)) {
    out += R"(,"currency":)";
    detail::append_string(out, (faults & unknown_currency) ? "euro" : "EUR");
  }
  out += R"(,"total":)";
  if (faults & total_as_string) {
    out += '"';
    detail::append_cents(out, total_cents);
    out += '"';
  } else {
    detail::append_cents(out, total_cents);
    if (faults & total_not_in_cents) out += '5';
  }
  if (full) {
    out += R"(,"tax":)";
    detail::append_cents(out, tax_cents);
    out += R"(,"payment_method":"card","card_last4":"4821")";
  }
  out += R"(,"items":[)";
  out += lines;
  out += ']';
  if (full) out += R"(,"confidence":0.97)";
  out += '}';
  return out;
}

/// Faults a generated user batch can carry (in its first record).
enum user_mutation : unsigned {
  user_extra_field = 1u << 0,       ///< additionalProperties: false
  user_missing_email = 1u << 1,     ///< required
  user_unknown_role = 1u << 2,      ///< enum
  user_active_as_string = 1u << 3,  ///< type
  user_empty_name = 1u << 4,        ///< minLength
  user_bad_id = 1u << 5,            ///< format: uuid
  user_bad_email = 1u << 6,         ///< format: email
  user_bad_created_at = 1u << 7,    ///< format: date-time
};

namespace detail {

struct person {
  std::string_view name;
  std::string_view mailbox;  // the e-mail address's local part
};

// Names as a sign-up export from an international service holds them: ASCII,
// Latin with diacritics, Cyrillic and Sinhala.
inline constexpr person people[] = {
    {"Maria Jansen", "maria.jansen"},       {"Jiří Dvořák", "jiri.dvorak"},
    {"Ólafur Sigurðsson", "olafur.s"},      {"Анна Смирнова", "anna.smirnova"},
    {"Дмитрий Кузнецов", "d.kuznetsov"},    {"කසුන් පෙරේරා", "kasun.perera"},
    {"Nimali Fernando", "nimali+news"},     {"Søren Kierkegaard-Holm", "soren.kh"},
    {"Zoë Müller", "zoe_mueller"},          {"Lars van der Berg", "lars.vdberg"},
};
inline constexpr std::string_view mail_domains[] = {"example.com", "mail.example.org", "post.example.nl",
                                                    "example.lk"};
inline constexpr std::string_view roles[] = {"admin", "editor", "viewer", "viewer"};

/// An RFC 3339 date-time in 2026 with seconds, and now and then fractions and an offset.
inline std::string make_date_time(rng& r) {
  char buf[48];
  const int month = 1 + static_cast<int>(r.below(12)), day = 1 + static_cast<int>(r.below(28));
  const int hour = static_cast<int>(r.below(24)), minute = static_cast<int>(r.below(60)),
            second = static_cast<int>(r.below(60));
  switch (r.below(3)) {
    case 0:
      std::snprintf(buf, sizeof buf, "2026-%02d-%02dT%02d:%02d:%02dZ", month, day, hour, minute, second);
      break;
    case 1:
      std::snprintf(buf, sizeof buf, "2026-%02d-%02dT%02d:%02d:%02d.%03d+02:00", month, day, hour, minute,
                    second, static_cast<int>(r.below(1000)));
      break;
    default:
      std::snprintf(buf, sizeof buf, "2026-%02d-%02dT%02d:%02d:%02d-05:00", month, day, hour, minute, second);
      break;
  }
  return buf;
}

}  // namespace detail

/// A batch of user records of about `target_bytes` bytes, pretty-printed with
/// two-space indentation as chat models return JSON, each record with a
/// uuid, an e-mail address and one or two date-times: the format-heavy
/// family. Valid against users.schema.json unless `faults` asks otherwise;
/// the same size and faults always give the same bytes.
inline std::string make_users(std::size_t target_bytes, unsigned faults = 0) {
  detail::rng r(0x05E25ull ^ target_bytes);
  std::string out = "{\n  \"users\": [";
  // Records are added while that brings the size nearer the target.
  std::size_t record_bytes = 0;
  for (std::size_t index = 0; index == 0 || out.size() + record_bytes / 2 < target_bytes; ++index) {
    const std::size_t record_start = out.size();
    const bool first = index == 0;
    const auto& p = detail::people[r.below(std::size(detail::people))];
    auto field = [&out](std::string_view name) {
      out += "\n      \"";
      out += name;
      out += "\": ";
    };
    out += first ? "\n    {" : ",\n    {";
    field("id");
    detail::append_string(out, first && (faults & user_bad_id) ? "0190f3a2-7c1e-7d4b-9a55-3f2e8b1c4d6z"
                                                                : detail::make_uuid_v7(r));
    out += ',';
    field("name");
    detail::append_string(out, first && (faults & user_empty_name) ? "" : p.name);
    if (!(first && (faults & user_missing_email))) {
      out += ',';
      field("email");
      std::string email(p.mailbox);
      email += first && (faults & user_bad_email) ? "@@" : "@";
      email += detail::mail_domains[r.below(std::size(detail::mail_domains))];
      detail::append_string(out, email);
    }
    out += ',';
    field("created_at");
    detail::append_string(out, first && (faults & user_bad_created_at) ? "2026-09-28T17:61:05Z"
                                                                       : detail::make_date_time(r));
    out += ',';
    field("last_login_at");
    if (r.below(4) == 0) {
      out += "null";
    } else {
      detail::append_string(out, detail::make_date_time(r));
    }
    out += ',';
    field("role");
    detail::append_string(out, first && (faults & user_unknown_role) ? "owner"
                                                                     : detail::roles[r.below(std::size(detail::roles))]);
    out += ',';
    field("active");
    if (first && (faults & user_active_as_string)) {
      out += "\"true\"";
    } else {
      out += r.below(5) == 0 ? "false" : "true";
    }
    if (first && (faults & user_extra_field)) {
      out += ',';
      field("nickname");
      out += "\"mj\"";
    }
    out += "\n    }";
    record_bytes = out.size() - record_start;
  }
  out += "\n  ]\n}\n";
  return out;
}

/// The whole of a file, or nothing when it cannot be read.
inline std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return std::move(text).str();
}

}  // namespace llmdlq_bench
