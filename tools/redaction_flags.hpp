// SPDX-License-Identifier: MIT
// The options that say how a command redacts and seals what it dead-letters,
// read the same way by every command that writes letters.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <llmdlq/process.hpp>

#include "options.hpp"

namespace llmdlq::cli {

inline constexpr option redaction_options_table[] = {
    {"--national-ids", option_kind::repeated, "LIST",
     "also redact national ids: all, or some of nl_bsn, ru_inn, ru_snils, lk_nic"},
    {"--phone-regions", option_kind::repeated, "LIST",
     "also read these regions' domestic phone formats: US, CA, RU, KZ, IN, CN"},
    {"--redact-pointer", option_kind::repeated, "P",
     "always redact the response's value at JSON Pointer P (`*` for any member\nor item)"},
    {"--redaction-key", option_kind::value, "FILE",
     "replace values by keyed tokens (equal values, equal tokens): FILE (mode\n"
     "600, yours) holds a secret of at least 32 bytes; its name is the key id"},
    {"--keys", option_kind::value, "DIR",
     "also seal the originals with the current key of key directory DIR\n"
     "(`llmdlq keys`); readers without it see the redacted text"},
};

/// What the options above asked for.
struct redaction_settings {
  redaction_options options;
  std::optional<std::string> keys;  // --keys
};

/// Reads the options above from `parsed` into `settings`; why not, as a usage error's message.
[[nodiscard]] std::optional<std::string> read_redaction_options(const parsed_arguments& parsed,
                                                                redaction_settings& settings);

/// Puts the redactor (and the cipher) the settings describe into `options`;
/// false after telling stderr why not.
bool apply_redaction(std::string_view command, redaction_settings settings, privacy_options& options);

}  // namespace llmdlq::cli
