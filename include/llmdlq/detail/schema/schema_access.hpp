// SPDX-License-Identifier: MIT
// The compiled program behind a schema, for llmdlq's own tools that read it
// (coercion looks up enum values) and the tests that count its work; not part
// of the API.
#pragma once

#include <cstdint>

#include <boost/json/value.hpp>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/schema/evaluator.hpp"
#include "llmdlq/detail/schema/schema_program.hpp"
#include "llmdlq/schema.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

struct schema_access {
  static const program& of(const schema& s) noexcept { return *s.program_; }
};

/// The evaluator's work (eval_context::steps) to judge `instance`: with
/// `collect`, as validate() does, collecting up to `max_errors` errors.
inline std::uint64_t evaluation_steps(const schema& s, const boost::json::value& instance, bool collect,
                                      std::size_t max_errors = 32) {
  const program& prog = schema_access::of(s);
  eval_context context(prog);
  if (!collect) {
    evaluator<boost_view, false> eval(context, nullptr);
    (void)eval.evaluate(prog.root, &instance, nullptr);
    return context.steps;
  }
  std::vector<validation_error> errors;
  error_sink sink{errors, max_errors, {}, {}};
  evaluator<boost_view, true> eval(context, &sink);
  (void)eval.evaluate(prog.root, &instance, nullptr);
  return context.steps;
}

}  // namespace detail
LLMDLQ_END_NAMESPACE
