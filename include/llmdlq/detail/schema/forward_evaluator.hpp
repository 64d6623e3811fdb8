// SPDX-License-Identifier: MIT
// Validation while parsing: one forward pass over simdjson's structural
// index, each value checked against its subschema as it is read, with no
// tape and no document. Yes or no, or "cannot tell" for the document
// parser and the tape evaluator to decide.
#pragma once

#include <bit>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/json/byte_classes.hpp"
#include "llmdlq/detail/json/number_grammar.hpp"
#include "llmdlq/detail/json/string_escape.hpp"
#include "llmdlq/detail/json/text_passes.hpp"
#include "llmdlq/detail/json/text_scan.hpp"
#include "llmdlq/detail/json/utf8.hpp"
#include "llmdlq/detail/schema/evaluator.hpp"
#include "llmdlq/detail/schema/forward_plan.hpp"
#include "llmdlq/detail/schema/instance.hpp"
#include "llmdlq/detail/schema/json_number.hpp"
#include "llmdlq/detail/schema/schema_program.hpp"
#include "llmdlq/detail/schema/structural_index.hpp"
#include "llmdlq/json_parser.hpp"
#include "llmdlq/timestamp.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

/// What the forward pass found. `undecided` is no verdict: the text is not
/// JSON, goes beyond the pass's limits, or meets a keyword that has to see
/// a container more than once; the tape evaluator judges it.
enum class forward_verdict : std::uint8_t { invalid, valid, undecided };

/// A string, number or literal the forward pass has read.
struct scalar_value {
  instance_kind kind = instance_kind::null;
  bool boolean = false;
  json_number number;
  std::string_view string;
};

/// The evaluator's view of a scalar_value, so that every keyword a scalar
/// can meet (combinators included) is judged by the same code as on a tape.
/// A scalar has no members or elements.
struct scalar_view {
  using value = const scalar_value*;
  static constexpr bool valid_utf8 = true;  ///< stage 1 validated the text, escapes decode to UTF-8
  static instance_kind kind(value v) noexcept { return v->kind; }
  // By reference: a copy would load in one piece what was stored in two,
  // which the store buffer cannot forward.
  static const json_number& number(value v) noexcept { return v->number; }
  static bool boolean(value v) noexcept { return v->boolean; }
  static std::string_view string(value v) noexcept { return v->string; }
  static std::size_t size(value) noexcept { return 0; }
  template <class F>
  static bool for_each_element(value, F&&) noexcept {
    return true;
  }
  template <class F>
  static bool for_each_member(value, F&&) noexcept {
    return true;
  }
};

/// One forward pass of a program over an indexed text: objects and arrays
/// are walked here, in document order, each member or element read once and
/// handed its subschema (properties, additionalProperties, prefixItems,
/// items, through `$ref` chains); scalars go to the tape evaluator's code
/// through scalar_view. Containers against const, enum, combinators,
/// contains, uniqueItems, patternProperties, dependentSchemas, unevaluated*
/// or dynamic references are left undecided, unless those keywords rule out
/// the container's kind; judge_text() does not start the pass on a
/// container when the schema lets any container meet them.
class forward_evaluator {
 public:
  forward_evaluator(const program& prog, const structural_index& index, std::optional<timestamp> now,
                    std::size_t max_depth)
      : prog_(prog),
        text_(index.text()),
        positions_(index.positions()),
        count_(index.count()),
        max_depth_(max_depth),
        ctx_(prog, now),
        scalars_(ctx_, nullptr) {}

  /// The verdict on the whole text: `valid` only when every byte was read
  /// and the text is strict JSON that the schema accepts.
  [[nodiscard]] forward_verdict run() {
    if (prog_.uses_dynamic_scope) return forward_verdict::undecided;
    const forward_verdict verdict = value(&prog_.nodes[prog_.root]);
    if (verdict == forward_verdict::valid && next_ != count_) return forward_verdict::undecided;  // trailing content
    if (ctx_.defect != no_index) return forward_verdict::invalid;  // reached under `not`: still a failure
    return verdict;
  }

  /// Values read and subschemas applied: tests show it grows linearly.
  [[nodiscard]] std::uint64_t steps() const noexcept { return ctx_.steps; }

 private:
  // The character at the next position; none past the last (the bytes after
  // a text are padding, whatever they hold).
  [[nodiscard]] char at_next() const noexcept { return next_ < count_ ? text_[positions_[next_]] : '\0'; }

  // The value at the next position, against `n` (nullptr: anything goes, but
  // it must still be read whole: only a text read to its end is valid).
  forward_verdict value(const node* n) {
    ++ctx_.steps;
    const char c = at_next();
    if (c == '{') return object(n);
    if (c == '[') return array(n);
    scalar_value s;
    if (c == '\0' || !read_scalar(s, string_buffer_)) return forward_verdict::undecided;
    if (n == nullptr || n->flags == 0) return forward_verdict::valid;
    return scalars_.evaluate(*n, &s, nullptr) ? forward_verdict::valid : forward_verdict::invalid;
  }

  // The node that governs a container's members or elements, after the
  // assertions on the container itself and any chain of `$ref`s; nullptr
  // when no node does. forward_pass_decides() follows the same steps.
  // `levels`: how much deeper the tape evaluator is when it reaches the
  // members or elements (a level per node on the way, the last included).
  forward_verdict governing(const node*& n, instance_kind container, std::uint32_t own_keywords,
                            std::size_t& levels) const {
    const std::uint8_t kind_bit = kind_bits[static_cast<std::size_t>(container)];
    levels = 0;
    for (int hops = 0; n != nullptr; ++hops) {
      levels = static_cast<std::size_t>(hops) + 1;
      const std::uint32_t f = n->flags;
      // Its type, const, enum or every branch of a combinator rules out this kind.
      if (!(n->admits & kind_bit)) return forward_verdict::invalid;
      if (f & kind_dispatched) {  // a union settled by kind: its branch of this kind, which admits it
        if (hops == max_forward_ref_hops) return forward_verdict::undecided;
        n = &prog_.nodes[prog_.kind_dispatches[n->kind_dispatch][static_cast<std::size_t>(container)]];
        continue;
      }
      if (f & container_tape_flags) return forward_verdict::undecided;
      if (!(f & has_ref)) {
        if (!(f & own_keywords)) n = nullptr;  // only assertions on the container: its contents are free
        return forward_verdict::valid;
      }
      // A node with both `$ref` and keywords for this container would walk it twice.
      if ((f & own_keywords) || hops == max_forward_ref_hops) return forward_verdict::undecided;
      n = &prog_.nodes[n->ref];
    }
    return forward_verdict::valid;
  }

  // Goes `levels` deeper in evaluation, as the tape evaluator does before it
  // reaches a container's contents (so that scalars inside are judged at its
  // depth); false when that is where it gives up, which the tape then reports.
  bool enter(std::size_t levels) noexcept {
    if (ctx_.depth + levels > max_evaluation_depth) return false;
    ctx_.depth += levels;
    return true;
  }

  forward_verdict object(const node* n) {
    std::size_t levels = 0;
    if (const auto verdict = governing(n, instance_kind::object, has_object_keywords, levels);
        verdict != forward_verdict::valid) {
      return verdict;
    }
    if (n && object_left_to_tape(*n)) return forward_verdict::undecided;
    if (++depth_ >= max_depth_ || !enter(levels)) return forward_verdict::undecided;
    const key_table* keys = n && n->keys != no_index ? &prog_.key_tables[n->keys] : nullptr;
    presence_set present(n ? n->presence_bits : 0);
    std::uint32_t hint = 0;
    std::uint64_t members = 0;
    ++next_;  // '{'
    if (at_next() == '}') {
      ++next_;
    } else {
      for (;;) {
        if (at_next() != '"') return forward_verdict::undecided;
        // The key the schema lists next, compared in place; else read and looked up.
        const key_table::entry* e = keys ? keys->expected_at(text_ + positions_[next_] + 1,
                                                             text_ + positions_[next_ + 1], hint)
                                         : nullptr;
        std::string_view key;
        if (e) {
          key = e->name;
          ++next_;
        } else {
          if (!read_string(key, key_buffer_)) return forward_verdict::undecided;
          if (keys) e = keys->find(key, hint);
        }
        if (at_next() != ':') return forward_verdict::undecided;
        ++next_;
        const node* member = nullptr;
        if (n) {
          if (e) present.add(*e);
          if (e && e->schema_node) {
            member = e->schema_node;
          } else if (n->additional_properties != no_node) {
            member = &prog_.nodes[n->additional_properties];
          }
          if (n->property_names != no_node && !name_passes(n->property_names, key)) {
            return forward_verdict::invalid;
          }
        }
        if (const auto verdict = value(member); verdict != forward_verdict::valid) return verdict;
        ++members;
        const char c = at_next();
        ++next_;
        if (c == '}') break;
        if (c != ',') return forward_verdict::undecided;
      }
    }
    --depth_;
    ctx_.depth -= levels;
    if (n == nullptr) return forward_verdict::valid;
    if (members < n->min_properties || members > n->max_properties) return forward_verdict::invalid;
    return names_present(*n, present) ? forward_verdict::valid : forward_verdict::invalid;
  }

  // required and dependentRequired, once an object's members are known.
  static bool names_present(const node& n, const presence_set& present) {
    if (!present.has_all(n.required_mask)) {
      for (const auto& property : n.required) {
        if (!present.test(property.first)) return false;
      }
    }
    for (const auto& rule : n.dependent_required) {
      if (!present.test(rule.trigger_bit)) continue;
      for (const auto& property : rule.required) {
        if (!present.test(property.first)) return false;
      }
    }
    return true;
  }

  bool name_passes(node_id schema, std::string_view key) {
    scalar_value name;
    name.kind = instance_kind::string;
    name.string = key;
    return scalars_.evaluate(schema, &name, nullptr);
  }

  forward_verdict array(const node* n) {
    std::size_t levels = 0;
    if (const auto verdict = governing(n, instance_kind::array, has_array_keywords, levels);
        verdict != forward_verdict::valid) {
      return verdict;
    }
    if (n && array_left_to_tape(*n)) return forward_verdict::undecided;
    if (++depth_ >= max_depth_ || !enter(levels)) return forward_verdict::undecided;
    std::uint64_t size = 0;
    ++next_;  // '['
    if (at_next() == ']') {
      ++next_;
    } else {
      for (;;) {
        const node* element = nullptr;
        if (n) {
          const node_id id = size < n->prefix_items.count ? prog_.children[n->prefix_items.begin + size] : n->items;
          if (id != no_node) element = &prog_.nodes[id];
        }
        if (const auto verdict = value(element); verdict != forward_verdict::valid) return verdict;
        ++size;
        const char c = at_next();
        ++next_;
        if (c == ']') break;
        if (c != ',') return forward_verdict::undecided;
      }
    }
    --depth_;
    ctx_.depth -= levels;
    if (n && (size < n->min_items || size > n->max_items)) return forward_verdict::invalid;
    return forward_verdict::valid;
  }

  // The scalar at the next position, which ends where the next position
  // starts, but for whitespace. False when it is not a strict JSON scalar,
  // or one the document parser reads otherwise (an integer beyond 64 bits,
  // a number beyond a double, an escaped lone surrogate): the parser says why.
  LLMDLQ_ALWAYS_INLINE bool read_scalar(scalar_value& s, std::string& buffer) {
    const char* begin = text_ + positions_[next_];
    switch (*begin) {
      case '"': s.kind = instance_kind::string; return read_string(s.string, buffer);
      case 't':
      case 'f':
      case 'n': {
        const std::string_view word = token();
        ++next_;
        if (word == "true" || word == "false") {
          s.kind = instance_kind::boolean;
          s.boolean = word[0] == 't';
          return true;
        }
        s.kind = instance_kind::null;
        return word == "null";
      }
      default: {
        const char* const limit = text_ + positions_[next_ + 1];
        ++next_;
        s.kind = instance_kind::number;
        return read_number(begin, limit, s.number);
      }
    }
  }

  // A literal at the next position: its bytes up to the first whitespace.
  // Stage 1 starts a new position at any byte after whitespace, so nothing
  // but whitespace lies between the token and the next position.
  [[nodiscard]] std::string_view token() const noexcept {
    const char* begin = text_ + positions_[next_];
    const char* const limit = text_ + positions_[next_ + 1];
    const char* end = begin;
    while (end < limit && !is_json_blank(*end)) ++end;
    return {begin, static_cast<std::size_t>(end - begin)};
  }

  // A string at the next position, decoded into `out` (a view of the text
  // itself when it holds no escape, else of `buffer`). Its content ends at
  // the first quote unless a backslash comes before it; whatever is left up
  // to the next position must be whitespace. Stage 1 found every string
  // closed within the text, so the search for that quote ends there, and
  // its loads stay within the text's padding.
  LLMDLQ_ALWAYS_INLINE bool read_string(std::string_view& out, std::string& buffer) {
    const char* const begin = text_ + positions_[next_] + 1;
    const char* const limit = text_ + positions_[next_ + 1];
    ++next_;
    const string_stop stop = quote_or_backslash(begin);
    if (stop.quote && stop.at + 1 == limit) {  // the common case: a structural right after the quote
      out = {begin, static_cast<std::size_t>(stop.at - begin)};
      return true;
    }
    return read_string_slowly(begin, stop.at, limit, out, buffer);
  }

  // The rest of read_string: blanks after the quote, or escapes, where the
  // string ends at the last quote before the next position.
  LLMDLQ_NOINLINE static bool read_string_slowly(const char* begin, const char* stop, const char* limit,
                                                 std::string_view& out, std::string& buffer) {
    if (stop < limit && *stop == '"') {
      for (const char* p = stop + 1; p < limit; ++p) {
        if (!is_json_blank(*p)) return false;
      }
      out = {begin, static_cast<std::size_t>(stop - begin)};
      return true;
    }
    const char* end = limit;
    while (end > begin && is_json_blank(end[-1])) --end;
    if (end == begin || end[-1] != '"') return false;
    if (!unescape_json_string({begin, static_cast<std::size_t>(end - 1 - begin)}, buffer)) return false;
    out = buffer;
    return true;
  }

  // RFC 8259's number grammar over the bytes up to the next position (read
  // once: the scan stops where the number does, and only blanks may follow),
  // then the value as simdjson gives it: an int64, else a uint64, for
  // integers; a correctly rounded double otherwise.
  static bool read_number(const char* begin, const char* limit, json_number& out) {
    const number_scan n = scan_number({begin, static_cast<std::size_t>(limit - begin)});
    if (!n.json) return false;
    for (const char* p = begin + n.end; p != limit; ++p) {
      if (!is_json_blank(*p)) return false;
    }
    const std::string_view text(begin, n.end);
    if (!n.integral()) return read_double(text, n, out);
    if (n.digits > 20) return false;
    if (n.digits > 19) return n.negative ? false : read_twenty_digits(text, out);
    constexpr std::uint64_t int64_limit = std::uint64_t(1) << 63;
    if (n.negative) {
      if (n.mantissa > int64_limit) return false;
      out = json_number::of(n.mantissa == int64_limit ? INT64_MIN : -static_cast<std::int64_t>(n.mantissa));
    } else if (n.mantissa < int64_limit) {
      out = json_number::of(static_cast<std::int64_t>(n.mantissa));
    } else {
      out = json_number::of(n.mantissa);
    }
    return true;
  }

  // A number with a fraction or an exponent. Most are a few digits times a
  // small power of ten, which one IEEE operation on two exact doubles rounds
  // correctly; the rest go through std::from_chars.
  static bool read_double(std::string_view text, const number_scan& n, json_number& out) {
    constexpr std::uint64_t exact_limit = std::uint64_t(1) << 53;
    if (n.digits <= 19 && n.mantissa <= exact_limit) {
      // At most 19 digits were read, so the fraction's count fits an int.
      const int exponent = n.exponent_value - static_cast<int>(n.fraction_digits);
      if (exponent >= -22 && exponent <= 22) {
        double d = static_cast<double>(n.mantissa);
        d = exponent >= 0 ? d * powers_of_ten[exponent] : d / powers_of_ten[-exponent];
        out = json_number::of(n.negative ? -d : d);
        return true;
      }
    }
    return read_double_slowly(text, out);
  }

  // The rare numbers, kept out of the hot path so that it stays inlined.
  LLMDLQ_NOINLINE static bool read_twenty_digits(std::string_view digits, json_number& out) {
    std::uint64_t full = 0;  // only a uint64 can hold 20 digits
    for (const char c : digits) {
      const auto digit = static_cast<std::uint64_t>(c - '0');
      if (full > (UINT64_MAX - digit) / 10) return false;
      full = full * 10 + digit;
    }
    out = json_number::of(full);
    return true;
  }

  LLMDLQ_NOINLINE static bool read_double_slowly(std::string_view text, json_number& out) {
    double d = 0;
    const auto [stop, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
    if (ec != std::errc() || stop != text.data() + text.size()) return false;  // beyond a double: the parser decides
    out = json_number::of(d);
    return true;
  }

  const program& prog_;
  const char* text_;
  const std::uint32_t* positions_;
  std::uint32_t count_;
  std::uint32_t next_ = 0;
  std::size_t depth_ = 0;
  std::size_t max_depth_;
  eval_context ctx_;
  evaluator<scalar_view, false> scalars_;
  std::string key_buffer_, string_buffer_;
};

/// The forward pass's verdict on `json`, with this thread's index: for
/// schema::is_valid_text, and for the tests that hold it to the tape
/// evaluator; `steps`, when given, receives the pass's count.
/// `padded`: the text carries simdjson's padding, and is read in place.
inline forward_verdict judge_text(const program& prog, std::string_view json, bool padded, std::optional<timestamp> now,
                                  const parse_options& limits, std::uint64_t* steps = nullptr) {
  count_text_pass(text_pass::forward_pass);
  // Decided when the schema was compiled: an object or array could meet a
  // keyword the pass leaves to the tape, so it is not read twice.
  if (!prog.forward_pass) {
    const std::size_t first = skip_blanks(json, 0);
    if (first < json.size() && (json[first] == '{' || json[first] == '[')) return forward_verdict::undecided;
  }
  thread_local structural_index index;
  if (!index.index(json, padded, limits.max_size)) return forward_verdict::undecided;
  forward_evaluator pass(prog, index, now, limits.max_depth);
  const forward_verdict verdict = pass.run();
  if (steps) *steps = pass.steps();
  return verdict;
}

}  // namespace detail
LLMDLQ_END_NAMESPACE
