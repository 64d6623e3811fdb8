// SPDX-License-Identifier: MIT
// Compiles llmdlq/impl/tool_call.ipp once for the llmdlq::core library.
#include "llmdlq/impl/tool_call.ipp"
