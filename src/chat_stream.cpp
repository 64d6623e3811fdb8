// SPDX-License-Identifier: MIT
// Compiles llmdlq/impl/chat_stream.ipp once for the llmdlq::core library.
#include "llmdlq/impl/chat_stream.ipp"
