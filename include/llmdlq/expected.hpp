// SPDX-License-Identifier: MIT
// The one place that chooses llmdlq::expected: std::expected or tl::expected.
#pragma once

#include "llmdlq/config.hpp"

// tl::expected is used when the host defines LLMDLQ_USE_TL_EXPECTED (the CMake
// package does so when it finds tl-expected and the host is older than C++23).
#if defined(LLMDLQ_USE_TL_EXPECTED)
#  include <tl/expected.hpp>
LLMDLQ_BEGIN_NAMESPACE
template <class T, class E>
using expected = tl::expected<T, E>;
template <class E>
using unexpected = tl::unexpected<E>;
LLMDLQ_END_NAMESPACE
#else
#  include <expected>
#  if !defined(__cpp_lib_expected)
#    error "llmdlq needs std::expected (C++23) or tl-expected (define LLMDLQ_USE_TL_EXPECTED)"
#  endif
LLMDLQ_BEGIN_NAMESPACE
template <class T, class E>
using expected = std::expected<T, E>;
template <class E>
using unexpected = std::unexpected<E>;
LLMDLQ_END_NAMESPACE
#endif
