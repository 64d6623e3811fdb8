// SPDX-License-Identifier: MIT
// The umbrella header: everything in the llmdlq::core library. The sinks
// with a library of their own (sqlite_store.hpp, ...) are included on their own.
#pragma once

#include "llmdlq/config.hpp"
#include "llmdlq/dlq_id.hpp"
#include "llmdlq/envelope.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/format.hpp"
#include "llmdlq/guard.hpp"
#include "llmdlq/json_parser.hpp"
#include "llmdlq/jsonl_file_sink.hpp"
#include "llmdlq/memory_sink.hpp"
#include "llmdlq/pipeline.hpp"
#include "llmdlq/process.hpp"
#include "llmdlq/regex.hpp"
#include "llmdlq/coerce.hpp"
#include "llmdlq/repair.hpp"
#include "llmdlq/request_context.hpp"
#include "llmdlq/schema.hpp"
#include "llmdlq/sink.hpp"
#include "llmdlq/sink_handle.hpp"
#include "llmdlq/taxonomy.hpp"
#include "llmdlq/timestamp.hpp"
#include "llmdlq/call_outcome.hpp"
#include "llmdlq/typed.hpp"
#include "llmdlq/typed_pipeline.hpp"
#include "llmdlq/version.hpp"
