// SPDX-License-Identifier: MIT
// Forward declarations of llmdlq's public types, for headers that only name them.
#pragma once

#include <cstdint>
#include <system_error>
#include <type_traits>

#include "llmdlq/config.hpp"

LLMDLQ_BEGIN_NAMESPACE

class json_parser;
struct parse_options;
struct syntax_error;
enum class json_errc : std::uint8_t;

class schema;
struct compile_options;
struct schema_error;
enum class schema_errc : std::uint8_t;
struct validation_error;
struct validate_options;

class ecma_regex;
struct regex_error;
enum class format_kind : std::uint8_t;

LLMDLQ_END_NAMESPACE

// Here rather than beside the enums, so that every translation unit that
// names them agrees that they are error code enums (make_error_code and
// their categories are in json_parser.hpp and schema.hpp).
template <>
struct std::is_error_code_enum<llmdlq::json_errc> : std::true_type {};
template <>
struct std::is_error_code_enum<llmdlq::schema_errc> : std::true_type {};
