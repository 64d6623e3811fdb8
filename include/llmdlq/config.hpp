// SPDX-License-Identifier: MIT
// Build configuration: header-only versus compiled library, and shared macros.
#pragma once

/// Define LLMDLQ_HEADER_ONLY (or link `llmdlq::header_only`) to use llmdlq
/// without its compiled library: every non-template definition is then
/// pulled in from `llmdlq/impl/*.ipp` as `inline`. Linking `llmdlq::core`
/// compiles them once instead, which keeps host build times down.
#ifdef LLMDLQ_HEADER_ONLY
#  define LLMDLQ_INLINE inline
#else
#  define LLMDLQ_INLINE
#endif

// Under AddressSanitizer the compiler's own inlining decides: forced
// inlining makes one very large function, and instrumenting it took several
// times as long as the rest of a sanitizer build's file (repair_engine::run:
// minutes). A sanitizer build checks behaviour, not speed.
#if defined(__SANITIZE_ADDRESS__)
#  define LLMDLQ_SANITIZED 1
#elif defined(__has_feature)
#  if __has_feature(address_sanitizer)
#    define LLMDLQ_SANITIZED 1
#  endif
#endif

#if (defined(__GNUC__) || defined(__clang__)) && !defined(LLMDLQ_SANITIZED)
#  define LLMDLQ_ALWAYS_INLINE inline __attribute__((always_inline))
#  define LLMDLQ_INLINE_LAMBDA __attribute__((always_inline))
#  define LLMDLQ_FLATTEN __attribute__((flatten))
#else
#  define LLMDLQ_ALWAYS_INLINE inline
#  define LLMDLQ_INLINE_LAMBDA
#  define LLMDLQ_FLATTEN
#endif

#if defined(__GNUC__) || defined(__clang__)
#  define LLMDLQ_LIKELY(x) __builtin_expect(!!(x), 1)
#  define LLMDLQ_UNLIKELY(x) __builtin_expect(!!(x), 0)
#  define LLMDLQ_NOINLINE __attribute__((noinline))
#else
#  define LLMDLQ_LIKELY(x) (x)
#  define LLMDLQ_UNLIKELY(x) (x)
#  define LLMDLQ_NOINLINE
#endif

/// Every llmdlq symbol lives in an inline namespace named after the flavour
/// of llmdlq::expected it was built with (expected.hpp). The two flavours
/// give the same declarations different layouts; with their own namespaces,
/// a host built for one that links a library built for the other gets
/// undefined references (`llmdlq::v1_tl_expected::...`) instead of a crash.
#if defined(LLMDLQ_USE_TL_EXPECTED)
#  define LLMDLQ_ABI_NAMESPACE v1_tl_expected
#else
#  define LLMDLQ_ABI_NAMESPACE v1_std_expected
#endif
#define LLMDLQ_BEGIN_NAMESPACE \
  namespace llmdlq {           \
  inline namespace LLMDLQ_ABI_NAMESPACE {
#define LLMDLQ_END_NAMESPACE \
  }                          \
  }
