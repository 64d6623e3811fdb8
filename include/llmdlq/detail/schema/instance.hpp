// SPDX-License-Identifier: MIT
// One view over instances held by simdjson or Boost.JSON, so that a single
// evaluator validates both; plus JSON equality and hashing across them.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/json/value.hpp>
#include <simdjson.h>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/schema/json_number.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

enum class instance_kind : std::uint8_t { null, boolean, number, string, array, object };

/// Instances held in a simdjson DOM document. Elements are cheap handles into
/// the document's tape.
struct simdjson_view {
  using value = simdjson::dom::element;
  static constexpr bool valid_utf8 = true;  ///< simdjson validated every string

  LLMDLQ_ALWAYS_INLINE static instance_kind kind(value v) noexcept {
    using t = simdjson::dom::element_type;
    switch (v.type()) {
      case t::ARRAY: return instance_kind::array;
      case t::OBJECT: return instance_kind::object;
      case t::INT64:
      case t::UINT64:
      case t::DOUBLE: return instance_kind::number;
      case t::STRING: return instance_kind::string;
      case t::BOOL: return instance_kind::boolean;
      case t::NULL_VALUE: return instance_kind::null;
    }
    return instance_kind::null;
  }
  LLMDLQ_ALWAYS_INLINE static json_number number(value v) noexcept {
    using t = simdjson::dom::element_type;
    switch (v.type()) {
      case t::INT64: return json_number::of(v.get_int64().value_unsafe());
      case t::UINT64: return json_number::of(v.get_uint64().value_unsafe());
      default: return json_number::of(v.get_double().value_unsafe());
    }
  }
  static bool boolean(value v) noexcept { return v.get_bool().value_unsafe(); }
  static std::string_view string(value v) noexcept { return v.get_string().value_unsafe(); }
  static std::size_t size(value v) noexcept {
    return v.type() == simdjson::dom::element_type::ARRAY ? v.get_array().value_unsafe().size()
                                                          : v.get_object().value_unsafe().size();
  }
  /// Calls f(index, element) in order while it returns true.
  template <class F>
  LLMDLQ_ALWAYS_INLINE static bool for_each_element(value v, F&& f) {
    std::size_t i = 0;
    const simdjson::dom::array array = v.get_array().value_unsafe();
    for (value element : array) {
      if (!f(i++, element)) return false;
    }
    return true;
  }
  /// Calls f(index, key, value) in document order while it returns true.
  template <class F>
  LLMDLQ_ALWAYS_INLINE static bool for_each_member(value v, F&& f) {
    std::size_t i = 0;
    const simdjson::dom::object object = v.get_object().value_unsafe();
    for (auto member : object) {
      if (!f(i++, member.key, member.value)) return false;
    }
    return true;
  }
};

/// Instances in a simdjson document read straight from its tape: the format
/// simdjson documents (doc/tape.md) and keeps public in dom::document. Every
/// access is inline, which the element API's accessors are not; this is
/// json_parser's fast path.
struct tape_view {
  static constexpr bool valid_utf8 = true;
  struct value {
    const std::uint64_t* tape;
    const std::uint8_t* strings;
    std::size_t index;
  };

  static value root_of(const simdjson::dom::document& doc) noexcept {
    return {doc.tape.get(), doc.string_buf.get(), 1};  // tape[0] is the root word
  }

  LLMDLQ_ALWAYS_INLINE static std::uint64_t word(value v) noexcept { return v.tape[v.index]; }
  LLMDLQ_ALWAYS_INLINE static char type(value v) noexcept { return static_cast<char>(word(v) >> 56); }

  // Tape words by their type letter: the instance kind, and how many words a
  // scalar takes. Tables rather than switches, because member types vary
  // from one value to the next and a mispredicted branch costs more.
  struct tape_type_info {
    instance_kind kinds[256];
    std::uint8_t scalar_words[256];
  };
  static constexpr tape_type_info type_info = [] {
    tape_type_info info{};
    for (auto& k : info.kinds) k = instance_kind::null;
    for (auto& w : info.scalar_words) w = 1;
    info.kinds[std::uint8_t('{')] = instance_kind::object;
    info.kinds[std::uint8_t('[')] = instance_kind::array;
    info.kinds[std::uint8_t('"')] = instance_kind::string;
    for (const char c : {'l', 'u', 'd'}) {
      info.kinds[std::uint8_t(c)] = instance_kind::number;
      info.scalar_words[std::uint8_t(c)] = 2;
    }
    info.kinds[std::uint8_t('t')] = info.kinds[std::uint8_t('f')] = instance_kind::boolean;
    return info;
  }();

  LLMDLQ_ALWAYS_INLINE static instance_kind kind(value v) noexcept {
    return type_info.kinds[static_cast<std::uint8_t>(word(v) >> 56)];
  }
  LLMDLQ_ALWAYS_INLINE static json_number number(value v) noexcept {
    const std::uint64_t payload = v.tape[v.index + 1];
    switch (type(v)) {
      case 'l': return json_number::of(static_cast<std::int64_t>(payload));
      case 'u': return json_number::of(payload);
      default: return json_number::of(std::bit_cast<double>(payload));
    }
  }
  static bool boolean(value v) noexcept { return type(v) == 't'; }
  LLMDLQ_ALWAYS_INLINE static std::string_view string(value v) noexcept {
    const std::uint8_t* at = v.strings + (word(v) & simdjson::internal::JSON_VALUE_MASK);
    std::uint32_t length;
    std::memcpy(&length, at, sizeof length);
    return {reinterpret_cast<const char*>(at + sizeof length), length};
  }
  static std::size_t size(value v) noexcept {
    const auto count = static_cast<std::uint32_t>(word(v) >> 32) & simdjson::internal::JSON_COUNT_MASK;
    if (count < simdjson::internal::JSON_COUNT_MASK) return count;
    std::size_t n = 0;  // the count saturates: count the long way
    if (type(v) == '[') {
      for_each_element(v, [&](std::size_t, value) { return ++n, true; });
    } else {
      for_each_member(v, [&](std::size_t, std::string_view, value) { return ++n, true; });
    }
    return n;
  }
  /// The tape index just past the value at `index`.
  LLMDLQ_ALWAYS_INLINE static std::size_t after(const std::uint64_t* tape, std::size_t index) noexcept {
    const std::uint64_t w = tape[index];
    const auto type = static_cast<std::uint8_t>(w >> 56);
    // A container's word holds the index past its end; a scalar takes one or two words.
    const std::size_t scalar_end = index + type_info.scalar_words[type];
    return type == '{' || type == '[' ? static_cast<std::uint32_t>(w) : scalar_end;
  }
  template <class F>
  LLMDLQ_ALWAYS_INLINE static bool for_each_element(value v, F&& f) {
    const std::size_t end = static_cast<std::uint32_t>(word(v)) - 1;  // the ']'
    std::size_t n = 0;
    for (std::size_t i = v.index + 1; i < end; i = after(v.tape, i)) {
      if (!f(n++, value{v.tape, v.strings, i})) return false;
    }
    return true;
  }
  template <class F>
  LLMDLQ_ALWAYS_INLINE static bool for_each_member(value v, F&& f) {
    const std::size_t end = static_cast<std::uint32_t>(word(v)) - 1;  // the '}'
    std::size_t n = 0;
    for (std::size_t i = v.index + 1; i < end; i = after(v.tape, i + 1)) {
      if (!f(n++, string(value{v.tape, v.strings, i}), value{v.tape, v.strings, i + 1})) return false;
    }
    return true;
  }
};

/// Instances held as Boost.JSON values (documents built or repaired in memory).
struct boost_view {
  using value = const boost::json::value*;
  static constexpr bool valid_utf8 = false;  ///< values built in code may hold any bytes

  static instance_kind kind(value v) noexcept {
    switch (v->kind()) {
      case boost::json::kind::null: return instance_kind::null;
      case boost::json::kind::bool_: return instance_kind::boolean;
      case boost::json::kind::int64:
      case boost::json::kind::uint64:
      case boost::json::kind::double_: return instance_kind::number;
      case boost::json::kind::string: return instance_kind::string;
      case boost::json::kind::array: return instance_kind::array;
      case boost::json::kind::object: return instance_kind::object;
    }
    return instance_kind::null;
  }
  static json_number number(value v) noexcept {
    switch (v->kind()) {
      case boost::json::kind::int64: return json_number::of(v->get_int64());
      case boost::json::kind::uint64: return json_number::of(v->get_uint64());
      default: return json_number::of(v->get_double());
    }
  }
  static bool boolean(value v) noexcept { return v->get_bool(); }
  static std::string_view string(value v) noexcept {
    const auto& s = v->get_string();
    return {s.data(), s.size()};
  }
  static std::size_t size(value v) noexcept { return v->is_array() ? v->get_array().size() : v->get_object().size(); }
  template <class F>
  LLMDLQ_ALWAYS_INLINE static bool for_each_element(value v, F&& f) {
    std::size_t i = 0;
    for (const auto& element : v->get_array()) {
      if (!f(i++, &element)) return false;
    }
    return true;
  }
  template <class F>
  LLMDLQ_ALWAYS_INLINE static bool for_each_member(value v, F&& f) {
    std::size_t i = 0;
    for (const auto& member : v->get_object()) {
      if (!f(i++, std::string_view(member.key().data(), member.key().size()), &member.value())) {
        return false;
      }
    }
    return true;
  }
};

/// An object's key, judged as the string it is (propertyNames) without a
/// value built for it. `ValidUtf8`: the key comes from a document whose
/// strings were validated.
template <bool ValidUtf8>
struct key_view {
  using value = std::string_view;
  static constexpr bool valid_utf8 = ValidUtf8;

  static instance_kind kind(value) noexcept { return instance_kind::string; }
  static json_number number(value) noexcept { return json_number::of(std::int64_t{0}); }
  static bool boolean(value) noexcept { return false; }
  static std::string_view string(value v) noexcept { return v; }
  static std::size_t size(value) noexcept { return 0; }
  template <class F>
  static bool for_each_element(value, F&&) {
    return true;
  }
  template <class F>
  static bool for_each_member(value, F&&) {
    return true;
  }
};

/// Recursion guard for equality and hashing: instances deeper than this are
/// treated as unequal (parsed documents never get near it).
inline constexpr std::size_t max_compare_depth = 2048;

template <class View>
std::vector<std::pair<std::string_view, typename View::value>> sorted_members(typename View::value v) {
  std::vector<std::pair<std::string_view, typename View::value>> members;
  members.reserve(View::size(v));
  View::for_each_member(v, [&](std::size_t, std::string_view key, typename View::value value) {
    members.emplace_back(key, value);
    return true;
  });
  std::sort(members.begin(), members.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return members;
}

/// JSON equality (numbers compare by value, objects ignore member order)
/// between instances seen through two views.
template <class A, class B>
bool json_equal(typename A::value a, typename B::value b, std::size_t depth = 0) {
  const instance_kind k = A::kind(a);
  if (k != B::kind(b) || depth > max_compare_depth) return false;
  switch (k) {
    case instance_kind::null: return true;
    case instance_kind::boolean: return A::boolean(a) == B::boolean(b);
    case instance_kind::number: return compare(A::number(a), B::number(b)) == 0;
    case instance_kind::string: return A::string(a) == B::string(b);
    case instance_kind::array: {
      if (A::size(a) != B::size(b)) return false;
      std::vector<typename B::value> right;
      right.reserve(B::size(b));
      B::for_each_element(b, [&](std::size_t, typename B::value e) {
        right.push_back(e);
        return true;
      });
      return A::for_each_element(a, [&](std::size_t i, typename A::value e) {
        return json_equal<A, B>(e, right[i], depth + 1);
      });
    }
    case instance_kind::object: {
      if (A::size(a) != B::size(b)) return false;
      const auto right = sorted_members<B>(b);
      return A::for_each_member(a, [&](std::size_t, std::string_view key, typename A::value e) {
        const auto it = std::lower_bound(right.begin(), right.end(), key,
                                         [](const auto& member, std::string_view k2) { return member.first < k2; });
        return it != right.end() && it->first == key && json_equal<A, B>(e, it->second, depth + 1);
      });
    }
  }
  return false;
}

inline std::uint64_t mix_hash(std::uint64_t h, std::uint64_t v) noexcept {
  h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  return h * 0xFF51AFD7ED558CCDull;
}

inline std::uint64_t hash_bytes(std::string_view s) noexcept {
  std::uint64_t h = 0xCBF29CE484222325ull;
  for (const char c : s) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001B3ull;
  return h;
}

/// A hash consistent with json_equal: equal instances hash equal.
template <class V>
std::uint64_t json_hash(typename V::value v, std::size_t depth = 0) {
  const instance_kind k = V::kind(v);
  std::uint64_t h = static_cast<std::uint64_t>(k) + 1;
  if (depth > max_compare_depth) return h;
  switch (k) {
    case instance_kind::null: return h;
    case instance_kind::boolean: return mix_hash(h, V::boolean(v));
    case instance_kind::number: {
      double d = V::number(v).to_double();
      if (d == 0) d = 0;  // -0.0 equals 0
      std::uint64_t bits;
      std::memcpy(&bits, &d, sizeof bits);
      return mix_hash(h, bits);
    }
    case instance_kind::string: return mix_hash(h, hash_bytes(V::string(v)));
    case instance_kind::array:
      V::for_each_element(v, [&](std::size_t, typename V::value e) {
        h = mix_hash(h, json_hash<V>(e, depth + 1));
        return true;
      });
      return h;
    case instance_kind::object: {
      // Members in any order: combine them with a commutative sum.
      std::uint64_t sum = 0;
      V::for_each_member(v, [&](std::size_t, std::string_view key, typename V::value e) {
        sum += mix_hash(hash_bytes(key), json_hash<V>(e, depth + 1));
        return true;
      });
      return mix_hash(h, sum);
    }
  }
  return h;
}

}  // namespace detail
LLMDLQ_END_NAMESPACE
