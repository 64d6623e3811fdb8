// SPDX-License-Identifier: MIT
// The one place that chooses llmdlq::expected: std::expected or tl::expected.
#pragma once

#include "llmdlq/config.hpp"

// tl::expected is used when LLMDLQ_USE_TL_EXPECTED is defined (the CMake
// package defines it when llmdlq was built with LLMDLQ_EXPECTED=tl). The
// names are using-declarations, not alias templates, so that
// `unexpected(error)` deduces its argument on compilers without class
// template argument deduction for aliases (clang before 19).
#if defined(LLMDLQ_USE_TL_EXPECTED)
#  include <tl/expected.hpp>
LLMDLQ_BEGIN_NAMESPACE
using tl::expected;
using tl::unexpected;
LLMDLQ_END_NAMESPACE
#else
#  include <expected>
#  if !defined(__cpp_lib_expected)
#    error "llmdlq needs C++23 for std::expected; C++20 hosts use an llmdlq built with LLMDLQ_EXPECTED=tl (which defines LLMDLQ_USE_TL_EXPECTED)"
#  endif
LLMDLQ_BEGIN_NAMESPACE
using std::expected;
using std::unexpected;
LLMDLQ_END_NAMESPACE
#endif
