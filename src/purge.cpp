// SPDX-License-Identifier: MIT
// Compiles llmdlq/impl/purge.ipp once for the llmdlq::core library.
#include "llmdlq/impl/purge.ipp"
