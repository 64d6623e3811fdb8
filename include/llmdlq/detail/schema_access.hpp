// SPDX-License-Identifier: MIT
// The compiled program behind a schema, for llmdlq's own tools that read it
// (coercion looks up enum values); not part of the API.
#pragma once

#include "llmdlq/config.hpp"
#include "llmdlq/detail/schema_program.hpp"
#include "llmdlq/schema.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

struct schema_access {
  static const program& of(const schema& s) noexcept { return *s.program_; }
};

}  // namespace detail
LLMDLQ_END_NAMESPACE
