// SPDX-License-Identifier: MIT
// A place in a document that holds personal data, as a schema declares it.
#pragma once

#include <string>

#include "llmdlq/config.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// A JSON Pointer (with `*` for any member or item) whose value is always
/// redacted, and the kind it is reported as.
struct pii_path {
  std::string pointer;         ///< `/customer/iban`, `/lines/*/card`
  std::string label = "pii";   ///< `"x-llmdlq-pii": "iban"` gives `iban`
  friend bool operator==(const pii_path&, const pii_path&) = default;
};

LLMDLQ_END_NAMESPACE
