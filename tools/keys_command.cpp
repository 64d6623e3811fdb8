// SPDX-License-Identifier: MIT
// `llmdlq keys`: the key directory that seals the originals (generate,
// use, shred, list).
#include <iostream>

#include <fmt/format.h>
#include <llmdlq/crypto/file_key_provider.hpp>

#include "cli.hpp"
#include "commands.hpp"
#include "options.hpp"

namespace llmdlq::cli {
namespace {

constexpr option options[] = {
    {"--keys", option_kind::value, "DIR", "the key directory; required"},
    {"--not-current", option_kind::flag, "", "generate: do not seal new texts with the new key"},
};
constexpr operand operands[] = {{"ACTION", "give an action, its key id when it takes one, and --keys DIR"},
                                {"ID", ""}};

const command_syntax syntax{
    .command = "keys",
    .operands = operands,
    .groups = {group("", options)},
    .about = "  llmdlq keys generate ID [--not-current] --keys DIR\n"
             "  llmdlq keys use ID --keys DIR\n"
             "  llmdlq keys shred ID --keys DIR\n"
             "  llmdlq keys list --keys DIR\n"
             "  generate: a new random key ID (DIR is created 0700, the key file 0600); new texts are sealed\n"
             "            with it unless --not-current.\n"
             "  use:      new texts are sealed with key ID.\n"
             "  shred:    destroys key ID for good and leaves a tombstone: every text sealed with it becomes\n"
             "            unreadable (re-seal what must survive first: llmdlq rekey). Not the current key.\n"
             "  list:     the keys, which is current, which are shredded.\n",
    .stores = "",
    .closing = "Exit 0 on success, 1 when the keys refuse (an id in use, shredded or unknown), 2 for usage errors.\n",
};

}  // namespace

int keys_command(arguments args) {
  const auto parsed = parse_arguments(syntax, args);
  if (!parsed) return parsed.error();
  const std::string_view action = parsed->operand(0);
  const std::string_view id = parsed->operand(1);
  const std::string keys(parsed->value("--keys").value_or(""));
  const bool make_current = !parsed->has("--not-current");
  const bool wants_id = action == "generate" || action == "use" || action == "shred";
  if (keys.empty() || !(wants_id || action == "list") || wants_id == id.empty()) {
    return usage_error(syntax, "give an action, its key id when it takes one, and --keys DIR");
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
