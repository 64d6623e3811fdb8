// SPDX-License-Identifier: MIT
// One include for Catch2 v2 (Debian's) and v3, so tests build against either.
#pragma once

#if __has_include(<catch2/catch_all.hpp>)
#  include <catch2/catch_all.hpp>
#else
#  include <catch2/catch.hpp>
#endif
