// SPDX-License-Identifier: MIT
// Definitions for redrive_source.hpp.
#pragma once

#include <algorithm>

#include <fmt/format.h>

#include "llmdlq/detail/identifiers.hpp"
#include "llmdlq/redrive_source.hpp"

LLMDLQ_BEGIN_NAMESPACE

LLMDLQ_INLINE expected<std::string, std::string> stored_original_input(const envelope& letter,
                                                                       const field_cipher* cipher) {
  if (!letter.original_input) return unexpected(std::string("the letter stores no original input"));
  const captured_text& input = *letter.original_input;
  if (input.sealed && cipher != nullptr) {
    for (auto& opened : open_sealed(letter, *cipher)) {
      if (opened.field != "original_input") continue;
      if (!opened.original) {
        return unexpected(fmt::format("its sealed original input does not open: {}", opened.original.error().message));
      }
      if (opened.cut) return unexpected(std::string("its sealed original input holds only the start of it"));
      return std::move(*opened.original);
    }
  }
  const bool redacted = std::any_of(letter.redactions.begin(), letter.redactions.end(),
                                    [](const redaction_summary& r) { return r.field == "original_input"; });
  if (redacted) {
    return unexpected(std::string(input.sealed ? "its original input is redacted, and its sealed copy needs the keys"
                                               : "its original input is redacted and was not sealed"));
  }
  if (!input.text) return unexpected(std::string("the letter stores only the hash of its original input"));
  if (input.cut) return unexpected(std::string("the letter stores only the start of its original input"));
  return input.base64 ? detail::base64_decode(*input.text) : *input.text;
}

LLMDLQ_END_NAMESPACE
