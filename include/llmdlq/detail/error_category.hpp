// SPDX-License-Identifier: MIT
// One std::error_category per error enum, made from the enum's table:
// to_string(), is_permanent() and std::error_code's message() all read it.
#pragma once

#include <cstddef>
#include <iterator>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>

#include "llmdlq/config.hpp"
#include "llmdlq/failure_condition.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

/// One enumerator of an error enum.
template <class E>
struct errc_entry {
  E code;
  std::string_view name;            ///< the enumerator's name: what to_string() returns
  bool permanent = false;           ///< what is_permanent() returns, for enums that have one
  std::string_view description{};   ///< an English sentence message() returns instead of the name
};

/// Specialised beside each error enum, whose header also specialises
/// std::is_error_code_enum for it:
///
/// \code
/// template <> struct errc_table<sink_errc> {
///   static constexpr const char* category = "llmdlq.sink";  // the category's name()
///   static constexpr std::string_view unknown = "unknown";  // to_string() of a value no enumerator has
///   static constexpr bool has_permanence = true;            // `permanent` is meant (else leave it out)
///   static constexpr errc_entry<sink_errc> entries[] = {    // each enumerator once, in the order of their values
///       {sink_errc::unavailable, "unavailable"}, ...};
/// };
/// \endcode
template <class E>
struct errc_table;

/// Whether the entries of E's table are its enumerators 0, 1, 2, ... in
/// order, each with a name (checked when the table is first used).
template <class E>
constexpr bool errc_table_in_order() noexcept {
  std::size_t index = 0;
  for (const auto& entry : errc_table<E>::entries) {
    if (static_cast<std::size_t>(entry.code) != index++ || entry.name.empty()) return false;
  }
  return true;
}

template <class E>
inline constexpr bool errc_has_permanence = requires { requires errc_table<E>::has_permanence; };

/// No enumerator has the value: errc_index's answer.
inline constexpr std::size_t errc_none = static_cast<std::size_t>(-1);

/// The index in E's table of the enumerator `value`, or errc_none. (An index,
/// not a pointer: GCC's sanitizers make a pointer's test against null not
/// a constant expression.)
template <class E>
[[nodiscard]] constexpr std::size_t errc_index(int value) noexcept {
  static_assert(errc_table_in_order<E>(), "an errc_table lists every enumerator once, in the order of their values");
  if (value < 0 || static_cast<std::size_t>(value) >= std::size(errc_table<E>::entries)) return errc_none;
  return static_cast<std::size_t>(value);
}

template <class E>
[[nodiscard]] constexpr std::string_view errc_name(E code) noexcept {
  const std::size_t i = errc_index<E>(static_cast<int>(code));
  return i != errc_none ? errc_table<E>::entries[i].name : errc_table<E>::unknown;
}

template <class E>
[[nodiscard]] constexpr bool errc_permanent(E code) noexcept {
  static_assert(errc_has_permanence<E>, "this error enum has no is_permanent()");
  const std::size_t i = errc_index<E>(static_cast<int>(code));
  return i != errc_none && errc_table<E>::entries[i].permanent;
}

/// The description of `value` where the table has one, else its name.
template <class E>
[[nodiscard]] constexpr std::string_view errc_message(int value) noexcept {
  const std::size_t i = errc_index<E>(value);
  if (i == errc_none) return "unknown error";
  const errc_entry<E>& entry = errc_table<E>::entries[i];
  return entry.description.empty() ? entry.name : entry.description;
}

/// The std::error_category of E: name() from the table, message() the
/// entry's description or name, and equivalence to failure_condition from
/// the entries' `permanent` where the enum has that notion.
template <class E>
class errc_category final : public std::error_category {
 public:
  [[nodiscard]] const char* name() const noexcept override { return errc_table<E>::category; }

  [[nodiscard]] std::string message(int value) const override { return std::string(errc_message<E>(value)); }

  [[nodiscard]] bool equivalent(int value, const std::error_condition& condition) const noexcept override {
    if (condition.category() != failure_condition_category()) return std::error_category::equivalent(value, condition);
    if constexpr (errc_has_permanence<E>) {
      const std::size_t i = errc_index<E>(value);
      if (i == errc_none) return false;
      const failure_condition answer =
          errc_table<E>::entries[i].permanent ? failure_condition::permanent : failure_condition::transient;
      return condition.value() == static_cast<int>(answer);
    } else {
      return false;
    }
  }
};

/// E's category object: a function-local static of an inline template, so
/// one per program whether llmdlq is header-only or compiled.
template <class E>
[[nodiscard]] const std::error_category& errc_category_of() noexcept {
  static const errc_category<E> instance;
  return instance;
}

template <class E>
concept error_code_enum = std::is_error_code_enum_v<E> && requires { errc_table<E>::entries; };

}  // namespace detail

/// Makes an llmdlq error enum a std::error_code; found by argument-dependent
/// lookup, so `std::error_code ec = sink_errc::timeout;` works, with
/// ec.category().name() "llmdlq.sink" and ec.message() "timeout".
template <detail::error_code_enum E>
[[nodiscard]] std::error_code make_error_code(E code) noexcept {
  return {static_cast<int>(code), detail::errc_category_of<E>()};
}

LLMDLQ_END_NAMESPACE
