// SPDX-License-Identifier: MIT
// Compiles llmdlq/impl/dlq_rate_alarm.ipp once for the llmdlq::core library.
#include "llmdlq/impl/dlq_rate_alarm.ipp"
