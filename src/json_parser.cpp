// SPDX-License-Identifier: MIT
// Compiles the strict JSON parser once for the llmdlq::core library.
#include "llmdlq/impl/json_parser.ipp"
