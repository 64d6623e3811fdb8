// SPDX-License-Identifier: MIT
// The file the test programs' shared precompiled header is built with
// (tests/CMakeLists.txt, llmdlq_test_pch): it adds nothing of its own.
