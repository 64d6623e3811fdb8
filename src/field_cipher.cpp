// SPDX-License-Identifier: MIT
// Compiles llmdlq/impl/field_cipher.ipp once for the llmdlq::core library.
#include "llmdlq/impl/field_cipher.ipp"
