// SPDX-License-Identifier: MIT
// Compiles llmdlq/impl/guard.ipp once for the llmdlq::core library.
#include "llmdlq/impl/guard.ipp"
