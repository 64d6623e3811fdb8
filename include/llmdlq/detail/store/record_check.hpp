// SPDX-License-Identifier: MIT
// Whether a stored record reads back as llmdlq wrote it, and why not, in
// words safe to print: the one check every SQL store's records go through.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/json/utf8.hpp"
#include "llmdlq/envelope.hpp"
#include "llmdlq/moderation.hpp"
#include "llmdlq/moderation_record.hpp"
#include "llmdlq/timestamp.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail::store {

/// Whether `c` would act on a terminal or hide text rather than show as
/// itself: C0 and C1 controls, DEL, and the invisible format characters
/// (bidi overrides and isolates, zero widths, the byte order mark).
[[nodiscard]] constexpr bool hidden_character(char32_t c) noexcept {
  return c < 0x20 || (c >= 0x7F && c <= 0x9F) || (c >= 0x200B && c <= 0x200F) || (c >= 0x202A && c <= 0x202E) ||
         (c >= 0x2060 && c <= 0x2069) || c == 0xFEFF;
}

/// `text` in words safe on a terminal and in a log: a byte that starts no
/// UTF-8 sequence as `\xHH`, a hidden_character() as `\u{HHHH}`, the rest
/// as it is; cut after about `max_bytes` of it, with `…`. Linear in `text`.
[[nodiscard]] inline std::string printable(std::string_view text, std::size_t max_bytes) {
  std::string out;
  std::size_t at = 0;
  while (at < text.size()) {
    if (at >= max_bytes) return out + "…";
    const auto c = decode_utf8(text.substr(at));
    if (!c) {
      out += fmt::format("\\x{:02X}", static_cast<unsigned char>(text[at]));
      ++at;
      continue;
    }
    const std::size_t length = utf8_sequence_length(static_cast<unsigned char>(text[at]));
    if (hidden_character(*c)) {
      out += fmt::format("\\u{{{:04X}}}", static_cast<std::uint32_t>(*c));
    } else {
      out.append(text.substr(at, length));
    }
    at += length;
  }
  return out;
}

/// The most bytes of a stored value that a reason quotes.
inline constexpr std::size_t quoted_value_bytes = 64;

/// A stored value as a reason names it: printable(), in quotes.
[[nodiscard]] inline std::string quoted_value(std::string_view text) {
  std::string quoted(1, '\'');
  quoted += printable(text, quoted_value_bytes);
  quoted += '\'';
  return quoted;
}

/// Why an envelope does not read back, from parse_envelope()'s error:
/// `envelope: not JSON: ...`, `envelope /attempts: must be an object`.
[[nodiscard]] inline std::string envelope_reason(const envelope_error& e) {
  return printable("envelope" + (e.path.empty() ? std::string() : " " + e.path) + ": " + e.message, 512);
}

/// Marks `r` as not reading back for `defect`, unless a part checked before did.
inline void mark_defect(moderation_record& r, record_defect defect, std::string reason) {
  if (r.defect != record_defect::none) return;
  r.defect = defect;
  r.defect_reason = std::move(reason);
}

/// Reads `text` into r.status; an unknown status marks `r` (its status stays `pending`).
inline void check_status(moderation_record& r, std::string_view text) {
  if (const auto status = parse_moderation_status(text)) {
    r.status = *status;
    return;
  }
  mark_defect(r, record_defect::status, "unknown status " + quoted_value(text));
}

/// Checks r's times and its envelope, which must be an envelope of this
/// dlq_id (a stored envelope naming another record would have the replayer
/// act on that one); returns the envelope when it reads back.
inline std::optional<envelope> check_times_and_envelope(moderation_record& r) {
  for (const auto& [name, value] : {std::pair{"created_at", &r.created_at}, std::pair{"updated_at", &r.updated_at}}) {
    if (!parse_rfc3339(*value)) {
      mark_defect(r, record_defect::time, fmt::format("{} is not an RFC 3339 time: {}", name, quoted_value(*value)));
    }
  }
  auto e = parse_envelope(r.envelope_json);
  if (!e) {
    mark_defect(r, record_defect::envelope, envelope_reason(e.error()));
    return std::nullopt;
  }
  if (e->dlq_id != r.dlq_id) {
    mark_defect(r, record_defect::envelope, "envelope /dlq_id: " + quoted_value(e->dlq_id) + ", not of this record");
    return std::nullopt;
  }
  return std::move(*e);
}

/// What act() answers for a record whose status is none of moderation_status.
[[nodiscard]] inline moderation_error unreadable_status(const moderation_record& r) {
  return {moderation_errc::unreadable_record, fmt::format("{} does not read back: {}", r.dlq_id, r.defect_reason),
          std::nullopt};
}

}  // namespace detail::store
LLMDLQ_END_NAMESPACE
