// SPDX-License-Identifier: MIT
// Compiles llmdlq/impl/jsonl_replay_target.ipp once for the llmdlq::core library.
#include "llmdlq/impl/jsonl_replay_target.ipp"
