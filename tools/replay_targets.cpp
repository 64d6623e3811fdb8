// SPDX-License-Identifier: MIT
#include "replay_targets.hpp"

#include <cstdlib>
#include <utility>

#include <llmdlq/stores/open.hpp>

namespace llmdlq::cli {

std::string allowlist_of(std::string_view given) {
  if (!given.empty()) return std::string(given);
  const char* env = std::getenv("LLMDLQ_REPLAY_ALLOWLIST");
  return env != nullptr ? env : "";
}

expected<store_spec, std::string> allowed_target_spec(std::string_view to, std::string_view allowlist) {
  auto spec = llmdlq::parse_store_spec(to, replay_target_kinds);
  if (!spec) return unexpected("--to wants " + store_forms(replay_target_kinds));
  const std::string list = allowlist_of(allowlist);
  if (list.empty()) {
    return unexpected(std::string("--to needs an allowlist of targets (--allowlist FILE or $LLMDLQ_REPLAY_ALLOWLIST)"));
  }
  auto allowed = llmdlq::allowed_target(*spec, list);
  if (!allowed) return unexpected(std::move(allowed.error().message));
  return std::move(*allowed);
}

expected<std::unique_ptr<replay_target>, std::string> open_allowed_target(const store_spec& allowed) {
  // The allowlist matched this spec, its file resolved: it is opened as it is.
  auto target = llmdlq::open_target(allowed);
  if (!target) return unexpected(std::move(target.error().message));
  return std::move(*target);
}

}  // namespace llmdlq::cli
