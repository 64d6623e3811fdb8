// SPDX-License-Identifier: MIT
// Compiles llmdlq/impl/judged_tool_stream.ipp once for the llmdlq::core library.
#include "llmdlq/impl/judged_tool_stream.ipp"
