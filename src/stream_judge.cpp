// SPDX-License-Identifier: MIT
// Compiles llmdlq/impl/stream_judge.ipp once for the llmdlq::core library.
#include "llmdlq/impl/stream_judge.ipp"
