// SPDX-License-Identifier: MIT
// Walks a compiled schema over an instance. One template serves the yes/no
// fast path (Collect = false: stops at the first failure, builds nothing) and
// the error-collecting path (Collect = true), over simdjson or Boost.JSON.
#pragma once

#include <bit>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <fmt/format.h>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/counted.hpp"
#include "llmdlq/detail/schema/instance.hpp"
#include "llmdlq/timestamp.hpp"
#include "llmdlq/detail/schema/schema_program.hpp"
#include "llmdlq/detail/schema/small_bitset.hpp"
#include "llmdlq/detail/schema/union_dispatch.hpp"
#include "llmdlq/detail/schema/uri.hpp"
#include "llmdlq/detail/json/utf8.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

/// Deepest chain of nested evaluations (instance depth times in-place
/// applicators) before evaluation gives up, so no schema can exhaust the stack.
inline constexpr std::size_t max_evaluation_depth = 1024;

/// State shared by the evaluators of one validation.
struct eval_context {
  explicit eval_context(const program& p, std::optional<timestamp> at = std::nullopt) : prog(p), now(at) {}

  const program& prog;
  std::vector<std::uint32_t> scope;  ///< dynamic scope: schema resources entered, outermost first
  std::size_t depth = 0;
  std::optional<timestamp> now;  ///< for content rules; none: they are skipped
  /// The first program::defects entry evaluation reached (no_index: none).
  /// It fails the whole validation, even where it was reached under `not`
  /// or in a branch whose failure was allowed.
  std::uint32_t defect = no_index;
  /// Work done: subschemas applied to values, and items compared for
  /// uniqueItems. Tests read it to show that cost grows linearly with the document.
  std::uint64_t steps = 0;
  // Kept as the scope grows, so that resolving a dynamic reference costs the
  // same at any depth: per scope entry, the outermost "$recursiveAnchor": true
  // root of the run of such resources ending there (no_node: none); per anchor
  // name, the outermost `$dynamicAnchor` in scope; the names each entry set.
  std::vector<node_id> recursive_run;
  std::vector<node_id> outermost_dynamic;
  std::vector<std::uint32_t> dynamic_names_set;
};

/// Where collected errors go, and the paths of the current evaluation.
struct error_sink {
  std::vector<validation_error>& errors;
  std::size_t max_errors;
  std::string instance_path;
  std::string schema_path;
  bool find_structural = false;   ///< see validate_options::find_structural
  bool structural_found = false;  ///< a structural error is in `errors`

  [[nodiscard]] bool full() const noexcept {
    return errors.size() >= max_errors && (!find_structural || structural_found);
  }
};

/// Whether a failure of `keyword` is structural: anything but a `format`
/// assertion or a content rule, which make a failure semantic.
[[nodiscard]] inline bool is_structural_keyword(std::string_view keyword) noexcept {
  return keyword != "format" && keyword != "x-dlq-rule";
}

inline std::string describe_types(std::uint8_t types) {
  static constexpr std::pair<std::uint8_t, std::string_view> names[] = {
      {object_bit, "object"},   {array_bit, "array"},     {string_bit, "string"}, {number_bit, "number"},
      {integer_bit, "integer"}, {boolean_bit, "boolean"}, {null_bit, "null"}};
  std::string out;
  for (const auto& [bit, name] : names) {
    if (!(types & bit)) continue;
    if (!out.empty()) out += " or ";
    out += name;
  }
  return out;
}

inline std::string_view describe_kind(instance_kind k) noexcept {
  switch (k) {
    case instance_kind::null: return "null";
    case instance_kind::boolean: return "boolean";
    case instance_kind::number: return "number";
    case instance_kind::string: return "string";
    case instance_kind::array: return "array";
    case instance_kind::object: return "object";
  }
  return "value";
}

inline std::string describe_number(const json_number& n) {
  switch (n.k) {
    case json_number::kind::int64: return fmt::format("{}", n.i);
    case json_number::kind::uint64: return fmt::format("{}", n.u);
    case json_number::kind::float64: return fmt::format("{}", n.d);
  }
  return {};
}

/// JSON text of `value`, cut to `limit` bytes for messages.
inline std::string describe_json(const boost::json::value& value, std::size_t limit = 60) {
  std::string text = boost::json::serialize(value);
  if (text.size() > limit) {
    std::size_t cut = limit;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    text.resize(cut);
    text += "...";
  }
  return text;
}

/// The message of an error at a defect: what the schema's warning said.
inline std::string defect_message(const reference_defect& d) {
  return fmt::format("the schema cannot be evaluated here ({}): {}", to_string(d.kind), d.message);
}

/// The error a validation that reached a defect reports when the paths
/// that reached it kept no error of their own (a branch tried quietly).
inline validation_error defect_error(const reference_defect& d) {
  return validation_error{"", d.location, d.keyword, defect_message(d), d.kind};
}

/// Makes sure `errors` tells of the defect a validation reached, within
/// `max_errors` (at least one): in its place when the error was kept, else
/// in place of the last.
inline void keep_defect_error(std::vector<validation_error>& errors, const reference_defect& d,
                              std::size_t max_errors) {
  for (const auto& e : errors) {
    if (e.defect != schema_defect::none) return;
  }
  if (!errors.empty() && errors.size() >= max_errors) errors.pop_back();
  errors.push_back(defect_error(d));
}

/// Which of the names a node knows an object holds: one word for up to 64
/// names (always, in practice), a bit set beyond.
class presence_set {
 public:
  explicit presence_set(std::uint32_t bits) {
    if (bits > 64) large_ = std::make_unique<small_bitset>(bits);
  }
  /// Records that the object holds the key of `e`.
  LLMDLQ_ALWAYS_INLINE void add(const key_table::entry& e) noexcept {
    if (LLMDLQ_LIKELY(!large_)) {
      small_ |= e.presence_mask;
    } else if (e.bit != no_index) {
      large_->set(e.bit);
    }
  }
  [[nodiscard]] bool test(std::uint32_t bit) const noexcept {
    return !large_ ? (small_ >> bit) & 1 : large_->test(bit);
  }
  /// Whether every bit of `mask` (bits below 64) is set; with more than 64
  /// names, answers false so that the caller checks name by name.
  [[nodiscard]] bool has_all(std::uint64_t mask) const noexcept { return !large_ && (small_ & mask) == mask; }

 private:
  std::uint64_t small_ = 0;
  std::unique_ptr<small_bitset> large_;
};

// A message for fail(): formatted only when errors are being collected.
#define LLMDLQ_MESSAGE(...) [&] { return fmt::format(__VA_ARGS__); }

template <class View, bool Collect>
class evaluator {
 public:
  using value = typename View::value;

  evaluator(eval_context& context, error_sink* sink) noexcept : ctx_(context), prog_(context.prog), sink_(sink) {}

  /// Whether `v` is valid against node `id`. `evaluated`, when given, collects
  /// the members or elements of `v` this node evaluated (for unevaluated*).
  LLMDLQ_ALWAYS_INLINE bool evaluate(node_id id, value v, small_bitset* evaluated) {
    return evaluate(prog_.nodes[id], v, evaluated);
  }

  LLMDLQ_ALWAYS_INLINE bool evaluate(const node& n, value v, small_bitset* evaluated) {
    ++ctx_.steps;
    // Most subschemas of an extraction schema are leaves ({"type": "string",
    // "maxLength": 80}): check them inline, without the bookkeeping below.
    if ((n.flags & ~leaf_flags) == 0) return check_assertions(n, View::kind(v), v);
    if constexpr (!Collect) {
      if (n.flags & leaf_items) return ctx_.depth < max_evaluation_depth && check_leaf_items(n, v, evaluated);
      if ((n.flags & kind_dispatched) && evaluated == nullptr) return evaluate_by_kind(n, v);
      if (is_plain_ref(n)) return evaluate_target(n, v, evaluated);
    }
    return evaluate_node(n, v, evaluated);
  }

 private:
  // A subschema that is only a `$ref` ({"$ref": "#/$defs/position"}) is its
  // target on the yes/no path: no error path names the hop, and without
  // dynamic scope no resource entered matters.
  [[nodiscard]] LLMDLQ_ALWAYS_INLINE bool is_plain_ref(const node& n) const noexcept {
    return (n.flags & ~(annotates_properties | annotates_items)) == has_ref && !prog_.uses_dynamic_scope;
  }

  // The end of a chain of plain references, evaluated.
  bool evaluate_target(const node& n, value v, small_bitset* evaluated) {
    std::size_t refs = 0;
    const node& target = follow_plain_refs(n, refs);
    return evaluate_followed(target, refs, v, evaluated);
  }

  // The node at the end of n's chain of plain references, and how many it
  // followed. The compiler breaks every loop of in-place references, so the
  // chain ends; the bound is a guard.
  const node& follow_plain_refs(const node& n, std::size_t& refs) const noexcept {
    const node* target = &prog_.nodes[n.ref];
    for (refs = 1; refs < max_plain_ref_chain && is_plain_ref(*target); ++refs) target = &prog_.nodes[target->ref];
    return *target;
  }

  // `target`, reached through `refs` plain references, at the depth and with
  // the steps evaluate_node would have counted for each (so both paths hit
  // max_evaluation_depth on the same instance).
  LLMDLQ_ALWAYS_INLINE bool evaluate_followed(const node& target, std::size_t refs, value v, small_bitset* evaluated) {
    ctx_.steps += refs;
    if (ctx_.depth + refs > max_evaluation_depth) return false;
    if ((target.flags & ~leaf_flags) == 0) return check_assertions(target, View::kind(v), v);
    if (target.flags & leaf_items) {
      return ctx_.depth + refs < max_evaluation_depth && check_leaf_items(target, v, evaluated);
    }
    ctx_.depth += refs;
    const bool valid = (target.flags & kind_dispatched) && evaluated == nullptr ? evaluate_by_kind(target, v)
                                                                                : evaluate_node(target, v, evaluated);
    ctx_.depth -= refs;
    return valid;
  }
  static constexpr std::size_t max_plain_ref_chain = 64;

  // A node flagged kind_dispatched, on the yes/no path: the one branch of
  // the union that admits v's kind, one level deeper, as evaluate_node
  // would try it; the others would fail without a step.
  bool evaluate_by_kind(const node& n, value v) {
    const node_id branch = prog_.kind_dispatches[n.kind_dispatch][static_cast<std::size_t>(View::kind(v))];
    if (branch == no_node || ctx_.depth >= max_evaluation_depth) return false;
    depth_guard depth(ctx_);
    return evaluate(branch, v, nullptr);
  }

  // A node flagged leaf_items, on the yes/no path: what evaluate_node would
  // check (the node's own assertions, the count, each element against the
  // leaf, one step each), without its guards around every element.
  bool check_leaf_items(const node& n, value v, small_bitset* evaluated) {
    const instance_kind k = View::kind(v);
    if (!check_assertions(n, k, v)) return false;
    if (k != instance_kind::array) return true;
    const std::size_t size = View::size(v);
    if (size < n.min_items || size > n.max_items) return false;
    const node& item = prog_.nodes[n.items];
    // The common leaf, a type alone ({"type": "number"}): one test per element.
    const bool type_only = item.flags == has_type;
    const bool valid = View::for_each_element(v, [&](std::size_t, value element) LLMDLQ_INLINE_LAMBDA {
      ++ctx_.steps;
      const instance_kind kind = View::kind(element);
      return type_only ? type_matches(item.types, kind, element) : check_assertions(item, kind, element);
    });
    if (valid && evaluated) evaluated->set_range(0, size);
    return valid;
  }

  // The keywords that look at the value alone: type, const, enum, and the
  // number and string keywords.
  LLMDLQ_ALWAYS_INLINE bool check_assertions(const node& n, instance_kind k, value v) {
    if (n.flags == 0) return true;
    bool valid = true;
    if ((n.flags & has_type) && !type_matches(n.types, k, v)) {
      if (!fail("type", LLMDLQ_MESSAGE("expected {}, found {}", describe_types(n.types), describe_found(k, v)))) {
        return false;
      }
      valid = false;
    }
    if ((n.flags & has_const) && !json_equal<View, boost_view>(v, &prog_.values[n.const_value])) {
      if (!fail("const", LLMDLQ_MESSAGE("must be {}", describe_json(prog_.values[n.const_value])))) {
        return false;
      }
      valid = false;
    }
    if ((n.flags & has_enum) && !in_enum(prog_.enums[n.enum_set], k, v)) {
      if (!fail("enum", [&] { return describe_enum(prog_.enums[n.enum_set]); })) return false;
      valid = false;
    }
    if (k == instance_kind::number && (n.flags & has_number_keywords)) {
      if (!check_number(n, View::number(v))) {
        if (!keep_going()) return false;
        valid = false;
      }
    } else if (k == instance_kind::string && (n.flags & has_string_keywords)) {
      if (!check_string(n, View::string(v))) {
        if (!keep_going()) return false;
        valid = false;
      }
    }
    if ((n.flags & has_content_rules) && ctx_.now && k == instance_kind::string) {
      if (!check_content_rules(n, View::string(v))) {
        if (!keep_going()) return false;
        valid = false;
      }
    }
    return valid;
  }

  // A reference compiled as a defect: recorded in the context, which fails
  // the validation, and as an error typed with the defect.
  LLMDLQ_NOINLINE bool reach_defect(const node& n) {
    if (ctx_.defect == no_index) ctx_.defect = n.defect;
    const reference_defect& d = prog_.defects[n.defect];
    if constexpr (Collect) {
      const std::size_t before = sink_->errors.size();
      (void)fail_at_step(d.keyword, [&] { return defect_message(d); });
      if (sink_->errors.size() > before) sink_->errors.back().defect = d.kind;
    }
    return false;
  }

  // x-dlq-rule: dates and date-times against ctx_.now. Strings that are
  // neither are left to `format`.
  LLMDLQ_NOINLINE bool check_content_rules(const node& n, std::string_view s) {
    std::optional<timestamp> at;
    bool date_only = false;
    if (matches_format(format_kind::date, s)) {
      at = parse_rfc3339(std::string(s) + "T00:00:00Z");
      date_only = true;
    } else {
      at = parse_rfc3339(s);
    }
    if (!at) return true;
    // A date is compared with today's date, not with the current instant.
    const timestamp now = date_only ? std::chrono::floor<std::chrono::days>(*ctx_.now) : *ctx_.now;
    bool valid = true;
    for (const content_rule rule : n.content_rules) {
      const bool future = *at > now;
      const bool past = *at < now;
      if (rule == content_rule::not_future && future) {
        valid = false;
        if (!fail("x-dlq-rule", LLMDLQ_MESSAGE("is in the future: {} is after {}", s,
                                               date_only ? format_rfc3339(now).substr(0, 10) : format_rfc3339(now)))) {
          return false;
        }
      } else if (rule == content_rule::not_past && past) {
        valid = false;
        if (!fail("x-dlq-rule", LLMDLQ_MESSAGE("is in the past: {} is before {}", s,
                                               date_only ? format_rfc3339(now).substr(0, 10) : format_rfc3339(now)))) {
          return false;
        }
      }
    }
    return valid;
  }

  LLMDLQ_NOINLINE bool evaluate_node(const node& n, value v, small_bitset* evaluated) {
    if (n.flags & always_false) {
      if (n.flags & broken_reference) return reach_defect(n);
      return fail_at_step("false", [] { return "no value is allowed here"; });
    }
    if (ctx_.depth >= max_evaluation_depth) {
      return fail_at_step("$ref",
                          LLMDLQ_MESSAGE("evaluation nests deeper than {}", counted(max_evaluation_depth, "level")));
    }
    depth_guard depth(ctx_);
    scope_guard scope(ctx_, n.resource);

    const instance_kind k = View::kind(v);
    if ((k == instance_kind::object && (n.flags & has_unevaluated_properties)) ||
        (k == instance_kind::array && (n.flags & has_unevaluated_items))) {
      return evaluate_tracked(n, k, v, evaluated);
    }
    return evaluate_keywords(n, k, v, evaluated);
  }

  // A node with unevaluatedProperties or unevaluatedItems: its keywords
  // record what they evaluated, and the unevaluated* keyword checks the rest.
  LLMDLQ_NOINLINE bool evaluate_tracked(const node& n, instance_kind k, value v, small_bitset* evaluated) {
    small_bitset own(View::size(v));
    bool valid = evaluate_keywords(n, k, v, &own);
    if (!valid && !keep_going()) return false;
    if (!check_unevaluated(n, k, v, own)) {
      if (!keep_going()) return false;
      valid = false;
    }
    if (evaluated && valid) evaluated->merge(own);
    return valid;
  }

  // Every keyword but unevaluated*; `marks` receives the evaluated members or items.
  LLMDLQ_ALWAYS_INLINE bool evaluate_keywords(const node& n, instance_kind k, value v, small_bitset* marks) {
    bool valid = check_assertions(n, k, v);
    if (!valid && !keep_going()) return false;
    if (k == instance_kind::array && (n.flags & has_array_keywords)) {
      if (!check_array(n, v, marks)) {
        if (!keep_going()) return false;
        valid = false;
      }
    } else if (k == instance_kind::object && (n.flags & has_object_keywords)) {
      if (!check_object(n, v, marks)) {
        if (!keep_going()) return false;
        valid = false;
      }
    }
    if (n.flags & (has_ref | has_dynamic_ref | has_combinators)) {
      if (!check_in_place(n, k, v, marks)) {
        if (!keep_going()) return false;
        valid = false;
      }
    }
    return valid;
  }

  // $ref, $dynamicRef and the combinators: subschemas applied to the same value.
  bool check_in_place(const node& n, instance_kind k, value v, small_bitset* marks) {
    bool valid = true;
    if (n.flags & has_ref) {
      step s(this, "$ref");
      if (!evaluate(n.ref, v, marks)) {
        if (!keep_going()) return false;
        valid = false;
      }
    }
    if (n.flags & has_dynamic_ref) {
      step s(this, n.recursive_ref ? "$recursiveRef" : "$dynamicRef");
      if (!evaluate(resolve_dynamic(n), v, marks)) {
        if (!keep_going()) return false;
        valid = false;
      }
    }
    if (n.flags & has_combinators) {
      if (!check_combinators(n, k, v, marks)) {
        if (!keep_going()) return false;
        valid = false;
      }
    }
    return valid;
  }

  // RAII helpers: nesting depth, dynamic scope, and (when collecting) paths.
  struct depth_guard {
    eval_context& ctx;
    explicit depth_guard(eval_context& c) noexcept : ctx(c) { ++ctx.depth; }
    ~depth_guard() { --ctx.depth; }
  };

  struct scope_guard {
    eval_context& ctx;
    bool pushed = false;
    std::size_t names_mark = 0;
    scope_guard(eval_context& c, std::uint32_t resource) : ctx(c) {
      if (!ctx.prog.uses_dynamic_scope || (!ctx.scope.empty() && ctx.scope.back() == resource)) return;
      pushed = true;
      const schema_resource& entered = ctx.prog.resources[resource];
      node_id run = entered.recursive_anchor;
      if (run != no_node && !ctx.recursive_run.empty() && ctx.recursive_run.back() != no_node) {
        run = ctx.recursive_run.back();
      }
      ctx.scope.push_back(resource);
      ctx.recursive_run.push_back(run);
      names_mark = ctx.dynamic_names_set.size();
      if (entered.dynamic_anchors.empty()) return;
      if (ctx.outermost_dynamic.size() < ctx.prog.dynamic_anchor_names) {
        ctx.outermost_dynamic.resize(ctx.prog.dynamic_anchor_names, no_node);
      }
      for (const auto& [name, target] : entered.dynamic_anchors) {
        if (ctx.outermost_dynamic[name] != no_node) continue;
        ctx.outermost_dynamic[name] = target;
        ctx.dynamic_names_set.push_back(name);
      }
    }
    ~scope_guard() {
      if (!pushed) return;
      ctx.scope.pop_back();
      ctx.recursive_run.pop_back();
      while (ctx.dynamic_names_set.size() > names_mark) {
        ctx.outermost_dynamic[ctx.dynamic_names_set.back()] = no_node;
        ctx.dynamic_names_set.pop_back();
      }
    }
    scope_guard(const scope_guard&) = delete;
    scope_guard& operator=(const scope_guard&) = delete;
  };

  // Appends one schema step (and optionally one instance step) to the paths
  // while in scope; costs nothing on the fast path.
  class step {
   public:
    step(evaluator* e, std::string_view keyword) : e_(e) {
      if constexpr (Collect) {
        schema_mark_ = e_->sink_->schema_path.size();
        instance_mark_ = e_->sink_->instance_path.size();
        append_pointer_token(e_->sink_->schema_path, keyword);
      }
    }
    template <class Token>
    step(evaluator* e, std::string_view keyword, const Token& schema_token) : step(e, keyword) {
      if constexpr (Collect) append_pointer_token(e_->sink_->schema_path, schema_token);
    }
    template <class Token>
    step& instance(const Token& token) {
      if constexpr (Collect) append_pointer_token(e_->sink_->instance_path, token);
      return *this;
    }
    ~step() {
      if constexpr (Collect) {
        e_->sink_->schema_path.resize(schema_mark_);
        e_->sink_->instance_path.resize(instance_mark_);
      }
    }
    step(const step&) = delete;
    step& operator=(const step&) = delete;

   private:
    evaluator* e_;
    std::size_t schema_mark_ = 0;
    std::size_t instance_mark_ = 0;
  };

  // After a failure: false on the fast path (stop), and on the collecting
  // path only once the error cap is reached.
  [[nodiscard]] bool keep_going() const noexcept {
    if constexpr (Collect) {
      return !sink_->full();
    } else {
      return false;
    }
  }

  // Records a failure of `keyword`, which sits below the current schema path;
  // returns keep_going(). `message` is a callable, only run when collecting.
  template <class Message>
  bool fail(std::string_view keyword, Message&& message) {
    if constexpr (Collect) {
      std::string path = sink_->schema_path;
      append_pointer_token(path, keyword);
      return record(keyword, std::move(path), message());
    } else {
      (void)keyword;
      (void)message;
      return false;
    }
  }

  // The same for a failure at the current schema path itself (a `step` has
  // already entered the keyword, or the subschema is `false`).
  template <class Message>
  bool fail_at_step(std::string_view keyword, Message&& message) {
    if constexpr (Collect) {
      return record(keyword, sink_->schema_path, message());
    } else {
      (void)keyword;
      (void)message;
      return false;
    }
  }

  bool record(std::string_view keyword, std::string schema_path, std::string message) {
    if (sink_->full()) return false;
    const bool structural = is_structural_keyword(keyword);
    if (sink_->errors.size() >= sink_->max_errors && !structural) return true;  // past the cap: not kept
    sink_->structural_found = sink_->structural_found || structural;
    sink_->errors.push_back(validation_error{sink_->instance_path, std::move(schema_path), std::string(keyword),
                                             std::move(message)});
    return !sink_->full();
  }

  // When collecting, whether a member or element passes a subschema, asked
  // quietly first: only a failing value is walked again (with its paths) to
  // collect errors, so the valid parts of a document cost no path building.
  // Always false on the fast path, which goes straight to evaluate().
  bool passes_quietly(const node& n, value v) {
    if constexpr (Collect) {
      evaluator<View, false> quiet(ctx_, nullptr);
      return quiet.evaluate(n, v, nullptr);
    } else {
      (void)n;
      (void)v;
      return false;
    }
  }

  // A yes/no answer that must not record errors (anyOf branches, `if`, ...).
  bool test(node_id id, value v, small_bitset* evaluated) {
    if constexpr (Collect) {
      evaluator<View, false> quiet(ctx_, nullptr);
      return quiet.evaluate(id, v, evaluated);
    } else {
      return evaluate(id, v, evaluated);
    }
  }

  bool annotates(node_id id, instance_kind k) const noexcept {
    const auto flags = prog_.nodes[id].flags;
    return k == instance_kind::object ? (flags & annotates_properties) != 0
                                      : k == instance_kind::array && (flags & annotates_items) != 0;
  }

  bool is_false_schema(node_id id) const noexcept { return (prog_.nodes[id].flags & always_false) != 0; }

  static regex_match search(const ecma_regex& re, std::string_view subject) noexcept {
    if constexpr (View::valid_utf8) {
      return re.search(subject, ecma_regex::valid_utf8);
    } else {
      return re.search(subject);
    }
  }

  // The type bit of each instance_kind, in declaration order; a table, not a
  // switch, since member kinds vary too much for a branch to predict.

  LLMDLQ_ALWAYS_INLINE static bool type_matches(std::uint8_t types, instance_kind k, value v) noexcept {
    if (types & kind_bits[static_cast<std::size_t>(k)]) return true;
    return k == instance_kind::number && (types & integer_bit) && View::number(v).is_integer();
  }

  static std::string describe_found(instance_kind k, value v) {
    if (k == instance_kind::number) {
      const json_number n = View::number(v);
      return fmt::format("{} {}", n.is_integer() ? "integer" : "number", describe_number(n));
    }
    return std::string(describe_kind(k));
  }

  static bool in_enum(const enum_values& e, instance_kind k, value v) {
    if (e.all_strings) return k == instance_kind::string && e.strings.find(View::string(v)) != nullptr;
    for (const auto& candidate : e.values) {
      if (json_equal<View, boost_view>(v, &candidate)) return true;
    }
    return false;
  }

  static std::string describe_enum(const enum_values& e) {
    std::string out = "must be one of ";
    for (std::size_t i = 0; i < e.values.size(); ++i) {
      if (i == 8) {
        out += fmt::format(", ... ({} values)", e.values.size());
        break;
      }
      if (i) out += ", ";
      out += describe_json(e.values[i], 40);
    }
    return out;
  }

  node_id resolve_dynamic(const node& n) const noexcept {
    if (n.recursive_ref) {
      // The innermost resources of the dynamic scope whose roots have "$recursiveAnchor": true,
      // if the target's has it: the outermost of that run.
      const node_id target = n.dynamic_ref;
      if (prog_.resources[prog_.nodes[target].resource].recursive_anchor != target) return target;
      const node_id run = ctx_.recursive_run.empty() ? no_node : ctx_.recursive_run.back();
      return run != no_node ? run : target;
    }
    if (n.dynamic_anchor == no_index || n.dynamic_anchor >= ctx_.outermost_dynamic.size()) return n.dynamic_ref;
    const node_id outermost = ctx_.outermost_dynamic[n.dynamic_anchor];
    return outermost != no_node ? outermost : n.dynamic_ref;
  }

  LLMDLQ_ALWAYS_INLINE bool check_number(const node& n, const json_number& x) {
    // The common case: a number a double holds exactly, against bounds a
    // double holds exactly. Anything else, or a failure to report, takes the
    // exact comparisons below.
    if (n.has_interval) {
      constexpr std::int64_t exact_limit = std::int64_t(1) << 53;
      const bool exact = x.k == json_number::kind::float64 ||
                         (x.k == json_number::kind::int64 && x.i >= -exact_limit && x.i <= exact_limit);
      if (exact) {
        const double d = x.k == json_number::kind::float64 ? x.d : static_cast<double>(x.i);
        if (d >= n.interval_low && d <= n.interval_high && (!n.has_multiple_of || is_multiple(x, n))) {
          return true;
        }
        if constexpr (!Collect) return false;
      }
    }
    return check_number_exactly(n, x);
  }

  LLMDLQ_NOINLINE bool check_number_exactly(const node& n, const json_number& x) {
    bool valid = true;
    auto versus = [&x](const number_bound& b) { return compare(x, b.value); };
    auto bound = [&](const number_bound& b, std::string_view keyword, bool ok, std::string_view relation) {
      if (ok) return true;
      valid = false;
      return fail(keyword,
                  LLMDLQ_MESSAGE("must be {} {}, found {}", relation, describe_number(b.value), describe_number(x)));
    };
    if (n.minimum.present && !bound(n.minimum, "minimum", versus(n.minimum) >= 0, ">=")) {
      return false;
    }
    if (n.maximum.present && !bound(n.maximum, "maximum", versus(n.maximum) <= 0, "<=")) {
      return false;
    }
    if (n.exclusive_minimum.present &&
        !bound(n.exclusive_minimum, "exclusiveMinimum", versus(n.exclusive_minimum) > 0, ">")) {
      return false;
    }
    if (n.exclusive_maximum.present &&
        !bound(n.exclusive_maximum, "exclusiveMaximum", versus(n.exclusive_maximum) < 0, "<")) {
      return false;
    }
    if (n.has_multiple_of && !is_multiple(x, n)) {
      valid = false;
      if (!fail("multipleOf", LLMDLQ_MESSAGE("must be a multiple of {}, found {}", describe_number(n.multiple_of),
                                             describe_number(x)))) {
        return false;
      }
    }
    return valid;
  }

  static bool is_multiple(const json_number& x, const node& n) noexcept {
    if (x.k == json_number::kind::int64 && n.multiple_of.k == json_number::kind::int64) {
      return x.i % n.multiple_of.i == 0;
    }
    // Amounts against 0.01 and the like: if x * 10^k rounds to an integer r
    // and r / 10^k reads back as x, x is written with at most k decimals.
    if (x.k == json_number::kind::float64 && n.multiple_of_scale > 0) {
      const double scale = powers_of_ten[n.multiple_of_scale];
      const double r = std::nearbyint(x.d * scale);
      if (std::fabs(r) < 9007199254740992.0 && r / scale == x.d) return true;
    }
    return is_multiple_of(x, n.multiple_of_decimal);
  }

  bool check_string(const node& n, std::string_view s) {
    bool valid = true;
    if (n.min_length != 0 || n.max_length != no_limit) {
      // A code point takes one to four bytes: count them only when the byte
      // length leaves the answer open.
      const std::uint64_t most = s.size(), least = (s.size() + 3) / 4;
      std::uint64_t length = most;
      if (!(least >= n.min_length && most <= n.max_length) && most >= n.min_length && least <= n.max_length) {
        length = count_code_points(s);
      }
      if (length < n.min_length) {
        valid = false;
        if (!fail("minLength", LLMDLQ_MESSAGE("must be at least {} long, found {}", counted(n.min_length, "character"),
                                              count_code_points(s)))) {
          return false;
        }
      } else if (length > n.max_length) {
        valid = false;
        if (!fail("maxLength", LLMDLQ_MESSAGE("must be at most {} long, found {}", counted(n.max_length, "character"),
                                              count_code_points(s)))) {
          return false;
        }
      }
    }
    if (n.pattern != no_index) {
      const ecma_regex& re = prog_.regexes[n.pattern];
      const regex_match m = search(re, s);
      if (m != regex_match::match) {
        valid = false;
        if (!fail("pattern", [&] {
              return m == regex_match::no_match
                         ? fmt::format("must match the pattern {}", re.pattern())
                         : fmt::format("matching the pattern {} exceeded its budget", re.pattern());
            })) {
          return false;
        }
      }
    }
    if (n.format != format_kind::unknown && !matches_format(n.format, s)) {
      valid = false;
      if (!fail("format", LLMDLQ_MESSAGE("is not a valid {}", name_of(n.format)))) return false;
    }
    return valid;
  }

  bool check_array(const node& n, value v, small_bitset* marks) {
    bool valid = true;
    const std::size_t size = View::size(v);
    return check_item_count(n, size, valid) && check_items(n, v, size, marks, valid) &&
           check_contains(n, v, marks, valid) && check_unique_items(n, v, size, valid) && valid;
  }

  LLMDLQ_ALWAYS_INLINE bool check_item_count(const node& n, std::size_t size, bool& valid) {
    if (size < n.min_items) {
      valid = false;
      if (!fail("minItems", LLMDLQ_MESSAGE("must have at least {}, found {}", counted(n.min_items, "item"), size))) {
        return false;
      }
    }
    if (size > n.max_items) {
      valid = false;
      if (!fail("maxItems", LLMDLQ_MESSAGE("must have at most {}, found {}", counted(n.max_items, "item"), size))) {
        return false;
      }
    }
    return true;
  }

  // prefixItems and items (items and additionalItems before 2020-12).
  LLMDLQ_ALWAYS_INLINE bool check_items(const node& n, value v, std::size_t size, small_bitset* marks, bool& valid) {
    if (n.prefix_items.count == 0 && n.items == no_node) return true;
    if constexpr (!Collect) {
      if (n.prefix_items.count == 0) {
        if (!items_pass(prog_.nodes[n.items], v)) {
          valid = false;
          return false;
        }
        if (marks) marks->set_range(0, size);
        return true;
      }
    }
    const bool completed = View::for_each_element(v, [&](std::size_t i, value element) LLMDLQ_INLINE_LAMBDA {
      const bool in_prefix = i < n.prefix_items.count;
      const node_id schema = in_prefix ? prog_.children[n.prefix_items.begin + i] : n.items;
      if (schema == no_node) return false;  // past prefixItems, no `items`: nothing to do
      const bool items_array = n.spelling & detail::items_array;
      const char* rest = items_array ? "additionalItems" : "items";
      if (!in_prefix && is_false_schema(schema)) {
        step s(this, rest);
        s.instance(i);
        valid = false;
        return fail_at_step(rest,
                            LLMDLQ_MESSAGE("no item is allowed at index {} (at most {})", i, n.prefix_items.count));
      }
      const node& child = prog_.nodes[schema];
      if (passes_quietly(child, element)) return true;
      step s = in_prefix ? step(this, items_array ? "items" : "prefixItems", i) : step(this, rest);
      s.instance(i);
      if (evaluate(child, element, nullptr)) return true;
      valid = false;
      return keep_going();
    });
    if (!completed && !valid && !keep_going()) return false;
    if (marks) {
      marks->set_range(0, std::min<std::size_t>(size, n.prefix_items.count));
      if (n.items != no_node) marks->set_range(n.prefix_items.count, size);
    }
    return true;
  }

  // Every element against one schema, on the yes/no path: a chain of plain
  // references is followed once for all of them.
  bool items_pass(const node& schema, value v) {
    if (!is_plain_ref(schema)) {
      return View::for_each_element(v, [&](std::size_t, value element)
                                           LLMDLQ_INLINE_LAMBDA { return evaluate(schema, element, nullptr); });
    }
    std::size_t refs = 0;
    const node& target = follow_plain_refs(schema, refs);
    return View::for_each_element(v, [&](std::size_t, value element) LLMDLQ_INLINE_LAMBDA {
      ++ctx_.steps;  // the reference itself, as evaluate() counts it
      return evaluate_followed(target, refs, element, nullptr);
    });
  }

  // contains, minContains and maxContains.
  LLMDLQ_ALWAYS_INLINE bool check_contains(const node& n, value v, small_bitset* marks, bool& valid) {
    if (n.contains == no_node) return true;
    std::uint64_t matches = 0;
    const bool count_all = marks != nullptr || n.max_contains != no_limit;
    View::for_each_element(v, [&](std::size_t i, value element) {
      if (test(n.contains, element, nullptr)) {
        ++matches;
        if (marks) marks->set(i);
      }
      return count_all || matches < n.min_contains;
    });
    if (matches < n.min_contains) {
      valid = false;
      return fail(n.min_contains == 1 ? "contains" : "minContains",
                  LLMDLQ_MESSAGE("must contain at least {}, found {}", counted(n.min_contains, "matching item"),
                                 matches));
    }
    if (matches > n.max_contains) {
      valid = false;
      return fail("maxContains", LLMDLQ_MESSAGE("must contain at most {}, found {}",
                                                counted(n.max_contains, "matching item"), matches));
    }
    return true;
  }

  LLMDLQ_ALWAYS_INLINE bool check_unique_items(const node& n, value v, std::size_t size, bool& valid) {
    if (!n.unique_items || size <= 1) return true;
    const auto duplicate = find_duplicate(v, size);
    if (!duplicate) return true;
    valid = false;
    return fail("uniqueItems", LLMDLQ_MESSAGE("items {} and {} are equal", duplicate->first, duplicate->second));
  }

  // The first pair of equal elements, by hashing: linear on average instead
  // of comparing every pair.
  std::optional<std::pair<std::size_t, std::size_t>> find_duplicate(value v, std::size_t size) {
    std::vector<value> elements;
    elements.reserve(size);
    View::for_each_element(v, [&](std::size_t, value e) {
      elements.push_back(e);
      return true;
    });
    // The pair reported is the first repeat: the smallest second index, and
    // the first element equal to it.
    if (size <= 16) {
      for (std::size_t b = 1; b < size; ++b) {
        for (std::size_t a = 0; a < b; ++a) {
          ++ctx_.steps;
          if (json_equal<View, View>(elements[a], elements[b])) return std::pair(a, b);
        }
      }
      return std::nullopt;
    }
    // In index order, each element is compared only with the first
    // occurrences of the distinct values that share its hash, and the scan
    // stops at the first repeat: linear expected, however many are equal.
    // The first occurrences sit in one open-addressing table, at most half full.
    struct first_occurrence {
      std::uint64_t hash = 0;
      std::size_t index_plus_one = 0;  // 0: an empty slot
    };
    const std::size_t capacity = std::bit_ceil(2 * size);
    const int shift = 64 - std::countr_zero(capacity);  // a slot from the hash's high bits, mixed
    std::vector<first_occurrence> table(capacity);
    for (std::size_t b = 0; b < size; ++b) {
      const std::uint64_t hash = json_hash<View>(elements[b]);
      ++ctx_.steps;
      std::size_t slot = static_cast<std::size_t>((hash * 0x9E3779B97F4A7C15u) >> shift);
      for (; table[slot].index_plus_one != 0; slot = (slot + 1) & (capacity - 1)) {
        if (table[slot].hash != hash) continue;
        ++ctx_.steps;
        const std::size_t a = table[slot].index_plus_one - 1;
        if (json_equal<View, View>(elements[a], elements[b])) return std::pair(a, b);
      }
      table[slot] = {hash, b + 1};
    }
    return std::nullopt;
  }

  bool check_object(const node& n, value v, small_bitset* marks) {
    bool valid = true;
    if (!check_property_count(n, View::size(v), valid)) return false;
    const key_table* keys = n.keys != no_index ? &prog_.key_tables[n.keys] : nullptr;
    presence_set present(n.presence_bits);
    std::uint32_t hint = 0;
    if constexpr (!Collect) {
      // The common shape (properties, required, additionalProperties) on the
      // fast path: a tight loop that stops at the first failure.
      if (n.pattern_properties.empty() && n.property_names == no_node && marks == nullptr) {
        return members_pass(n, v, keys, present, hint) && check_object_names(n, v, marks, present);
      }
    }
    if (keys || !n.pattern_properties.empty() || n.additional_properties != no_node || n.property_names != no_node) {
      const bool completed = View::for_each_member(v, [&](std::size_t i, std::string_view key,
                                                          value member) LLMDLQ_INLINE_LAMBDA {
        bool matched = false;
        if (!check_property(keys, present, hint, key, member, matched, valid)) return false;
        if (!n.pattern_properties.empty() && !check_pattern_properties(n, key, member, matched, valid)) return false;
        if (!check_additional_property(n, key, member, matched, valid)) return false;
        matched = matched || n.additional_properties != no_node;
        if (matched && marks) marks->set(i);
        return check_property_name(n, key, valid);
      });
      if (!completed) return false;
    }
    return check_object_names(n, v, marks, present) && valid;
  }

  LLMDLQ_ALWAYS_INLINE bool check_property_count(const node& n, std::size_t size, bool& valid) {
    if (size < n.min_properties) {
      valid = false;
      if (!fail("minProperties", LLMDLQ_MESSAGE("must have at least {}, found {}",
                                                counted(n.min_properties, "property", "properties"), size))) {
        return false;
      }
    }
    if (size > n.max_properties) {
      valid = false;
      if (!fail("maxProperties", LLMDLQ_MESSAGE("must have at most {}, found {}",
                                                counted(n.max_properties, "property", "properties"), size))) {
        return false;
      }
    }
    return true;
  }

  // Whether every member passes properties and additionalProperties: the
  // yes/no walk stops at the first that does not.
  LLMDLQ_ALWAYS_INLINE bool members_pass(const node& n, value v, const key_table* keys, presence_set& present,
                                         std::uint32_t& hint) {
    const node_id additional = n.additional_properties;  // read once: stores in the loop could alias the node
    return View::for_each_member(v, [&](std::size_t, std::string_view key, value member) LLMDLQ_INLINE_LAMBDA {
      if (keys) {
        if (const key_table::entry* e = keys->find(key, hint)) {
          present.add(*e);
          if (e->schema_node) return evaluate(*e->schema_node, member, nullptr);
        }
      }
      return additional == no_node || evaluate(prog_.nodes[additional], member, nullptr);
    });
  }

  // properties: the member's own schema, when it has one.
  LLMDLQ_ALWAYS_INLINE bool check_property(const key_table* keys, presence_set& present, std::uint32_t& hint,
                                           std::string_view key, value member, bool& matched, bool& valid) {
    if (!keys) return true;
    const key_table::entry* e = keys->find(key, hint);
    if (!e) return true;
    present.add(*e);
    matched = e->schema != no_node;
    if (!matched || passes_quietly(*e->schema_node, member)) return true;
    step s(this, "properties", key);
    s.instance(key);
    const node& child = *e->schema_node;
    if (child.flags & always_false) {
      valid = false;
      return fail_at_step("properties", LLMDLQ_MESSAGE("property '{}' is not allowed", key));
    }
    if (evaluate(child, member, nullptr)) return true;
    valid = false;
    return keep_going();
  }

  LLMDLQ_ALWAYS_INLINE bool check_pattern_properties(const node& n, std::string_view key, value member, bool& matched,
                                                     bool& valid) {
    for (const auto& [regex, schema] : n.pattern_properties) {
      const regex_match m = search(prog_.regexes[regex], key);
      if (m == regex_match::no_match) continue;
      step s(this, "patternProperties", prog_.regexes[regex].pattern());
      s.instance(key);
      if (m == regex_match::budget_exceeded) {
        valid = false;
        if (!fail_at_step("patternProperties",
                          [] { return "matching the property name exceeded the pattern's budget"; })) {
          return false;
        }
        continue;
      }
      matched = true;
      if (!passes_quietly(prog_.nodes[schema], member) && !evaluate(schema, member, nullptr)) {
        valid = false;
        if (!keep_going()) return false;
      }
    }
    return true;
  }

  LLMDLQ_ALWAYS_INLINE bool check_additional_property(const node& n, std::string_view key, value member, bool matched,
                                                      bool& valid) {
    const node_id additional = n.additional_properties;
    if (matched || additional == no_node || passes_quietly(prog_.nodes[additional], member)) return true;
    step s(this, "additionalProperties");
    s.instance(key);
    if (is_false_schema(additional)) {
      valid = false;
      return fail_at_step("additionalProperties", LLMDLQ_MESSAGE("property '{}' is not allowed", key));
    }
    if (evaluate(additional, member, nullptr)) return true;
    valid = false;
    return keep_going();
  }

  LLMDLQ_ALWAYS_INLINE bool check_property_name(const node& n, std::string_view key, bool& valid) {
    if (n.property_names == no_node || name_is_valid(n.property_names, key)) return true;
    step s(this, "propertyNames");
    valid = false;
    return fail_at_step("propertyNames", LLMDLQ_MESSAGE("property name '{}' is not allowed", key));
  }

  // required, dependentRequired and dependentSchemas, once the members are known.
  LLMDLQ_ALWAYS_INLINE bool check_object_names(const node& n, value v, small_bitset* marks,
                                               const presence_set& present) {
    bool valid = true;
    if (!present.has_all(n.required_mask)) {
      // Not a structured binding: clang before 16 cannot capture one in the message's lambda.
      for (const auto& property : n.required) {
        if (present.test(property.first)) continue;
        valid = false;
        if (!fail("required", LLMDLQ_MESSAGE("missing required property '{}'", property.second))) return false;
      }
    }
    for (const auto& rule : n.dependent_required) {
      if (!present.test(rule.trigger_bit)) continue;
      for (const auto& property : rule.required) {
        if (present.test(property.first)) continue;
        const char* keyword = n.spelling & dependencies_keyword ? "dependencies" : "dependentRequired";
        step s(this, keyword, rule.trigger);
        valid = false;
        if (!fail_at_step(keyword,
                          LLMDLQ_MESSAGE("property '{}' requires property '{}'", rule.trigger, property.second))) {
          return false;
        }
      }
    }
    for (const auto& rule : n.dependent_schemas) {
      if (!present.test(rule.trigger_bit)) continue;
      step s(this, n.spelling & dependencies_keyword ? "dependencies" : "dependentSchemas", rule.trigger);
      if (!evaluate(rule.schema, v, marks)) {
        valid = false;
        if (!keep_going()) return false;
      }
    }
    return valid;
  }

  bool name_is_valid(node_id schema, std::string_view key) {
    evaluator<key_view<View::valid_utf8>, false> names(ctx_, nullptr);
    return names.evaluate(schema, key, nullptr);
  }

  // Each check_* below returns whether the walk goes on (false: stop, the
  // verdict is known) and clears `valid` when its keyword fails.
  bool check_combinators(const node& n, instance_kind k, value v, small_bitset* marks) {
    bool valid = true;
    return check_all_of(n, v, marks, valid) && check_any_of(n, k, v, marks, valid) &&
           check_one_of(n, k, v, marks, valid) && check_not(n, v, valid) && check_if(n, k, v, marks, valid) && valid;
  }

  LLMDLQ_ALWAYS_INLINE bool check_all_of(const node& n, value v, small_bitset* marks, bool& valid) {
    for (std::uint32_t i = 0; i < n.all_of.count; ++i) {
      step s(this, "allOf", i);
      if (!evaluate(prog_.children[n.all_of.begin + i], v, marks)) {
        valid = false;
        if (!keep_going()) return false;
      }
    }
    return true;
  }

  // The branches of a union an instance of kind `k` is tried against: all
  // of them, or of a tagged union (union_dispatch.hpp) the one its tag names.
  struct branch_range {
    std::uint32_t first, end;
  };
  LLMDLQ_ALWAYS_INLINE branch_range branches_to_try(node_span span, std::uint32_t dispatch, instance_kind k, value v) {
    if (dispatch == no_index || k != instance_kind::object) return {0, span.count};
    const std::uint32_t chosen = dispatched_branch<View>(prog_.dispatches[dispatch], v);
    if (chosen == every_branch) return {0, span.count};
    if (chosen == no_branch) return {0, 0};
    return {chosen, chosen + 1};
  }

  // Whether a union's branch can accept a value of kind `k` (node::admits);
  // one that cannot would fail it, and is not tried. But for a schema with a
  // defect: a defective node admits nothing, and reaching it must fail the validation.
  LLMDLQ_ALWAYS_INLINE bool may_match(node_id branch, instance_kind k) const noexcept {
    return (prog_.nodes[branch].admits & kind_bits[static_cast<std::size_t>(k)]) != 0 || !prog_.defects.empty();
  }

  LLMDLQ_ALWAYS_INLINE bool check_any_of(const node& n, instance_kind k, value v, small_bitset* marks, bool& valid) {
    if (n.any_of.count == 0) return true;
    bool matched = false;
    const branch_range tried = branches_to_try(n.any_of, n.any_of_dispatch, k, v);
    for (std::uint32_t i = tried.first; i < tried.end; ++i) {
      const node_id branch = prog_.children[n.any_of.begin + i];
      if (!may_match(branch, k)) continue;
      if (marks && annotates(branch, k)) {
        // Annotations from every passing branch count: no short cut.
        small_bitset branch_marks(marks->size());
        if (test(branch, v, &branch_marks)) {
          matched = true;
          marks->merge(branch_marks);
        }
      } else if (!matched && test(branch, v, nullptr)) {
        matched = true;
        if (!marks) break;
      }
    }
    if (matched) return true;
    valid = false;
    step s(this, "anyOf");
    return fail_at_step("anyOf", [&] {
      return n.any_of.count == 1 ? std::string("must match the schema in anyOf")
                                 : fmt::format("must match at least one of the {} schemas in anyOf", n.any_of.count);
    });
  }

  LLMDLQ_ALWAYS_INLINE bool check_one_of(const node& n, instance_kind k, value v, small_bitset* marks, bool& valid) {
    if (n.one_of.count == 0) return true;
    std::uint32_t matches = 0, first = 0, second = 0;
    const branch_range tried = branches_to_try(n.one_of, n.one_of_dispatch, k, v);
    for (std::uint32_t i = tried.first; i < tried.end && matches < 2; ++i) {
      const node_id branch = prog_.children[n.one_of.begin + i];
      if (!may_match(branch, k)) continue;
      small_bitset branch_marks;
      const bool track = marks && annotates(branch, k);
      if (track) branch_marks.resize(marks->size());
      if (test(branch, v, track ? &branch_marks : nullptr)) {
        (matches == 0 ? first : second) = i;
        ++matches;
        if (track) marks->merge(branch_marks);
      }
    }
    if (matches == 1) return true;
    valid = false;
    step s(this, "oneOf");
    return fail_at_step("oneOf", [&] {
      return matches == 0 ? n.one_of.count == 1 ? std::string("must match the schema in oneOf")
                                                : fmt::format("must match exactly one of the {} schemas in oneOf, "
                                                              "matched none",
                                                              n.one_of.count)
                          : fmt::format("must match exactly one schema in oneOf, matched {} and {}", first, second);
    });
  }

  LLMDLQ_ALWAYS_INLINE bool check_not(const node& n, value v, bool& valid) {
    if (n.not_schema == no_node || !test(n.not_schema, v, nullptr)) return true;
    valid = false;
    step s(this, "not");
    return fail_at_step("not", [] { return "must not match the schema in not"; });
  }

  LLMDLQ_ALWAYS_INLINE bool check_if(const node& n, instance_kind k, value v, small_bitset* marks, bool& valid) {
    if (n.if_schema == no_node) return true;
    small_bitset if_marks;
    const bool track = marks && annotates(n.if_schema, k);
    if (track) if_marks.resize(marks->size());
    const bool condition = test(n.if_schema, v, track ? &if_marks : nullptr);
    if (condition && track) marks->merge(if_marks);
    const node_id branch = condition ? n.then_schema : n.else_schema;
    if (branch == no_node) return true;
    step s(this, condition ? "then" : "else");
    if (evaluate(branch, v, marks)) return true;
    valid = false;
    return keep_going();
  }

  bool check_unevaluated(const node& n, instance_kind k, value v, small_bitset& own) {
    bool valid = true;
    if (k == instance_kind::array) {
      const node_id schema = n.unevaluated_items;
      const bool completed = View::for_each_element(v, [&](std::size_t i, value element) {
        if (own.test(i) || passes_quietly(prog_.nodes[schema], element)) return true;
        step s(this, "unevaluatedItems");
        s.instance(i);
        if (is_false_schema(schema)) {
          valid = false;
          return fail_at_step("unevaluatedItems", LLMDLQ_MESSAGE("item {} is not allowed by any subschema", i));
        }
        if (!evaluate(schema, element, nullptr)) {
          valid = false;
          return keep_going();
        }
        return true;
      });
      if (!completed) return false;
    } else {
      const node_id schema = n.unevaluated_properties;
      const bool completed = View::for_each_member(v, [&](std::size_t i, std::string_view key, value member) {
        if (own.test(i) || passes_quietly(prog_.nodes[schema], member)) return true;
        step s(this, "unevaluatedProperties");
        s.instance(key);
        if (is_false_schema(schema)) {
          valid = false;
          return fail_at_step("unevaluatedProperties",
                              LLMDLQ_MESSAGE("property '{}' is not allowed by any subschema", key));
        }
        if (!evaluate(schema, member, nullptr)) {
          valid = false;
          return keep_going();
        }
        return true;
      });
      if (!completed) return false;
    }
    own.set_range(0, own.size());
    return valid;
  }

  template <class, bool>
  friend class evaluator;

  eval_context& ctx_;
  const program& prog_;
  error_sink* sink_;
};

#undef LLMDLQ_MESSAGE

}  // namespace detail
LLMDLQ_END_NAMESPACE
