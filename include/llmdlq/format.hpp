// SPDX-License-Identifier: MIT
// String formats (JSON Schema `format`, plus iban and luhn) as direct scanners.
#pragma once

#include <cstdint>
#include <string_view>

#include "llmdlq/config.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// The formats llmdlq can assert. `unknown` formats are annotations only.
enum class format_kind : std::uint8_t {
  unknown,
  date,                   ///< RFC 3339 full-date
  date_time,              ///< RFC 3339 date-time
  time,                   ///< RFC 3339 full-time (an offset is required)
  duration,               ///< ISO 8601 duration as in RFC 3339 appendix A
  email,                  ///< RFC 5321 mailbox
  idn_email,              ///< RFC 6531 mailbox
  hostname,               ///< RFC 1123 host name
  idn_hostname,           ///< RFC 5890 internationalised host name
  ipv4,                   ///< RFC 2673 dotted quad
  ipv6,                   ///< RFC 4291 address
  uri,                    ///< RFC 3986 URI
  uri_reference,          ///< RFC 3986 URI reference
  iri,                    ///< RFC 3987 IRI
  iri_reference,          ///< RFC 3987 IRI reference
  uri_template,           ///< RFC 6570 URI template
  uuid,                   ///< RFC 4122 UUID
  json_pointer,           ///< RFC 6901 JSON Pointer
  relative_json_pointer,  ///< relative JSON Pointer
  regex,                  ///< ECMA-262 regular expression
  iban,                   ///< ISO 13616 IBAN with its mod-97 check digits
  luhn,                   ///< a digit string with a valid Luhn check digit (card numbers)
};

/// The format named `name` in a schema, or format_kind::unknown.
[[nodiscard]] LLMDLQ_INLINE format_kind format_from_name(std::string_view name) noexcept;

/// The schema name of `kind` ("date-time", "iban", ...).
[[nodiscard]] LLMDLQ_INLINE std::string_view name_of(format_kind kind) noexcept;

/// Whether `text` (valid UTF-8) is in format `kind`; always true for `unknown`.
/// Linear in the length of `text`; thread-safe. Only `regex` allocates.
/// Any bytes may be passed (with a NUL, or not UTF-8) without harm.
///
/// Where the standards leave a choice, llmdlq takes these:
/// - date-time, time: `T` and `Z` in either case (RFC 3339 section 5.6);
///   second 60 only where the time, moved to UTC, is 23:59:60.
/// - duration: designators in upper case only, as in ISO 8601.
/// - hostname: A-labels (`xn--`) must be valid IDNA2008, like U-labels in
///   idn-hostname (Unicode 15.0 tables; NFC is not checked, ASCII capitals
///   count as small letters).
/// - email, idn-email: IPv4 and `IPv6:` address literals; general address
///   literals (no tag is registered) are refused.
/// - iban: the electronic form (`DE89370400440532013000`) or the paper form
///   with one space after each group of four (`DE89 3704 0044 0532 0130 00`);
///   capital letters only; check digits 02 to 98; country codes and
///   per-country lengths are not looked up.
/// - luhn: at least two digits, optionally grouped by single spaces or single
///   hyphens (one kind per string), as card numbers are printed.
/// - regex: as `ecma_regex::compile` judges it (false if memory runs out).
[[nodiscard]] LLMDLQ_INLINE bool matches_format(format_kind kind, std::string_view text) noexcept;

LLMDLQ_END_NAMESPACE

#ifdef LLMDLQ_HEADER_ONLY
#  include "llmdlq/impl/format.ipp"
#endif
