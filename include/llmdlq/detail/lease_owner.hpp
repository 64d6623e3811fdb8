// SPDX-License-Identifier: MIT
// Who holds a lease when the host names no one: this host and process.
#pragma once

#include <unistd.h>

#include <string>

#include <fmt/format.h>

#include "llmdlq/config.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail {

/// `<host name>:<pid>`.
[[nodiscard]] inline std::string default_lease_owner() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  return fmt::format("{}:{}", host, ::getpid());
}

}  // namespace detail
LLMDLQ_END_NAMESPACE
