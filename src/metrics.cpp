// SPDX-License-Identifier: MIT
// Compiles llmdlq/impl/metrics.ipp once for the llmdlq::core library.
#include "llmdlq/impl/metrics.ipp"
