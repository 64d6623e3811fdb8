// SPDX-License-Identifier: MIT
// Compiles llmdlq/impl/format.ipp once for the llmdlq::core library.
#include "llmdlq/impl/format.ipp"
