// SPDX-License-Identifier: MIT
// Compiles the schema compiler, the validators and validation_error once for
// the llmdlq::core library.
#include "llmdlq/impl/schema.ipp"
#include "llmdlq/impl/validation_error.ipp"
