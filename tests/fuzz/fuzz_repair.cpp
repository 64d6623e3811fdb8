// SPDX-License-Identifier: MIT
// Fuzzing local repair: valid JSON comes back untouched, what comes out is
// strict JSON that repair leaves alone, the actions describe spans of the
// input in order and replay to the output, and the default tiers never let a
// lossy repair through.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include <llmdlq/json_parser.hpp>
#include <llmdlq/repair.hpp>

#include "../support/repair_replay.hpp"

namespace {

void check_error(const llmdlq::repair_error& e, std::size_t size) {
  if (e.offset > size || e.message.empty()) std::abort();
}

/// The actions are in order, inside the text, and replay to the output.
void check_actions(std::string_view raw, const llmdlq::repair_result& r) {
  const std::size_t size = raw.size();
  bool cut = false;
  std::size_t last = 0;
  for (const auto& a : r.actions) {
    if (a.begin > a.end || a.end > size || a.code.empty() || a.begin < last) std::abort();
    last = a.begin;
    cut = cut || a.code == "truncated";
  }
  if (cut != r.truncated) std::abort();
  const auto replayed = llmdlq::test::replay(raw, r.actions);
  if (!replayed || *replayed != r.json) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view raw(reinterpret_cast<const char*>(data), size);
  llmdlq::repair_options all;
  all.allowed = {llmdlq::repair_tier::lossless, llmdlq::repair_tier::syntactic, llmdlq::repair_tier::lossy};
  all.max_bytes = 1 << 20;
  all.max_depth = 64;
  llmdlq::parse_options strict;
  strict.max_size = all.max_bytes;
  strict.max_depth = all.max_depth;

  const bool valid = !llmdlq::check_syntax(raw, strict);
  const auto repaired = llmdlq::repair(raw, all);
  if (valid && (!repaired || repaired->json != raw || !repaired->actions.empty())) std::abort();
  if (repaired) {
    if (llmdlq::check_syntax(repaired->json, strict)) std::abort();
    check_actions(raw, *repaired);
    const auto again = llmdlq::repair(repaired->json, all);
    if (!again || again->json != repaired->json || !again->actions.empty() || again->truncated) std::abort();
  } else {
    check_error(repaired.error(), size);
  }

  // The default tiers, with the same limits: a subset of what all tiers fix.
  llmdlq::repair_options safe;
  safe.max_bytes = all.max_bytes;
  safe.max_depth = all.max_depth;
  const auto guarded = llmdlq::repair(raw, safe);
  if (guarded) {
    if (!repaired || guarded->json != repaired->json) std::abort();
    check_actions(raw, *guarded);
    for (const auto& a : guarded->actions) {
      if (a.tier == llmdlq::repair_tier::lossy) std::abort();
    }
  } else {
    check_error(guarded.error(), size);
  }
  return 0;
}
