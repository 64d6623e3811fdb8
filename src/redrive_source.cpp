// SPDX-License-Identifier: MIT
// Compiles llmdlq/impl/redrive_source.ipp once for the llmdlq::core library.
#include "llmdlq/impl/redrive_source.ipp"
