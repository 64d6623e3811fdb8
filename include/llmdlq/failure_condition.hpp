// SPDX-License-Identifier: MIT
// What an llmdlq error code says about trying the same call again, as a
// std::error_condition a host can compare any of them with.
#pragma once

#include <string>
#include <system_error>
#include <type_traits>

#include "llmdlq/config.hpp"

LLMDLQ_BEGIN_NAMESPACE

/// Whether a failed call can succeed if it is made again unchanged. The
/// error codes of the enums with an is_permanent() (sink_errc,
/// moderation_errc, kafka_errc, redis_errc) compare equal to the one their
/// is_permanent() names; other codes compare equal to neither.
///
/// \code
/// std::error_code ec = error.code;  // a sink_error's code, say
/// if (ec == llmdlq::failure_condition::permanent) send_to_fallback();
/// \endcode
enum class failure_condition : int {
  permanent = 1,  ///< the same call can never succeed: the options, the data or the server must change
  transient = 2,  ///< the same call may succeed later
};

namespace detail {

class failure_condition_domain final : public std::error_category {
 public:
  [[nodiscard]] const char* name() const noexcept override { return "llmdlq.failure"; }
  [[nodiscard]] std::string message(int value) const override {
    switch (static_cast<failure_condition>(value)) {
      case failure_condition::permanent: return "permanent: the same call can never succeed";
      case failure_condition::transient: return "transient: the same call may succeed later";
    }
    return "unknown condition";
  }
};

}  // namespace detail

/// The category of failure_condition, named "llmdlq.failure"; one object per
/// program, header-only or compiled.
[[nodiscard]] inline const std::error_category& failure_condition_category() noexcept {
  static const detail::failure_condition_domain instance;
  return instance;
}

/// Found by argument-dependent lookup when a failure_condition becomes a
/// std::error_condition.
[[nodiscard]] inline std::error_condition make_error_condition(failure_condition condition) noexcept {
  return {static_cast<int>(condition), failure_condition_category()};
}

LLMDLQ_END_NAMESPACE

template <>
struct std::is_error_condition_enum<llmdlq::failure_condition> : std::true_type {};
