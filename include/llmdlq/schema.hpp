// SPDX-License-Identifier: MIT
// JSON Schema (drafts 4, 6, 7, 2019-09 and 2020-12), compiled once into an
// immutable validator.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <simdjson.h>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/error_category.hpp"
#include "llmdlq/dialect.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/fwd.hpp"
#include "llmdlq/json_parser.hpp"
#include "llmdlq/pii_path.hpp"
#include "llmdlq/regex.hpp"
#include "llmdlq/timestamp.hpp"
#include "llmdlq/validation_error.hpp"

LLMDLQ_BEGIN_NAMESPACE

namespace detail {
struct program;
struct schema_access;
}  // namespace detail

/// Why a schema could not be compiled.
enum class schema_errc : std::uint8_t {
  invalid_json,            ///< the schema text is not JSON (see schema_error::syntax)
  invalid_keyword,         ///< a keyword's value is not what the schema's draft allows
  invalid_pattern,         ///< a `pattern` or `patternProperties` regex does not compile
  unresolved_reference,    ///< a reference's target is neither local nor found (with refuse_broken_references)
  unsupported_vocabulary,  ///< the meta-schema requires a vocabulary llmdlq does not implement
  infinite_recursion,      ///< references loop without ever descending into the instance (idem)
  too_complex,             ///< the schema nests deeper, or compiles to more nodes, than the compiler's limits
  unknown_dialect,         ///< `$schema` names a meta-schema that is neither a draft nor a document found
};

namespace detail {
template <>
struct errc_table<schema_errc> {
  static constexpr const char* category = "llmdlq.schema";
  static constexpr std::string_view unknown = "unknown";
  static constexpr errc_entry<schema_errc> entries[] = {
      {schema_errc::invalid_json, "invalid_json", false, "the schema is not JSON"},
      {schema_errc::invalid_keyword, "invalid_keyword", false, "a keyword has a value JSON Schema does not allow"},
      {schema_errc::invalid_pattern, "invalid_pattern", false, "a regular expression does not compile"},
      {schema_errc::unresolved_reference, "unresolved_reference", false, "a reference cannot be resolved"},
      {schema_errc::unsupported_vocabulary, "unsupported_vocabulary", false,
       "the meta-schema requires an unknown vocabulary"},
      {schema_errc::infinite_recursion, "infinite_recursion", false,
       "references loop without descending into the instance"},
      {schema_errc::too_complex, "too_complex", false, "the schema nests too deeply or compiles to too many nodes"},
      {schema_errc::unknown_dialect, "unknown_dialect", false, "$schema names an unknown meta-schema"},
  };
};
}  // namespace detail

/// The enumerator's name ("unresolved_reference"); describe() is the
/// message() of its std::error_code (std::is_error_code_enum is specialised
/// in fwd.hpp), whose category is named "llmdlq.schema".
[[nodiscard]] constexpr std::string_view to_string(schema_errc code) noexcept { return detail::errc_name(code); }

/// A compile error and the schema location it concerns.
struct schema_error {
  schema_errc code = schema_errc::invalid_keyword;
  /// Where the problem is: a JSON Pointer into the root schema (`/properties/total/minimum`),
  /// prefixed with the document's URI when it is in a registered remote schema.
  std::string location;
  std::string message;
  /// The parse error, for schema_errc::invalid_json.
  std::optional<syntax_error> syntax;
};

/// How a schema is compiled.
struct compile_options {
  /// The draft of a schema resource without `$schema` (the root, and remote
  /// documents it refers to).
  dialect default_dialect = dialect::draft2020_12;
  /// A `$schema` naming a meta-schema that is neither a known draft nor a
  /// document `remotes` or `resolver` gives is schema_errc::unknown_dialect;
  /// with this set, the resource is compiled in `default_dialect` and
  /// schema::warnings() says so.
  bool allow_unknown_dialect = false;
  /// Treat `format` as an assertion (validation fails on a mismatch) rather
  /// than the annotation every draft's suite makes it by default.
  bool format_assertion = false;
  /// Other schemas a `$ref` may name, by absolute URI (without fragment).
  std::map<std::string, std::string, std::less<>> remotes;
  /// Asked for a URI that is neither in the schema nor in `remotes`: returns
  /// that document's JSON text, or nothing. Called only while compiling.
  std::function<std::optional<std::string>(std::string_view uri)> resolver;
  /// A directory of schemas that refer to each other, searched (after
  /// `remotes` and `resolver`) for a URI the schema does not hold: by each
  /// file's `$id` (`id` in draft 4), then by file name, the longest tail of
  /// the URI's path that names a file under the directory (so
  /// `"$ref": "common/address.json"` finds DIR/common/address.json). Files
  /// are read once per compile; nothing is fetched from a network.
  std::string catalog_directory;
  /// How `pattern` and `patternProperties` are read: by default also the
  /// web-compatible syntax real schemas write (`\-`, `\_`, `[\w-.]`, see regex_syntax).
  regex_syntax pattern_syntax = regex_syntax::web_compatible;
  /// The retrieval URI of the root schema, against which a root without
  /// `$id` resolves its relative references.
  std::string base_uri;
  /// A `$ref` (`$dynamicRef`, `$recursiveRef`) whose target neither the
  /// schema nor `remotes`, `resolver` or `catalog_directory` holds, and
  /// subschemas that apply each other in place in a loop that never
  /// descends into the value, compile by default, as the reference
  /// validators do (they resolve lazily): schema::warnings() names each, and
  /// an instance whose evaluation reaches one fails with a validation_error
  /// whose `defect` says which (never a pass, however it is reached). With
  /// this set they are compile errors: unresolved_reference and infinite_recursion.
  bool refuse_broken_references = false;
  /// Largest nesting of subschemas accepted; deeper schemas are rejected as too_complex.
  std::size_t max_nesting = 256;
  /// Largest number of compiled subschemas; a schema that needs more is too_complex.
  /// Each subschema compiles once however many references reach it.
  std::size_t max_nodes = 1'000'000;
};

/// Caps on a validation that collects errors.
struct validate_options {
  /// At most this many errors are returned; evaluation stops once reached.
  std::size_t max_errors = 32;
  /// When the first `max_errors` errors are all `format` or content-rule
  /// errors, evaluation goes on past the cap, keeping none of the others,
  /// until it finds a structural error, and appends that one: the list then
  /// tells a schema failure from a semantic one whatever the cap.
  bool find_structural = false;
  /// The time `x-dlq-rule` content rules (`not-future`, `not-past`) are
  /// judged against. Without it they are skipped: they are llmdlq's
  /// extension, not JSON Schema.
  std::optional<timestamp> now;
};

/// A compiled JSON Schema, in the draft its `$schema` names (each resource its own).
///
/// Compile once, validate many times: a schema is immutable, thread-safe and
/// cheap to copy (copies share the compiled program). Validation walks a
/// document from json_parser (the fast path: it reads simdjson's tape, and
/// nothing is copied or allocated for a valid document), any simdjson
/// element, or a Boost.JSON value, with the same result on all three.
///
/// \code
///   auto schema = llmdlq::schema::compile(R"({"type":"object","required":["total"]})");
///   llmdlq::json_parser parser;
///   auto doc = parser.parse(R"({"total": 12.5})");
///   bool ok = schema && doc && schema->is_valid(*doc);
/// \endcode
class schema {
 public:
  /// Compiles a schema from its JSON text. Linear in the size of the schema
  /// and of the remote schemas it references.
  [[nodiscard]] static LLMDLQ_INLINE expected<schema, schema_error> compile(std::string_view json,
                                                                            const compile_options& options = {});

  /// (A string literal is schema text, not a JSON string value.)
  [[nodiscard]] static expected<schema, schema_error> compile(const char* json, const compile_options& options = {}) {
    return compile(std::string_view(json), options);
  }
  [[nodiscard]] static expected<schema, schema_error> compile(const std::string& json,
                                                              const compile_options& options = {}) {
    return compile(std::string_view(json), options);
  }

  /// Compiles a schema already held as a Boost.JSON value.
  [[nodiscard]] static LLMDLQ_INLINE expected<schema, schema_error> compile(const boost::json::value& json,
                                                                            const compile_options& options = {});

  /// Yes or no, stopping at the first failure: the fast path.
  [[nodiscard]] LLMDLQ_INLINE bool is_valid(const json_document& instance) const;
  /// The same, with content rules judged at `options.now` (max_errors is unused).
  [[nodiscard]] LLMDLQ_INLINE bool is_valid(const json_document& instance, const validate_options& options) const;
  [[nodiscard]] LLMDLQ_INLINE bool is_valid(simdjson::dom::element instance) const;
  [[nodiscard]] LLMDLQ_INLINE bool is_valid(const boost::json::value& instance) const;

  /// Parses and validates JSON text in one pass, building no document:
  /// simdjson's structural index is read forward and each value checked
  /// against its subschema as it is met, stopping at the first failure. The
  /// verdict is always that of json_parser(limits).parse(json) followed by
  /// is_valid(), which is what runs when the pass cannot tell (the text is
  /// not JSON, or a container meets a keyword that must see it twice:
  /// combinators, uniqueItems, contains, patternProperties, unevaluated*).
  ///
  /// \code
  ///   bool ok = schema->is_valid_text(R"({"total": 12.5})");
  /// \endcode
  [[nodiscard]] LLMDLQ_INLINE bool is_valid_text(std::string_view json, const validate_options& options = {},
                                                 const parse_options& limits = {}) const;
  /// The same, reading the text in place when it carries simdjson's padding.
  [[nodiscard]] LLMDLQ_INLINE bool is_valid_text(simdjson::padded_string_view json,
                                                 const validate_options& options = {},
                                                 const parse_options& limits = {}) const;

  /// Every reason (up to the cap) the instance fails, in a deterministic order;
  /// empty when it is valid.
  [[nodiscard]] LLMDLQ_INLINE std::vector<validation_error> validate(const json_document& instance,
                                                                     const validate_options& options = {}) const;
  [[nodiscard]] LLMDLQ_INLINE std::vector<validation_error> validate(simdjson::dom::element instance,
                                                                     const validate_options& options = {}) const;
  [[nodiscard]] LLMDLQ_INLINE std::vector<validation_error> validate(const boost::json::value& instance,
                                                                     const validate_options& options = {}) const;

  /// The draft of the root schema resource.
  [[nodiscard]] LLMDLQ_INLINE llmdlq::dialect dialect() const noexcept;

  /// What the compiler accepted but a reader should know, one line each:
  /// an unknown meta-schema compiled as `default_dialect` (with
  /// allow_unknown_dialect), a reference that cannot be resolved and an
  /// in-place reference loop (see refuse_broken_references), each with
  /// its location.
  [[nodiscard]] LLMDLQ_INLINE const std::vector<std::string>& warnings() const noexcept;

  /// The options this schema was compiled with.
  [[nodiscard]] LLMDLQ_INLINE const compile_options& options() const noexcept;

  /// The SHA-256 (hex) of the schema's JSON as Boost.JSON serializes it:
  /// the same schema text gives the same fingerprint on every machine.
  [[nodiscard]] LLMDLQ_INLINE std::string_view fingerprint() const noexcept;

  /// The places in a document that the schema marks `"x-llmdlq-pii": true`
  /// (or a label) on a property, through `properties`, `items`,
  /// `additionalProperties`, combinators and local `$ref`s: the redactor
  /// replaces their values whatever they hold.
  [[nodiscard]] LLMDLQ_INLINE const std::vector<pii_path>& pii_paths() const noexcept;

 private:
  friend struct detail::schema_access;
  explicit schema(std::shared_ptr<const detail::program> program) noexcept : program_(std::move(program)) {}

  std::shared_ptr<const detail::program> program_;
};

/// A one-line English description of `code`, also the message() of its
/// std::error_code.
[[nodiscard]] LLMDLQ_INLINE std::string_view describe(schema_errc code) noexcept;

LLMDLQ_END_NAMESPACE

#ifdef LLMDLQ_HEADER_ONLY
#include "llmdlq/impl/schema.ipp"
#include "llmdlq/impl/schema_compiler.ipp"
#endif
