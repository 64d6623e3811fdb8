// SPDX-License-Identifier: MIT
// Compiles llmdlq/impl/retention.ipp once for the llmdlq::core library.
#include "llmdlq/impl/retention.ipp"
