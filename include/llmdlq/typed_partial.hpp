// SPDX-License-Identifier: MIT
// A streamed answer's progress as a typed value: the members received whole
// so far (stream_judge::partial), read into a described struct whose every
// member is a std::optional, for a host that shows progress while it waits.
//
// \code
//   struct ReceiptSoFar {
//     std::optional<std::string> merchant;
//     std::optional<double> total;
//     std::optional<std::vector<Line>> items;  // the lines received whole
//   };
//   BOOST_DESCRIBE_STRUCT(ReceiptSoFar, (), (merchant, total, items))
//
//   judge.feed(piece);
//   if (auto so_far = llmdlq::partial_as<ReceiptSoFar>(judge); so_far && so_far->total) show(*so_far->total);
// \endcode
#pragma once

#include <optional>
#include <string>
#include <type_traits>

#include <boost/describe.hpp>
#include <boost/json/serialize.hpp>
#include <boost/mp11/algorithm.hpp>

#include "llmdlq/config.hpp"
#include "llmdlq/json_parser.hpp"
#include "llmdlq/stream_judge.hpp"
#include "llmdlq/typed.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

// A member of a partial struct: nothing when absent or not whole yet; an
// array keeps the elements that read whole as their type.
template <class T>
std::optional<T> read_partially(simdjson::dom::element v, const std::string& path) {
  if constexpr (is_vector<T>::value) {
    auto array = v.get_array();
    if (array.error()) return std::nullopt;
    T out;
    for (const auto element : array.value_unsafe()) {
      if (auto item = read_as<typename T::value_type>(element, path)) out.push_back(std::move(*item));
    }
    return out;
  } else {
    auto value = read_as<T>(v, path);
    if (!value) return std::nullopt;
    return std::move(*value);
  }
}

}  // namespace detail

/// The answer received so far as a Partial: each member is set when the
/// partial document has it whole and it reads as its type, and left empty
/// otherwise; nothing before the answer's object begins. Partial is a
/// described struct whose members are all std::optional (the progress view
/// of the type the host accepts). Costs a pass over the bytes received.
template <class Partial>
[[nodiscard]] std::optional<Partial> partial_as(const stream_judge& judge) {
  static_assert(detail::is_described_struct<Partial>, "llmdlq::partial_as: describe Partial with BOOST_DESCRIBE_STRUCT");
  const auto document = judge.partial();
  if (!document || !document->is_object()) return std::nullopt;
  json_parser parser;
  auto doc = parser.parse(boost::json::serialize(*document));
  if (!doc) return std::nullopt;
  auto object = doc->root().get_object();
  if (object.error()) return std::nullopt;
  Partial out{};
  using members = boost::describe::describe_members<Partial, boost::describe::mod_public | boost::describe::mod_inherited>;
  boost::mp11::mp_for_each<members>([&](auto member) {
    using type = std::remove_cvref_t<decltype(out.*member.pointer)>;
    static_assert(detail::is_optional<type>::value, "llmdlq::partial_as: every member of Partial is a std::optional");
    auto field = object.value_unsafe().at_key(member.name);
    if (field.error() || field.value_unsafe().is_null()) return;
    out.*member.pointer = detail::read_partially<typename type::value_type>(field.value_unsafe(), std::string("/") + member.name);
  });
  return out;
}

LLMDLQ_END_NAMESPACE
