// SPDX-License-Identifier: MIT
// The compiled form of a schema: a flat table of nodes that refer to each
// other by index, with per-node lookups prepared for the evaluator.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/json/value.hpp>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/schema/json_number.hpp"
#include "llmdlq/format.hpp"
#include "llmdlq/regex.hpp"
#include "llmdlq/schema.hpp"
#include "llmdlq/validation_error.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

using node_id = std::uint32_t;
inline constexpr node_id no_node = std::numeric_limits<node_id>::max();
inline constexpr std::uint32_t no_index = std::numeric_limits<std::uint32_t>::max();
inline constexpr std::uint64_t no_limit = std::numeric_limits<std::uint64_t>::max();

/// Bits of node::types; `number` admits every number, `integer` only integral ones.
enum type_bit : std::uint8_t {
  null_bit = 1,
  boolean_bit = 2,
  object_bit = 4,
  array_bit = 8,
  number_bit = 16,
  string_bit = 32,
  integer_bit = 64,
};

/// Every kind of value, as type_bits (`integer` is a kind of `number`).
inline constexpr std::uint8_t every_kind = null_bit | boolean_bit | object_bit | array_bit | number_bit | string_bit;

/// The type_bits of each instance_kind (instance.hpp), in its order.
inline constexpr std::uint8_t kind_bits[] = {null_bit, boolean_bit, number_bit, string_bit, array_bit, object_bit};

/// Groups of keywords a node holds, so that evaluation skips the rest.
enum node_flag : std::uint32_t {
  always_false = 1u << 0,
  has_type = 1u << 1,
  has_const = 1u << 2,
  has_enum = 1u << 3,
  has_number_keywords = 1u << 4,
  has_string_keywords = 1u << 5,
  has_array_keywords = 1u << 6,
  has_object_keywords = 1u << 7,
  has_ref = 1u << 8,
  has_dynamic_ref = 1u << 9,
  has_combinators = 1u << 10,  // allOf, anyOf, oneOf, not, if
  has_unevaluated_items = 1u << 11,
  has_unevaluated_properties = 1u << 12,
  // Computed after compilation: the node, or a subschema applied in place,
  // records which members or elements it evaluated.
  annotates_properties = 1u << 13,
  annotates_items = 1u << 14,
  has_content_rules = 1u << 15,  // x-dlq-rule: checked only when validation is given a time
  // With always_false: the node stands for a reference that cannot be
  // evaluated, and program::defects[node::defect] says why.
  broken_reference = 1u << 16,
  // Computed after compilation: an array node whose one subschema is a leaf
  // `items` ({"items": {"type": "number"}}); yes/no checks take its elements
  // in one loop.
  leaf_items = 1u << 17,
  // Computed after compilation: the node is only an anyOf or oneOf whose
  // branches admit disjoint kinds; program::kind_dispatches[node::kind_dispatch]
  // names the one branch a value of each kind can match.
  kind_dispatched = 1u << 18,
};

/// Bits of node::spelling: the node holds keywords older drafts spell otherwise,
/// and errors name them as the schema wrote them.
enum spelling_bit : std::uint8_t {
  items_array = 1,           ///< prefix_items came from an `items` array, items from `additionalItems`
  dependencies_keyword = 2,  ///< dependent_required and dependent_schemas came from `dependencies`
};

/// Content rules a schema can name with `x-dlq-rule`.
enum class content_rule : std::uint8_t {
  not_future,  ///< a date or date-time no later than now
  not_past,    ///< a date or date-time no earlier than now
};

/// Nodes with only these flags are leaves, checked without recursion.
inline constexpr std::uint32_t leaf_flags = has_type | has_const | has_enum | has_number_keywords |
                                            has_string_keywords | has_content_rules;

/// Index range into program::children.
struct node_span {
  std::uint32_t begin = 0;
  std::uint32_t count = 0;
};

/// A numeric bound and whether it is present.
struct number_bound {
  bool present = false;
  json_number value;
};

struct node;

namespace key_bytes {

template <class Word>
inline Word load(const char* p) noexcept {
  Word w;
  std::memcpy(&w, p, sizeof w);
  return w;
}

/// Equality of two `n`-byte strings with a few overlapping word loads: object
/// keys are short, and a call to memcmp would cost more than the comparison.
LLMDLQ_ALWAYS_INLINE bool equal(const char* a, const char* b, std::size_t n) noexcept {
  if (n >= 8) {
    if (n > 16) return std::memcmp(a, b, n) == 0;
    return load<std::uint64_t>(a) == load<std::uint64_t>(b) &&
           load<std::uint64_t>(a + n - 8) == load<std::uint64_t>(b + n - 8);
  }
  if (n >= 4) {
    return load<std::uint32_t>(a) == load<std::uint32_t>(b) &&
           load<std::uint32_t>(a + n - 4) == load<std::uint32_t>(b + n - 4);
  }
  if (n >= 2) {
    return load<std::uint16_t>(a) == load<std::uint16_t>(b) &&
           load<std::uint16_t>(a + n - 2) == load<std::uint16_t>(b + n - 2);
  }
  return n == 0 || a[0] == b[0];
}

/// A cheap hash reading at most the first and last eight bytes, with
/// fixed-size loads only; a collision costs one comparison.
LLMDLQ_ALWAYS_INLINE std::uint64_t hash(const char* p, std::size_t n) noexcept {
  std::uint64_t head, tail;
  if (n >= 8) {
    head = load<std::uint64_t>(p);
    tail = load<std::uint64_t>(p + n - 8);
  } else if (n >= 4) {
    head = load<std::uint32_t>(p);
    tail = load<std::uint32_t>(p + n - 4);
  } else if (n != 0) {
    head = static_cast<unsigned char>(p[0]) | static_cast<unsigned char>(p[n / 2]) << 8;
    tail = static_cast<unsigned char>(p[n - 1]);
  } else {
    head = tail = 0;
  }
  const std::uint64_t h = (head * 0x9E3779B97F4A7C15ull) ^ (tail * 0xC2B2AE3D27D4EB4Full) ^ n;
  return h ^ (h >> 29);
}

}  // namespace key_bytes

/// Maps object keys a schema names (in properties, required, dependent*) to
/// what it knows about them. Open addressing over a cheap hash of the key.
class key_table {
 public:
  struct entry {
    std::string name;
    node_id schema = no_node;           ///< from `properties`
    std::uint32_t bit = no_index;       ///< presence bit, for required/dependent* names
    const node* schema_node = nullptr;  ///< `schema` resolved, once the program is complete
    std::uint64_t presence_mask = 0;    ///< `bit` as a mask when below 64, else 0
    bool plain = false;                 ///< no quote or backslash in `name`: a JSON text writes it as it is
  };

  /// A new entry for `name`, which no entry has yet.
  entry& add(std::string_view name) {
    entries_.push_back(entry{std::string(name), no_node, no_index});
    return entries_.back();
  }

  /// The entry for `name`, created if new.
  entry& at(std::string_view name) {
    for (auto& e : entries_) {
      if (e.name == name) return e;
    }
    entries_.push_back(entry{std::string(name), no_node, no_index});
    return entries_.back();
  }

  /// Builds the lookup once every entry is in.
  void seal() {
    std::size_t capacity = 4;
    while (capacity < entries_.size() * 2) capacity *= 2;
    slots_.assign(capacity, no_index);
    mask_ = capacity - 1;
    count_ = static_cast<std::uint32_t>(entries_.size());
    for (auto& e : entries_) e.plain = e.name.find_first_of("\"\\") == std::string::npos;
    for (std::uint32_t i = 0; i < entries_.size(); ++i) {
      std::size_t slot = key_bytes::hash(entries_[i].name.data(), entries_[i].name.size()) & mask_;
      while (slots_[slot] != no_index) slot = (slot + 1) & mask_;
      slots_[slot] = i;
    }
  }

  [[nodiscard]] LLMDLQ_ALWAYS_INLINE const entry* find(std::string_view key) const noexcept {
    std::size_t slot = key_bytes::hash(key.data(), key.size()) & mask_;
    for (;;) {
      const std::uint32_t index = slots_[slot];
      if (index == no_index) return nullptr;
      if (matches(entries_[index], key)) return &entries_[index];
      slot = (slot + 1) & mask_;
    }
  }

  /// find(), trying first the entry after the one `hint` names: documents
  /// tend to list keys in the schema's order, which then costs no hashing.
  /// `hint` is updated to follow the entry found.
  [[nodiscard]] LLMDLQ_ALWAYS_INLINE const entry* find(std::string_view key, std::uint32_t& hint) const noexcept {
    if (hint < count_ && matches(entries_[hint], key)) return &entries_[hint++];
    const entry* found = find(key);
    if (found) hint = static_cast<std::uint32_t>(found - entries_.data()) + 1;
    return found;
  }

  /// The entry after the one `hint` names when the raw string at `begin`
  /// is its name, closed by the quote right before `limit`: a key read in
  /// place, its end never searched for. `hint` then follows it. For an
  /// indexed text, whose strings stage 1 found closed and valid UTF-8.
  [[nodiscard]] LLMDLQ_ALWAYS_INLINE const entry* expected_at(const char* begin, const char* limit,
                                                              std::uint32_t& hint) const noexcept {
    if (hint >= count_) return nullptr;
    const entry& e = entries_[hint];
    const std::size_t n = e.name.size();
    if (static_cast<std::size_t>(limit - begin) != n + 1 || begin[n] != '"' || !e.plain ||
        !key_bytes::equal(begin, e.name.data(), n)) {
      return nullptr;
    }
    ++hint;
    return &e;
  }

  [[nodiscard]] const std::vector<entry>& entries() const noexcept { return entries_; }

  /// Points every entry at its node, and sets presence masks; `nodes` must
  /// no longer move.
  void resolve(const std::vector<node>& nodes) noexcept;
  [[nodiscard]] bool empty() const noexcept { return entries_.empty(); }

 private:
  LLMDLQ_ALWAYS_INLINE static bool matches(const entry& e, std::string_view key) noexcept {
    return e.name.size() == key.size() && key_bytes::equal(e.name.data(), key.data(), key.size());
  }

  std::vector<entry> entries_;
  std::vector<std::uint32_t> slots_;
  std::size_t mask_ = 0;
  std::uint32_t count_ = 0;
};

/// One `dependentRequired` rule: when `trigger` is present, every `required` bit must be.
struct dependent_required_rule {
  std::uint32_t trigger_bit;
  std::string trigger;
  std::vector<std::pair<std::uint32_t, std::string>> required;
};

/// One `dependentSchemas` rule.
struct dependent_schema_rule {
  std::uint32_t trigger_bit;
  std::string trigger;
  node_id schema;
};

/// A compiled subschema. Absent keywords keep their neutral defaults.
struct node {
  std::uint32_t flags = 0;
  std::uint8_t types = 0;
  /// The kinds of value (type_bits, without integer_bit) the node can
  /// accept at most, through its type, const, enum and in-place subschemas;
  /// a value of any other kind fails it (see forward_plan.hpp).
  std::uint8_t admits = every_kind;
  std::uint32_t resource = 0;  ///< the schema resource the node belongs to

  // In-place applicators.
  node_id ref = no_node;
  node_id dynamic_ref = no_node;            ///< the statically resolved target
  std::uint32_t dynamic_anchor = no_index;  ///< anchor name id when the target is a $dynamicAnchor
  bool recursive_ref = false;               ///< dynamic_ref is a 2019-09 `$recursiveRef`
  std::uint8_t spelling = 0;                ///< spelling_bit: keywords of older drafts, for error paths
  node_span all_of, any_of, one_of;
  /// Index into program::dispatches when anyOf / oneOf is a tagged union.
  std::uint32_t any_of_dispatch = no_index, one_of_dispatch = no_index;
  std::uint32_t kind_dispatch = no_index;  ///< index into program::kind_dispatches, with kind_dispatched
  node_id not_schema = no_node, if_schema = no_node, then_schema = no_node, else_schema = no_node;

  // const and enum.
  std::uint32_t const_value = no_index;  ///< index into program::values
  std::uint32_t enum_set = no_index;     ///< index into program::enums

  // Numbers.
  number_bound minimum, maximum, exclusive_minimum, exclusive_maximum;
  /// The four bounds as one closed interval of doubles, when every bound is a
  /// double or an integer a double holds exactly (exclusive bounds moved to
  /// the next double): the fast check for any number a double holds exactly.
  bool has_interval = false;
  double interval_low = 0, interval_high = 0;
  bool has_multiple_of = false;
  json_number multiple_of;
  decimal multiple_of_decimal;
  int multiple_of_scale = 0;  ///< k when multipleOf is 10^-k (0.01: 2), else 0

  // Strings.
  std::uint64_t min_length = 0, max_length = no_limit;
  std::uint32_t pattern = no_index;  ///< index into program::regexes
  format_kind format = format_kind::unknown;
  std::vector<content_rule> content_rules;

  // Arrays.
  std::uint64_t min_items = 0, max_items = no_limit;
  bool unique_items = false;
  node_span prefix_items;
  node_id items = no_node, contains = no_node, unevaluated_items = no_node;
  std::uint64_t min_contains = 1, max_contains = no_limit;

  // Objects.
  std::uint64_t min_properties = 0, max_properties = no_limit;
  std::uint32_t keys = no_index;  ///< index into program::key_tables
  std::uint32_t presence_bits = 0;
  std::vector<std::pair<std::uint32_t, std::string>> required;  ///< (presence bit, name)
  std::uint64_t required_mask = 0;                              ///< presence bits of `required`, when all are below 64
  std::vector<std::pair<std::uint32_t, node_id>> pattern_properties;  ///< (regex, schema)
  node_id additional_properties = no_node, property_names = no_node, unevaluated_properties = no_node;
  std::vector<dependent_required_rule> dependent_required;
  std::vector<dependent_schema_rule> dependent_schemas;

  std::uint32_t defect = no_index;  ///< index into program::defects, with broken_reference
};

/// A place the schema compiled with a warning and cannot be evaluated.
struct reference_defect {
  schema_defect kind = schema_defect::none;
  std::string keyword;   ///< the keyword that holds the reference ($ref, allOf, ...)
  std::string location;  ///< where it is, as schema_error::location writes it
  std::string message;   ///< why it cannot be evaluated
};

/// An anyOf or oneOf whose branches each require their own string at one
/// property, their tag (see union_dispatch.hpp).
struct union_dispatch {
  std::string property;
  key_table tags;                     ///< each branch's tag
  std::vector<std::uint32_t> branch;  ///< by entry of `tags`: the branch's index in the union
};

/// A union whose branches admit disjoint kinds: by instance_kind, the one
/// branch that can match a value of that kind, or no_node.
using kind_dispatch = std::array<node_id, std::size(kind_bits)>;

/// An `enum` keyword's values; all-string enums get a hash lookup.
struct enum_values {
  std::vector<boost::json::value> values;
  bool all_strings = false;
  key_table strings;
};

/// A schema resource (the root, or a subschema with `$id`) and the
/// `$dynamicAnchor`s it defines, which `$dynamicRef` searches by dynamic scope.
struct schema_resource {
  std::string uri;
  std::vector<std::pair<std::uint32_t, node_id>> dynamic_anchors;  ///< (anchor name id, node)
  node_id recursive_anchor = no_node;                              ///< the root, when it has "$recursiveAnchor": true
};

inline void key_table::resolve(const std::vector<node>& nodes) noexcept {
  for (auto& e : entries_) {
    e.schema_node = e.schema == no_node ? nullptr : &nodes[e.schema];
    e.presence_mask = e.bit < 64 ? std::uint64_t(1) << e.bit : 0;
  }
}

struct program {
  std::vector<node> nodes;
  std::vector<node_id> children;
  std::vector<key_table> key_tables;
  std::vector<ecma_regex> regexes;
  std::vector<boost::json::value> values;
  std::vector<enum_values> enums;
  std::vector<union_dispatch> dispatches;
  std::vector<kind_dispatch> kind_dispatches;
  std::vector<schema_resource> resources;
  bool uses_dynamic_scope = false;
  /// Whether schema::is_valid_text reads an object or array at the root in
  /// one forward pass: no container can meet a keyword that pass leaves to
  /// the tape evaluator (see forward_plan.hpp). Otherwise it parses at once.
  bool forward_pass = true;
  std::uint32_t dynamic_anchor_names = 0;  ///< how many distinct `$dynamicAnchor` names there are
  node_id root = no_node;
  dialect root_dialect = dialect::draft2020_12;
  std::vector<std::string> warnings;
  std::vector<reference_defect> defects;  ///< what broken_reference nodes stand for
  compile_options options;
  std::string fingerprint;          ///< SHA-256 of the schema's JSON, as Boost.JSON serializes it
  std::vector<pii_path> pii_paths;  ///< the properties marked x-llmdlq-pii
};

}  // namespace detail
LLMDLQ_END_NAMESPACE
