// SPDX-License-Identifier: MIT
// Compiles llmdlq/impl/timestamp.ipp once for the llmdlq::core library.
#include "llmdlq/impl/timestamp.ipp"
