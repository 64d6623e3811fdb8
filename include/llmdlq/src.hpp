// SPDX-License-Identifier: MIT
// The whole llmdlq::core library in one translation unit, for a host that
// builds without CMake: include it in exactly one source file of the program
// (compiled with -I include) and link what the core links (simdjson,
// Boost.JSON, PCRE2 with PCRE2_CODE_UNIT_WIDTH=8, fmt, OpenSSL's libcrypto).
// The transports (sqlite/, kafka/, ...) are libraries of their own, not part of it.
#pragma once

#include "llmdlq/config.hpp"

#ifdef LLMDLQ_HEADER_ONLY
#error "llmdlq/src.hpp compiles the library; with LLMDLQ_HEADER_ONLY the headers define everything already"
#endif

#include "llmdlq/impl/call_outcome.ipp"
#include "llmdlq/impl/chat_stream.ipp"
#include "llmdlq/impl/coerce.ipp"
#include "llmdlq/impl/dlq_id.ipp"
#include "llmdlq/impl/dlq_rate_alarm.ipp"
#include "llmdlq/impl/envelope.ipp"
#include "llmdlq/impl/field_cipher.ipp"
#include "llmdlq/impl/format.ipp"
#include "llmdlq/impl/guard.ipp"
#include "llmdlq/impl/json_parser.ipp"
#include "llmdlq/impl/jsonl_file_sink.ipp"
#include "llmdlq/impl/jsonl_replay_target.ipp"
#include "llmdlq/impl/redrive_source.ipp"
#include "llmdlq/impl/metrics.ipp"
#include "llmdlq/impl/metrics_exposition.ipp"
#include "llmdlq/impl/pipeline.ipp"
#include "llmdlq/impl/process.ipp"
#include "llmdlq/impl/provider_schema.ipp"
#include "llmdlq/impl/tool_registry.ipp"
#include "llmdlq/impl/tool_call.ipp"
#include "llmdlq/impl/judged_tool_stream.ipp"
#include "llmdlq/impl/redaction.ipp"
#include "llmdlq/impl/purge.ipp"
#include "llmdlq/impl/regex.ipp"
#include "llmdlq/impl/repair.ipp"
#include "llmdlq/impl/retention.ipp"
#include "llmdlq/impl/schema.ipp"
#include "llmdlq/impl/store_spec.ipp"
#include "llmdlq/impl/stream_judge.ipp"
#include "llmdlq/impl/taxonomy.ipp"
#include "llmdlq/impl/timestamp.ipp"
#include "llmdlq/impl/validation_error.ipp"
