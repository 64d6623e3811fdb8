// SPDX-License-Identifier: MIT
// Compiles llmdlq/impl/repair.ipp once for the llmdlq::core library.
#include "llmdlq/impl/repair.ipp"
