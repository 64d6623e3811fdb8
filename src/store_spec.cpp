// SPDX-License-Identifier: MIT
// Compiles llmdlq/impl/store_spec.ipp once for the llmdlq::core library.
#include "llmdlq/impl/store_spec.ipp"
