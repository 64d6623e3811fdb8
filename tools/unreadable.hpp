// SPDX-License-Identifier: MIT
// How a command reports the records it skipped because they do not read
// back: each on stderr with its dlq_id and why, and as JSON.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <fmt/format.h>
#include <llmdlq/detail/store/record_check.hpp>
#include <llmdlq/moderation_record.hpp>

#include "cli.hpp"

namespace llmdlq::cli {

/// A dlq_id as a command prints it: a stored one may hold anything.
inline std::string printable_id(std::string_view dlq_id) { return detail::store::printable(dlq_id, 128); }

/// "llmdlq <command>: <dlq_id> does not read back: <reason>" for each of
/// `named`, and how many more were counted when `count` is larger.
inline void report_unreadable(std::string_view command, std::span<const unreadable_record> named, std::uint64_t count) {
  for (const auto& r : named) {
    complain(command, fmt::format("{} does not read back: {}", printable_id(r.dlq_id), r.reason));
  }
  if (count > named.size()) {
    complain(command, fmt::format("{} more records do not read back", count - named.size()));
  }
}

/// `[{"dlq_id", "reason"}, ...]`.
inline boost::json::array unreadable_json(std::span<const unreadable_record> named) {
  boost::json::array out;
  for (const auto& r : named) out.push_back(boost::json::object{{"dlq_id", r.dlq_id}, {"reason", r.reason}});
  return out;
}

/// exit_ok when `count` is 0, else exit_unreadable.
inline int exit_for_unreadable(std::uint64_t count) { return count == 0 ? exit_ok : exit_unreadable; }

}  // namespace llmdlq::cli
