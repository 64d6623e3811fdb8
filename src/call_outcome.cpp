// SPDX-License-Identifier: MIT
// Compiles llmdlq/impl/call_outcome.ipp once for the llmdlq::core library.
#include "llmdlq/impl/call_outcome.ipp"
