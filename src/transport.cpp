// SPDX-License-Identifier: MIT
// Compiles llmdlq/impl/transport.ipp once for the llmdlq::core library.
#include "llmdlq/impl/transport.ipp"
