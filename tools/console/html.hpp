// SPDX-License-Identifier: MIT
// The one way record text reaches an HTML page or report.
#pragma once

#include <string>
#include <string_view>

namespace llmdlq::cli {

/// `text` made safe as HTML element content and as a quoted attribute value:
/// & < > " ' become character references, and each byte that does not start
/// valid UTF-8 (and NUL) becomes U+FFFD, so no stored byte can end a tag,
/// an attribute, a <textarea> or the page's encoding.
std::string html_escape(std::string_view text);

}  // namespace llmdlq::cli
