// SPDX-License-Identifier: MIT
// Compiles llmdlq/impl/regex.ipp once for the llmdlq::core library.
#include "llmdlq/impl/regex.ipp"
