// SPDX-License-Identifier: MIT
// Compiles llmdlq/impl/envelope.ipp once for the llmdlq::core library.
#include "llmdlq/impl/envelope.ipp"
