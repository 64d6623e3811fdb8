// SPDX-License-Identifier: MIT
// Ends a test case that cannot run here (its data or device is missing) so
// that ctest reports it Skipped, never Passed.
#pragma once

#include "catch.hpp"

// The marker comes from tests/CMakeLists.txt, which also gives every Catch
// test a SKIP_REGULAR_EXPRESSION matching it.
#ifndef LLMDLQ_SKIP_MARKER
#  error "LLMDLQ_SKIP_MARKER is defined by llmdlq_add_test in tests/CMakeLists.txt"
#endif

/// Reports the current test case skipped, saying why, and returns from it.
/// Only for what a machine may lack: a test whose subject is broken fails.
#if CATCH_VERSION_MAJOR >= 3
#  define LLMDLQ_SKIP(reason) SKIP(LLMDLQ_SKIP_MARKER " " << reason)
#else
#  define LLMDLQ_SKIP(reason)                    \
    do {                                         \
      WARN(LLMDLQ_SKIP_MARKER " " << reason);    \
      return;                                    \
    } while (false)
#endif
