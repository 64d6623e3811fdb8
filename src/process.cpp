// SPDX-License-Identifier: MIT
// Compiles llmdlq/impl/process.ipp once for the llmdlq::core library.
#include "llmdlq/impl/process.ipp"
