// SPDX-License-Identifier: MIT
// Compiles the schema compiler and validators once for the llmdlq::core library.
#include "llmdlq/impl/schema.ipp"
