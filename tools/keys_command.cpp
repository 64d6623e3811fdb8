// SPDX-License-Identifier: MIT
// `llmdlq keys`: the key directory that seals the originals (generate,
// use, shred, list).
#include <iostream>

#include <fmt/format.h>
#include <llmdlq/crypto/file_key_provider.hpp>

#include "cli.hpp"
#include "commands.hpp"

namespace llmdlq::cli {
namespace {

constexpr std::string_view usage =
    "usage: llmdlq keys generate ID [--not-current] --keys DIR\n"
    "       llmdlq keys use ID --keys DIR\n"
    "       llmdlq keys shred ID --keys DIR\n"
    "       llmdlq keys list --keys DIR\n"
    "  generate: a new random key ID (DIR is created 0700, the key file 0600); new texts are sealed\n"
    "            with it unless --not-current.\n"
    "  use:      new texts are sealed with key ID.\n"
    "  shred:    destroys key ID for good and leaves a tombstone: every text sealed with it becomes\n"
    "            unreadable (re-seal what must survive first: llmdlq rekey). Not the current key.\n"
    "  list:     the keys, which is current, which are shredded.\n"
    "  Exit 0 on success, 1 when the keys refuse (an id in use, shredded or unknown), 2 for usage errors.\n";

}  // namespace

int keys_command(arguments args) {
  std::string_view action;
  std::string_view id;
  std::string keys;
  bool make_current = true;
  while (!args.done()) {
    const std::string_view arg = args.take();
    if (arg == "--help" || arg == "-h") {
      std::cout << usage;
      return exit_ok;
    }
    if (arg == "--keys") {
      const auto value = args.value_of(arg);
      if (!value) return exit_usage;
      keys = *value;
    } else if (arg == "--not-current") {
      make_current = false;
    } else if (action.empty() && !arg.starts_with("-")) {
      action = arg;
    } else if (id.empty() && !arg.starts_with("-")) {
      id = arg;
    } else {
      complain("keys", "unexpected argument " + std::string(arg));
      std::cerr << usage;
      return exit_usage;
    }
  }
  const bool wants_id = action == "generate" || action == "use" || action == "shred";
  if (keys.empty() || !(wants_id || action == "list") || wants_id == id.empty()) {
    complain("keys", "give an action, its key id when it takes one, and --keys DIR");
    std::cerr << usage;
    return exit_usage;
  }
  if (action == "list") {
    auto listed = file_key_provider::list(keys);
    if (!listed) {
      complain("keys", describe(listed.error()));
      return exit_invalid;
    }
    for (const auto& key : *listed) {
      std::cout << fmt::format("{}{}\n", key.id, key.shredded ? "  shredded" : key.current ? "  current" : "");
    }
    return exit_ok;
  }
  auto done = action == "generate" ? file_key_provider::generate(keys, id, make_current)
              : action == "use"    ? file_key_provider::make_current(keys, id)
                                   : file_key_provider::shred(keys, id);
  if (!done) {
    complain("keys", fmt::format("{} {}: {}", action, id, done.error().message));
    return exit_invalid;
  }
  return exit_ok;
}

}  // namespace llmdlq::cli
