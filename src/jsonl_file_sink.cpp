// SPDX-License-Identifier: MIT
// Compiles llmdlq/impl/jsonl_file_sink.ipp once for the llmdlq::core library.
#include "llmdlq/impl/jsonl_file_sink.ipp"
