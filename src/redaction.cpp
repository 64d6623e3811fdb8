// SPDX-License-Identifier: MIT
// Compiles llmdlq/impl/redaction.ipp once for the llmdlq::core library.
#include "llmdlq/impl/redaction.ipp"
