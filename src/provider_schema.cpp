// SPDX-License-Identifier: MIT
// Compiles llmdlq/impl/provider_schema.ipp once for the llmdlq::core library.
#include "llmdlq/impl/provider_schema.ipp"
