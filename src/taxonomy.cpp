// SPDX-License-Identifier: MIT
// Compiles llmdlq/impl/taxonomy.ipp once for the llmdlq::core library.
#include "llmdlq/impl/taxonomy.ipp"
