// SPDX-License-Identifier: MIT
// The one way record text reaches an HTML page or report.
#pragma once

#include <string>
#include <string_view>

namespace llmdlq::cli {

/// `text` made safe as HTML element content and as a quoted attribute value:
/// & < > " ' become character references, and each byte that does not start
/// valid UTF-8 becomes U+FFFD, so no stored byte can end a tag, an attribute,
/// a <textarea> or the page's encoding. A character a browser would draw as
/// nothing or that reorders the text around it (controls other than tab and
/// line breaks, format characters such as bidi overrides and zero-width
/// spaces, the line and paragraph separators) becomes its JSON escape as
/// text, `\u202E`, so no record can hide or disguise what an operator reads.
std::string html_escape(std::string_view text);

}  // namespace llmdlq::cli
