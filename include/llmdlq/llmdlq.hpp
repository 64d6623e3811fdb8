// SPDX-License-Identifier: MIT
// The umbrella header: everything in the llmdlq::core library. The sinks
// with a library of their own are included from their folders:
// <llmdlq/sqlite/store.hpp>, <llmdlq/kafka/sink.hpp>, <llmdlq/redis/stream_sink.hpp>,
// <llmdlq/postgres/store.hpp>, ...
#pragma once

#include "llmdlq/call_outcome.hpp"
#include "llmdlq/coerce.hpp"
#include "llmdlq/config.hpp"
#include "llmdlq/content_check.hpp"
#include "llmdlq/dlq_id.hpp"
#include "llmdlq/envelope.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/field_cipher.hpp"
#include "llmdlq/format.hpp"
#include "llmdlq/guard.hpp"
#include "llmdlq/json_parser.hpp"
#include "llmdlq/jsonl_file_sink.hpp"
#include "llmdlq/memory_sink.hpp"
#include "llmdlq/moderation.hpp"
#include "llmdlq/pipeline.hpp"
#include "llmdlq/pii_path.hpp"
#include "llmdlq/process.hpp"
#include "llmdlq/redaction.hpp"
#include "llmdlq/regex.hpp"
#include "llmdlq/repair.hpp"
#include "llmdlq/request_context.hpp"
#include "llmdlq/schema.hpp"
#include "llmdlq/sink.hpp"
#include "llmdlq/sink_handle.hpp"
#include "llmdlq/taxonomy.hpp"
#include "llmdlq/text_location.hpp"
#include "llmdlq/timestamp.hpp"
#include "llmdlq/typed.hpp"
#include "llmdlq/typed_pipeline.hpp"
#include "llmdlq/validation_error.hpp"
#include "llmdlq/version.hpp"
