// SPDX-License-Identifier: MIT
// JSON Schema keywords added to the members of a described struct, beyond
// what their C++ types say: bounds, lengths, patterns, formats.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "llmdlq/config.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// Specialise for a struct described with BOOST_DESCRIBE_STRUCT to constrain
/// its members in schema_for<T>(): `json` is an object whose keys are member
/// names and whose values hold the keywords added to that member's schema
/// (to the value's schema for a std::optional member, which may still be
/// null). An `items` object constrains the elements of a std::vector member.
///
///     template <>
///     struct llmdlq::schema_constraints<receipt> {
///       static constexpr std::string_view json = R"({
///         "merchant": {"minLength": 1, "maxLength": 200},
///         "date": {"format": "date"},
///         "lines": {"minItems": 1, "items": {"minProperties": 1}}})";
///     };
///
/// The keywords that give a member its shape (`type`, `properties`,
/// `required`, `additionalProperties`, `$ref`) cannot be replaced: the value
/// read into T must still have T's types.
template <class T>
struct schema_constraints {};

/// A programming error in a schema_constraints specialisation, thrown by
/// json_schema_for<T>() and schema_for<T>(): its JSON does not parse, names no
/// member of T, replaces a shape keyword, or the schema does not compile.
class schema_constraint_error : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

LLMDLQ_END_NAMESPACE
