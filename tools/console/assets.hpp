// SPDX-License-Identifier: MIT
// The console's stylesheet and script, served from /assets; the HTML report
// embeds the same stylesheet.
#pragma once

#include <string_view>

namespace llmdlq::cli {

extern const std::string_view console_stylesheet;
/// Submits the queue's filter form when a filter changes; nothing else.
extern const std::string_view console_script;

}  // namespace llmdlq::cli
