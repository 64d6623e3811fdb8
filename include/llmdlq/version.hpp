// SPDX-License-Identifier: MIT
// The library version. CMake reads project(VERSION) from the three numbers
// below, so they are the only place it is written.
#pragma once

#include "llmdlq/config.hpp"

#define LLMDLQ_VERSION_MAJOR 0
#define LLMDLQ_VERSION_MINOR 1
#define LLMDLQ_VERSION_PATCH 0

/// One number that grows with every release: major * 10000 + minor * 100 + patch.
#define LLMDLQ_VERSION (LLMDLQ_VERSION_MAJOR * 10000 + LLMDLQ_VERSION_MINOR * 100 + LLMDLQ_VERSION_PATCH)

#define LLMDLQ_VERSION_STRINGIZE_(x) #x
#define LLMDLQ_VERSION_STRINGIZE(x) LLMDLQ_VERSION_STRINGIZE_(x)
/// "major.minor.patch".
#define LLMDLQ_VERSION_STRING                                                                    \
  LLMDLQ_VERSION_STRINGIZE(LLMDLQ_VERSION_MAJOR)                                                 \
  "." LLMDLQ_VERSION_STRINGIZE(LLMDLQ_VERSION_MINOR) "." LLMDLQ_VERSION_STRINGIZE(LLMDLQ_VERSION_PATCH)

LLMDLQ_BEGIN_NAMESPACE
inline constexpr const char* version_string = LLMDLQ_VERSION_STRING;
LLMDLQ_END_NAMESPACE
