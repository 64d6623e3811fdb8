// SPDX-License-Identifier: MIT
// A content rule written in C++: a check on values of a document that passed
// its schema, reported like a schema keyword when it fails.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include <simdjson.h>

#include "llmdlq/config.hpp"
#include "llmdlq/timestamp.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// A content rule registered from C++ (process_options::checks): a check on
/// the value at a JSON Pointer of a document that passed its schema. A `*`
/// token in the pointer stands for every element of an array or member of
/// an object. A failure is a `semantic` one.
struct content_check {
  std::string pointer;
  std::string name;  ///< reported as the keyword `x-dlq-rule/<name>`
  /// Returns a message when the value fails; `now` is the injected clock's time.
  std::function<std::optional<std::string>(simdjson::dom::element value, timestamp now)> check;
};

LLMDLQ_END_NAMESPACE
