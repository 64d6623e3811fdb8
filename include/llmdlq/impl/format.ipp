// SPDX-License-Identifier: MIT
// Definitions for llmdlq/format.hpp: format names and the dispatch to each format's scanner.
#pragma once

#include <array>
#include <string_view>
#include <utility>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/format/datetime.hpp"
#include "llmdlq/detail/format/email.hpp"
#include "llmdlq/detail/format/identifiers.hpp"
#include "llmdlq/detail/format/idna.hpp"
#include "llmdlq/detail/format/ip.hpp"
#include "llmdlq/detail/format/uri.hpp"
#include "llmdlq/format.hpp"
#include "llmdlq/regex.hpp"

LLMDLQ_BEGIN_NAMESPACE

namespace detail {

inline constexpr std::array<std::pair<format_kind, std::string_view>, 22> format_names{{
    {format_kind::unknown, "unknown"},
    {format_kind::date, "date"},
    {format_kind::date_time, "date-time"},
    {format_kind::time, "time"},
    {format_kind::duration, "duration"},
    {format_kind::email, "email"},
    {format_kind::idn_email, "idn-email"},
    {format_kind::hostname, "hostname"},
    {format_kind::idn_hostname, "idn-hostname"},
    {format_kind::ipv4, "ipv4"},
    {format_kind::ipv6, "ipv6"},
    {format_kind::uri, "uri"},
    {format_kind::uri_reference, "uri-reference"},
    {format_kind::iri, "iri"},
    {format_kind::iri_reference, "iri-reference"},
    {format_kind::uri_template, "uri-template"},
    {format_kind::uuid, "uuid"},
    {format_kind::json_pointer, "json-pointer"},
    {format_kind::relative_json_pointer, "relative-json-pointer"},
    {format_kind::regex, "regex"},
    {format_kind::iban, "iban"},
    {format_kind::luhn, "luhn"},
}};

inline bool is_ecma_regex(std::string_view text) noexcept {
  try {
    return ecma_regex::compile(text).has_value();
  } catch (...) {  // out of memory: the pattern could not be checked
    return false;
  }
}

}  // namespace detail

LLMDLQ_INLINE format_kind format_from_name(std::string_view name) noexcept {
  for (const auto& [kind, spelling] : detail::format_names) {
    if (spelling == name) return kind;
  }
  return format_kind::unknown;
}

LLMDLQ_INLINE std::string_view name_of(format_kind kind) noexcept {
  for (const auto& [candidate, spelling] : detail::format_names) {
    if (candidate == kind) return spelling;
  }
  return "unknown";
}

LLMDLQ_INLINE bool matches_format(format_kind kind, std::string_view text) noexcept {
  switch (kind) {
    case format_kind::unknown: return true;
    case format_kind::date: return detail::is_date(text);
    case format_kind::date_time: return detail::is_date_time(text);
    case format_kind::time: return detail::is_time(text);
    case format_kind::duration: return detail::is_duration(text);
    case format_kind::email: return detail::is_email(text, false);
    case format_kind::idn_email: return detail::is_email(text, true);
    case format_kind::hostname: return detail::is_hostname(text);
    case format_kind::idn_hostname: return detail::is_idn_hostname(text);
    case format_kind::ipv4: return detail::is_ipv4(text);
    case format_kind::ipv6: return detail::is_ipv6(text);
    case format_kind::uri: return detail::is_uri_reference(text, false, true);
    case format_kind::uri_reference: return detail::is_uri_reference(text, false, false);
    case format_kind::iri: return detail::is_uri_reference(text, true, true);
    case format_kind::iri_reference: return detail::is_uri_reference(text, true, false);
    case format_kind::uri_template: return detail::is_uri_template(text);
    case format_kind::uuid: return detail::is_uuid(text);
    case format_kind::json_pointer: return detail::is_json_pointer(text);
    case format_kind::relative_json_pointer: return detail::is_relative_json_pointer(text);
    case format_kind::regex: return detail::is_ecma_regex(text);
    case format_kind::iban: return detail::is_iban(text);
    case format_kind::luhn: return detail::is_luhn(text);
  }
  return true;
}

LLMDLQ_END_NAMESPACE
