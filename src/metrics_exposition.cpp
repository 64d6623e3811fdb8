// SPDX-License-Identifier: MIT
// Compiles llmdlq/impl/metrics_exposition.ipp once for the llmdlq::core library.
#include "llmdlq/impl/metrics_exposition.ipp"
