// SPDX-License-Identifier: MIT
// The compiled program behind a schema, for llmdlq's own tools that read it
// (coercion looks up enum values); not part of the API.
#pragma once

#include "llmdlq/detail/schema_program.hpp"
#include "llmdlq/schema.hpp"

namespace llmdlq::detail {

struct schema_access {
  static const program& of(const schema& s) noexcept { return *s.program_; }
};

}  // namespace llmdlq::detail
