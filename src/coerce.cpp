// SPDX-License-Identifier: MIT
// Compiles llmdlq/impl/coerce.ipp once for the llmdlq::core library.
#include "llmdlq/impl/coerce.ipp"
