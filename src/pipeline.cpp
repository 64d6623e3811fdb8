// SPDX-License-Identifier: MIT
// Compiles llmdlq/impl/pipeline.ipp once for the llmdlq::core library.
#include "llmdlq/impl/pipeline.ipp"
