// SPDX-License-Identifier: MIT
// The Catch2 test runner shared by every test binary.
#if __has_include(<catch2/catch_all.hpp>)
#  include <catch2/catch_all.hpp>
#else
#  define CATCH_CONFIG_MAIN
#  include <catch2/catch.hpp>
#endif
