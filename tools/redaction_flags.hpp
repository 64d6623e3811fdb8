// SPDX-License-Identifier: MIT
// The flags that say how a command redacts and seals what it dead-letters,
// read the same way by every command that writes letters.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <llmdlq/process.hpp>

#include "cli.hpp"
#include "schema_flags.hpp"

namespace llmdlq::cli {

inline constexpr std::string_view redaction_flags_usage =
    "  --national-ids LIST  also redact national ids: all, or some of nl_bsn, ru_inn, ru_snils, lk_nic\n"
    "  --phone-regions LIST  also read these regions' domestic phone formats: US, CA, RU, KZ, IN, CN\n"
    "  --redact-pointer P  always redact the response's value at JSON Pointer P (`*` for any member\n"
    "                      or item); repeatable\n"
    "  --redaction-key FILE  replace values by keyed tokens (equal values, equal tokens): FILE (mode\n"
    "                      600, yours) holds a secret of at least 32 bytes; its name is the key id\n"
    "  --keys DIR          also seal the originals with the current key of key directory DIR\n"
    "                      (`llmdlq keys`); readers without it see the redacted text\n";

/// What the flags above asked for.
struct redaction_settings {
  redaction_options options;
  std::optional<std::string> keys;  // --keys
};

/// Reads `arg` into `settings` when it is one of the flags above (taking its
/// value from `args`); `refused` after telling stderr why.
flag_outcome take_redaction_flag(std::string_view command, std::string_view arg, arguments& args,
                                 redaction_settings& settings);

/// Puts the redactor (and the cipher) the settings describe into `options`;
/// false after telling stderr why not.
bool apply_redaction(std::string_view command, redaction_settings settings, process_options& options);

}  // namespace llmdlq::cli
