// SPDX-License-Identifier: MIT
// Definitions for schema.hpp: compilation entry points and the validation
// front ends over the two instance representations.
#pragma once

#include "llmdlq/config.hpp"
#include "llmdlq/detail/schema/evaluator.hpp"
#include "llmdlq/detail/schema/forward_evaluator.hpp"
#include "llmdlq/impl/schema_compiler.ipp"
#include "llmdlq/schema.hpp"

LLMDLQ_BEGIN_NAMESPACE

LLMDLQ_INLINE std::string_view describe(schema_errc code) noexcept {
  return detail::errc_message<schema_errc>(static_cast<int>(code));
}

LLMDLQ_INLINE expected<schema, schema_error> schema::compile(std::string_view json, const compile_options& options) {
  parse_options limits;
  limits.max_depth = 2 * options.max_nesting + 2;  // each subschema level is an object in a keyword
  auto parsed = parse_value(json, limits);
  if (!parsed) {
    if (parsed.error().code == json_errc::too_deep) {
      return unexpected(schema_error{schema_errc::too_complex, "",
                                     "the schema nests deeper than the limit of " + std::to_string(options.max_nesting),
                                     parsed.error()});
    }
    return unexpected(schema_error{schema_errc::invalid_json, "", "the schema is not JSON: " + parsed.error().message,
                                   parsed.error()});
  }
  return compile(*parsed, options);
}

LLMDLQ_INLINE expected<schema, schema_error> schema::compile(const boost::json::value& json,
                                                             const compile_options& options) {
  detail::schema_compiler compiler(options);
  auto program = compiler.run(json);
  if (!program) return unexpected(std::move(program.error()));
  return schema(std::move(*program));
}

namespace detail {

template <class View>
bool is_valid_against(const program& prog, typename View::value instance, std::optional<timestamp> now = std::nullopt) {
  eval_context context(prog, now);
  evaluator<View, false> eval(context, nullptr);
  return eval.evaluate(prog.root, instance, nullptr) && context.defect == no_index;
}

template <class View>
std::vector<validation_error> errors_against(const program& prog, typename View::value instance,
                                             const validate_options& options) {
  std::vector<validation_error> errors;
  if (options.max_errors == 0 && !options.find_structural) return errors;
  eval_context context(prog, options.now);
  error_sink sink{errors, options.max_errors, {}, {}, options.find_structural};
  evaluator<View, true> eval(context, &sink);
  eval.evaluate(prog.root, instance, nullptr);
  if (context.defect != no_index) keep_defect_error(errors, prog.defects[context.defect], options.max_errors);
  return errors;
}

}  // namespace detail

LLMDLQ_INLINE bool schema::is_valid(const json_document& instance) const {
  return detail::is_valid_against<detail::tape_view>(*program_,
                                                     detail::tape_view::root_of(instance.simdjson_document()));
}

LLMDLQ_INLINE bool schema::is_valid(const json_document& instance, const validate_options& options) const {
  return detail::is_valid_against<detail::tape_view>(*program_,
                                                     detail::tape_view::root_of(instance.simdjson_document()),
                                                     options.now);
}

LLMDLQ_INLINE bool schema::is_valid(simdjson::dom::element instance) const {
  return detail::is_valid_against<detail::simdjson_view>(*program_, instance);
}

LLMDLQ_INLINE bool schema::is_valid(const boost::json::value& instance) const {
  return detail::is_valid_against<detail::boost_view>(*program_, &instance);
}

namespace detail {

inline bool is_valid_text(const schema& s, const program& prog, std::string_view json, bool padded,
                          const validate_options& options, const parse_options& limits) {
  switch (judge_text(prog, json, padded, options.now, limits)) {
    case forward_verdict::valid: return true;
    case forward_verdict::invalid: return false;
    case forward_verdict::undecided: break;
  }
  // The tape's parse reads a padded text in place, as a host's own parse would.
  json_parser& parser = thread_checker(limits);
  const auto document = padded ? parser.parse(simdjson::padded_string_view(json.data(), json.size(),
                                                                           json.size() + simdjson::SIMDJSON_PADDING))
                               : parser.parse(json);
  return document && s.is_valid(*document, options);
}

}  // namespace detail

LLMDLQ_INLINE bool schema::is_valid_text(std::string_view json, const validate_options& options,
                                         const parse_options& limits) const {
  return detail::is_valid_text(*this, *program_, json, false, options, limits);
}

LLMDLQ_INLINE bool schema::is_valid_text(simdjson::padded_string_view json, const validate_options& options,
                                         const parse_options& limits) const {
  const bool padded = json.padding() >= simdjson::SIMDJSON_PADDING;
  return detail::is_valid_text(*this, *program_, json, padded, options, limits);
}

LLMDLQ_INLINE std::vector<validation_error> schema::validate(const json_document& instance,
                                                             const validate_options& options) const {
  return detail::errors_against<detail::tape_view>(*program_, detail::tape_view::root_of(instance.simdjson_document()),
                                                   options);
}

LLMDLQ_INLINE std::vector<validation_error> schema::validate(simdjson::dom::element instance,
                                                             const validate_options& options) const {
  return detail::errors_against<detail::simdjson_view>(*program_, instance, options);
}

LLMDLQ_INLINE std::vector<validation_error> schema::validate(const boost::json::value& instance,
                                                             const validate_options& options) const {
  return detail::errors_against<detail::boost_view>(*program_, &instance, options);
}

LLMDLQ_INLINE const compile_options& schema::options() const noexcept { return program_->options; }

LLMDLQ_INLINE dialect schema::dialect() const noexcept { return program_->root_dialect; }

LLMDLQ_INLINE const std::vector<std::string>& schema::warnings() const noexcept { return program_->warnings; }

LLMDLQ_INLINE std::string_view schema::fingerprint() const noexcept { return program_->fingerprint; }

LLMDLQ_INLINE const std::vector<pii_path>& schema::pii_paths() const noexcept { return program_->pii_paths; }

LLMDLQ_END_NAMESPACE
