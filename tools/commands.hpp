// SPDX-License-Identifier: MIT
// The `llmdlq` subcommands; each returns the process exit code.
#pragma once

#include <llmdlq/moderation.hpp>

#include "cli.hpp"

namespace llmdlq::cli {

int validate_command(arguments args);
int process_command(arguments args);
int stats_command(arguments args);
int repair_command(arguments args);
int provider_schema_command(arguments args);
int replay_command(arguments args);
int deliver_command(arguments args);
int redrive_command(arguments args);  // with llmdlq::kafka
int eval_command(arguments args);
int purge_command(arguments args);
int rekey_command(arguments args);  // with llmdlq::crypto
int keys_command(arguments args);   // with llmdlq::crypto
int list_command(arguments args);
int show_command(arguments args);
int export_command(arguments args);
int act_command(moderation_action action, arguments args);  // claim, resolve, discard, requeue
int top_command(arguments args);
int report_command(arguments args);
int console_command(arguments args);  // with cpp-httplib

}  // namespace llmdlq::cli
