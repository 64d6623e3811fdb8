// SPDX-License-Identifier: MIT
// One reason a document does not validate: plain data, light to include
// (envelopes and sinks carry it without the schema engine).
#pragma once

#include <string>

#include <boost/json/object.hpp>

#include "llmdlq/config.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// One reason a document does not validate.
struct validation_error {
  std::string instance_path;  ///< JSON Pointer to the failing value (`/items/3/price`)
  std::string schema_path;    ///< keyword location: how evaluation reached the keyword, `$ref`s included
  std::string keyword;        ///< the failing keyword (`minimum`, `required`, ...)
  std::string message;        ///< what was wrong, in English

  friend bool operator==(const validation_error&, const validation_error&) = default;
};

/// The error as `{"instance_path", "schema_path", "keyword", "message"}`.
[[nodiscard]] LLMDLQ_INLINE boost::json::object to_json(const validation_error& e);

LLMDLQ_END_NAMESPACE

#ifdef LLMDLQ_HEADER_ONLY
#  include "llmdlq/impl/validation_error.ipp"
#endif
