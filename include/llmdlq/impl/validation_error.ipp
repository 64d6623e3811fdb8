// SPDX-License-Identifier: MIT
// Definitions for validation_error.hpp.
#pragma once

#include "llmdlq/config.hpp"
#include "llmdlq/validation_error.hpp"

LLMDLQ_BEGIN_NAMESPACE

LLMDLQ_INLINE boost::json::object to_json(const validation_error& e) {
  boost::json::object o{{"instance_path", e.instance_path},
                        {"schema_path", e.schema_path},
                        {"keyword", e.keyword},
                        {"message", e.message}};
  if (e.defect != schema_defect::none) o.emplace("defect", to_string(e.defect));
  return o;
}

LLMDLQ_END_NAMESPACE
