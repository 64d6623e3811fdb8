// SPDX-License-Identifier: MIT
// The schema followed down a JSON text as it arrives (json_prefix's
// listener): for each value, the subschemas that certainly apply to it,
// and the first byte after which one of them must fail whatever follows.
//
// A subschema certainly applies when it is reached through `properties`,
// `additionalProperties` (no `patternProperties` beside it), `prefixItems`,
// `items`, `$ref` and `allOf` alone. The branches of anyOf, oneOf, not and
// if/then/else, dynamic references and unevaluated* decide nothing here:
// only the whole document can. What is checked, on the subschemas that
// certainly apply:
//   - at a value's first byte: `false`, and `type` (integer or number for
//     any number);
//   - at a leaf's last byte: every keyword of a subschema made of leaf
//     keywords only (type, const, enum, number and string keywords), as the
//     validator checks them;
//   - at a key's closing quote: a name `additionalProperties: false` forbids;
//   - at an element's or member's first byte: maxItems, maxProperties.
// A failure of one of them is a failure of the document, so the prefix is
// dead, and error() is what the validator says of it in the whole document.
// Content rules (which read the clock) wait for the whole document.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/schema/evaluator.hpp"
#include "llmdlq/detail/schema/instance.hpp"
#include "llmdlq/detail/schema/schema_program.hpp"
#include "llmdlq/detail/json/prefix_scanner.hpp"
#include "llmdlq/json_parser.hpp"
#include "llmdlq/validation_error.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail::stream {

class schema_tracker {
 public:
  /// The subschemas a set holds at most: past it, the rest decide nothing early.
  static constexpr std::size_t max_sure = 64;

  /// `null_members_pass`: a member whose value is null is not judged here,
  /// as the whole may take it out (the nulls a provider's schema forced).
  explicit schema_tracker(const program& prog, bool null_members_pass = false)
      : prog_(&prog), leaf_parser_(leaf_limits()), null_members_pass_(null_members_pass) {
    if (prog.root != no_node) add_closure(pending_, prog.root);
  }

  /// The text so far: leaves and keys are read back from it.
  void see(std::string_view text) noexcept { text_ = text; }

  [[nodiscard]] bool dead() const noexcept { return !why_.empty(); }
  [[nodiscard]] std::size_t dead_at() const noexcept { return dead_at_; }
  [[nodiscard]] const std::string& why() const noexcept { return why_; }
  [[nodiscard]] const std::string& where() const noexcept { return where_; }
  /// Whether the failure is a format's: the document's category is then semantic.
  [[nodiscard]] bool semantic() const noexcept { return semantic_; }
  /// The failure as validation reports it of the whole document (its
  /// instance and schema paths, keyword and words).
  [[nodiscard]] const validation_error& error() const noexcept { return error_; }
  /// For a failure of a string, number or literal, or of a key: the byte
  /// after it, where a reader less strict than JSON (local repair) might
  /// still read the token on (an unescaped quote, strings joined by `+`), so
  /// the failure is certain only once the next byte that is not a blank
  /// closes it (`,`, `}` or `]`, or `:` after a key). npos for the rest,
  /// which are certain where they are found.
  [[nodiscard]] std::size_t token_end() const noexcept { return token_end_; }
  [[nodiscard]] bool key_failed() const noexcept { return key_failed_; }
  /// For a failure of the text's own value at its first byte: that byte
  /// (`{` or `[`), as a reader less strict than JSON takes the text for one
  /// value only once the byte after it is one JSON allows there; 0 for the rest.
  [[nodiscard]] char root_failed() const noexcept { return root_failed_; }

  // json_prefix's listener.
  bool element_begins(std::size_t at) {
    frame& f = frames_[depth_ - 1];
    const std::size_t index = f.count++;
    f.key_begin = f.key_end = 0;  // an element: its index is count - 1
    pending_.clear();
    for (const node* n : f.sure) {
      if ((n->flags & has_array_keywords) == 0) continue;
      if (f.count > n->max_items) {
        return fail(at, fmt::format("more than {} item{} (maxItems)", n->max_items, n->max_items == 1 ? "" : "s"),
                    "maxItems", failing::container);
      }
      if (index < n->prefix_items.count) {
        add_closure(pending_, prog_->children[n->prefix_items.begin + index]);
      } else if (n->items != no_node) {
        add_closure(pending_, n->items);
      }
    }
    return true;
  }

  bool key_begins(std::size_t at) {
    frame& f = frames_[depth_ - 1];
    ++f.count;
    f.key_begin = f.key_end = 0;
    if (null_members_pass_) return true;  // a member counted now may be a null the whole takes out
    for (const node* n : f.sure) {
      if ((n->flags & has_object_keywords) != 0 && f.count > n->max_properties) {
        return fail(at,
                    fmt::format("more than {} propert{} (maxProperties)", n->max_properties,
                                n->max_properties == 1 ? "y" : "ies"),
                    "maxProperties", failing::container);
      }
    }
    return true;
  }

  bool key_ends(std::size_t begin, std::size_t end) {
    frame& f = frames_[depth_ - 1];
    pending_.clear();
    f.key_begin = begin;
    f.key_end = end;
    if (f.sure.empty()) return true;
    const auto key = decoded_key(begin, end);
    if (!key) return true;  // left to the whole-text parser
    for (const node* n : f.sure) {
      if ((n->flags & has_object_keywords) == 0) continue;
      const key_table::entry* entry = n->keys == no_index ? nullptr : prog_->key_tables[n->keys].find(*key);
      if (entry != nullptr && entry->schema != no_node) {
        add_closure(pending_, entry->schema);
        continue;
      }
      if (!n->pattern_properties.empty() || n->additional_properties == no_node) continue;
      if (prog_->nodes[n->additional_properties].flags & always_false) {
        token_end_ = end;
        key_failed_ = true;
        return fail(end - 1, fmt::format("property \"{}\" is not allowed (additionalProperties)", std::string(*key)),
                    "additionalProperties", failing::member);
      }
      add_closure(pending_, n->additional_properties);
    }
    return true;
  }

  bool value_begins(value_kind kind, std::size_t at) {
    if (kind == value_kind::null && null_members_pass_ && depth_ > 0 && frames_[depth_ - 1].object) {
      pending_.clear();
      leaf_.clear();
      return true;
    }
    if (depth_ == 0) {
      token_end_ = at + 1;
      root_failed_ = kind == value_kind::object ? '{' : kind == value_kind::array ? '[' : '\0';
    }
    for (const node* n : pending_) {
      if (n->flags & broken_reference) {
        const reference_defect& d = prog_->defects[n->defect];
        return fail(at, defect_message(d), d.keyword, failing::value, stand_in(kind));
      }
      if (n->flags & always_false) {
        return fail(at, "no value is allowed here (the schema is false)", {}, failing::value, stand_in(kind));
      }
      if ((n->flags & has_type) && (n->types & type_bits(kind)) == 0) {
        return fail(at, fmt::format("a {} where the schema allows {}", name_of(kind), allowed_types(n->types)), "type",
                    failing::value, stand_in(kind));
      }
    }
    token_end_ = std::string_view::npos;
    root_failed_ = '\0';
    if (kind == value_kind::object || kind == value_kind::array) {
      // Frames are kept when closed: their vectors' room serves the next container at that depth.
      if (depth_ == frames_.size()) frames_.emplace_back();
      frame& f = frames_[depth_++];
      f.sure.assign(pending_.begin(), pending_.end());
      f.object = kind == value_kind::object;
      f.count = 0;
      f.key_begin = f.key_end = 0;
    } else {
      leaf_.swap(pending_);
    }
    pending_.clear();
    return true;
  }

  bool leaf_ends(value_kind kind, std::size_t begin, std::size_t end) {
    // A number is known whole only at the byte after it, which json_prefix reads with the call.
    const std::size_t known_at = kind == value_kind::number ? end : end - 1;
    const bool judged = std::any_of(leaf_.begin(), leaf_.end(),
                                    [kind](const node* n) { return is_leaf(*n) && needs_value(*n, kind); });
    if (judged) {
      auto value = parse_alone(text_.substr(begin, end - begin));
      if (value) {
        eval_context context(*prog_);
        evaluator<simdjson_view, false> check(context, nullptr);
        for (const node* n : leaf_) {
          if (is_leaf(*n) && needs_value(*n, kind) && !check.evaluate(*n, value->root(), nullptr)) {
            // Once more, collecting, for the validator's own words.
            std::vector<validation_error> errors;
            error_sink sink{errors, 1, {}, {}};
            evaluator<simdjson_view, true> explain(context, &sink);
            (void)explain.evaluate(*n, value->root(), nullptr);
            const std::string_view leaf = text_.substr(begin, end - begin);
            token_end_ = end;
            if (errors.empty()) return fail(known_at, "the value fails its schema", {}, failing::value, leaf);
            semantic_ = !is_structural_keyword(errors.front().keyword);
            return fail(known_at, errors.front().message + " (" + errors.front().keyword + ")", errors.front().keyword,
                        failing::value, leaf);
          }
        }
      }
    }
    leaf_.clear();
    return true;
  }

  bool container_ends(std::size_t) {
    --depth_;
    return true;
  }

 private:
  struct frame {
    std::vector<const node*> sure;
    bool object = false;
    std::size_t count = 0;                   // elements or members begun
    std::size_t key_begin = 0, key_end = 0;  // the member's key in hand (none: an element, index count - 1)
  };

  static parse_options leaf_limits() noexcept {
    parse_options limits;
    limits.max_size = std::size_t{1} << 40;
    return limits;
  }

  static bool is_leaf(const node& n) noexcept {
    return n.flags != 0 && (n.flags & ~leaf_flags) == 0 && !(n.flags & has_content_rules);
  }

  // Whether judging the complete value against `n` can tell more than its
  // type did at the first byte: anything but a bare type, or a number held
  // to integer.
  static bool needs_value(const node& n, value_kind kind) noexcept {
    if (n.flags != has_type) return true;
    return kind == value_kind::number && (n.types & number_bit) == 0;
  }

  static std::uint8_t type_bits(value_kind kind) noexcept {
    switch (kind) {
      case value_kind::null: return null_bit;
      case value_kind::boolean: return boolean_bit;
      case value_kind::number: return number_bit | integer_bit;
      case value_kind::string: return string_bit;
      case value_kind::array: return array_bit;
      case value_kind::object: return object_bit;
    }
    return 0;
  }

  static std::string_view name_of(value_kind kind) noexcept {
    switch (kind) {
      case value_kind::null: return "null";
      case value_kind::boolean: return "boolean";
      case value_kind::number: return "number";
      case value_kind::string: return "string";
      case value_kind::array: return "array";
      case value_kind::object: return "object";
    }
    return "value";
  }

  static std::string allowed_types(std::uint8_t types) {
    std::string names;
    const std::pair<std::uint8_t, std::string_view> all[] = {
        {null_bit, "null"},     {boolean_bit, "boolean"}, {object_bit, "object"},  {array_bit, "array"},
        {number_bit, "number"}, {string_bit, "string"},   {integer_bit, "integer"}};
    for (const auto& [bit, name] : all) {
      if ((types & bit) == 0) continue;
      if (!names.empty()) names += ", ";
      names += name;
    }
    return names.empty() ? std::string("nothing") : names;
  }

  // `id` and what it applies in place with certainty ($ref, allOf), once each.
  void add_closure(std::vector<const node*>& set, node_id id) {
    todo_.assign(1, id);
    while (!todo_.empty() && set.size() < max_sure) {
      const node& n = prog_->nodes[todo_.back()];
      todo_.pop_back();
      if (std::find(set.begin(), set.end(), &n) != set.end()) continue;
      set.push_back(&n);
      if ((n.flags & has_ref) && n.ref != no_node) todo_.push_back(n.ref);
      for (std::uint32_t i = 0; i < n.all_of.count; ++i) todo_.push_back(prog_->children[n.all_of.begin + i]);
    }
  }

  // A leaf or key alone, from a buffer with simdjson's padding kept from one
  // call to the next: no allocation once it has grown to the longest.
  expected<json_document, syntax_error> parse_alone(std::string_view json) {
    if (scratch_.capacity() < json.size() + simdjson::SIMDJSON_PADDING) {
      scratch_.reserve(json.size() + simdjson::SIMDJSON_PADDING);
    }
    scratch_.assign(json);
    return leaf_parser_.parse(simdjson::padded_string_view(scratch_.data(), json.size(), scratch_.capacity()));
  }

  // A key's JSON string [begin, end) decoded: the bytes between the quotes
  // when it has no escape, else the parser's reading (valid until the next).
  std::optional<std::string_view> decoded_key(std::size_t begin, std::size_t end) {
    const std::string_view inside = text_.substr(begin + 1, end - begin - 2);
    if (inside.find('\\') == std::string_view::npos) return inside;
    auto parsed = parse_alone(text_.substr(begin, end - begin));
    if (!parsed) return std::nullopt;
    std::string_view s;
    if (parsed->root().get_string().get(s)) return std::nullopt;
    return s;
  }

  // What failed: the value in hand, the member whose name is in hand, or
  // the innermost open container.
  enum class failing : std::uint8_t { value, member, container };

  // A value of `kind` for the validator to see where only its first byte is known.
  static std::string_view stand_in(value_kind kind) noexcept {
    switch (kind) {
      case value_kind::null: return "null";
      case value_kind::boolean: return "false";
      case value_kind::number: return "0";
      case value_kind::string: return "\"\"";
      case value_kind::array: return "[]";
      case value_kind::object: return "{}";
    }
    return "null";
  }

  // `value` (JSON text) in the open containers [0, frames) as far as they
  // lead to it: each object with only the member in hand, each array with
  // nulls before the element in hand.
  std::string skeleton(std::size_t frames, std::string_view value) const {
    std::string text, closing;
    for (std::size_t d = 0; d < frames; ++d) {
      const frame& f = frames_[d];
      if (f.object) {
        text.append("{").append(text_.substr(f.key_begin, f.key_end - f.key_begin)).append(":");
      } else {
        text.append("[");
        for (std::size_t i = 1; i < f.count; ++i) text.append("null,");
      }
      closing.push_back(f.object ? '}' : ']');
    }
    text.append(value);
    text.append(closing.rbegin(), closing.rend());
    return text;
  }

  // The failure found at `at` (`why`, of `keyword`), as the validator words
  // it in a document holding what leads to the failing place: the error of
  // the same instance and keyword, or, if it finds none, the tracker's own words.
  bool fail(std::size_t at, std::string why, std::string_view keyword, failing what, std::string_view value = {}) {
    dead_at_ = at;
    why_ = std::move(why);
    const std::size_t frames = what == failing::container ? depth_ - 1 : depth_;
    for (std::size_t d = 0; d < frames; ++d) {
      const frame& f = frames_[d];
      if (!f.object) {
        if (f.count != 0) where_.append("/").append(std::to_string(f.count - 1));
        continue;
      }
      if (f.key_end == 0) continue;  // between members: the object itself
      const auto key = decoded_key(f.key_begin, f.key_end);
      where_.push_back('/');
      for (const char c : key ? *key : std::string_view("?")) {  // RFC 6901
        if (c == '~') {
          where_ += "~0";
        } else if (c == '/') {
          where_ += "~1";
        } else {
          where_.push_back(c);
        }
      }
    }
    error_ = validation_error{where_, {}, std::string(keyword), why_};
    std::string target;
    if (what == failing::member) {
      value = "null";
    } else if (what == failing::container) {
      const frame& f = frames_[depth_ - 1];
      target = f.object ? "{" : "[";
      for (std::size_t i = 0; i < f.count; ++i) {
        if (i != 0) target.push_back(',');
        target.append(f.object ? fmt::format("\"{}\":null", i) : std::string("null"));
      }
      target.push_back(f.object ? '}' : ']');
      value = target;
    }
    auto document = parse_alone(skeleton(frames, value));
    if (!document) return false;
    std::vector<validation_error> errors;
    error_sink sink{errors, std::numeric_limits<std::size_t>::max(), {}, {}};
    eval_context context(*prog_);
    evaluator<simdjson_view, true> explain(context, &sink);
    (void)explain.evaluate(prog_->root, document->root(), nullptr);
    for (auto& e : errors) {
      if (e.instance_path == where_ && (keyword.empty() || e.keyword == keyword)) {
        error_ = std::move(e);
        break;
      }
    }
    return false;
  }

  const program* prog_;
  json_parser leaf_parser_;
  std::string scratch_;  // parse_alone's padded buffer
  std::string_view text_;
  std::vector<frame> frames_;  // frames_[0, depth_) are the open containers
  std::size_t depth_ = 0;
  std::vector<const node*> pending_;  // what applies to the value about to begin
  std::vector<const node*> leaf_;     // what applies to the leaf in hand
  std::vector<node_id> todo_;         // add_closure's work list
  std::size_t dead_at_ = 0;
  std::string why_;
  std::string where_;
  validation_error error_;
  bool null_members_pass_ = false;
  char root_failed_ = '\0';
  std::size_t token_end_ = std::string_view::npos;
  bool key_failed_ = false;
  bool semantic_ = false;
};

}  // namespace detail::stream
LLMDLQ_END_NAMESPACE
