// SPDX-License-Identifier: MIT
// The console's guards: HTML escaping, the token comparison, sessions and
// their CSRF tokens, the Origin check and the token file.
#include <sys/stat.h>

#include <thread>
#include <vector>

#include <fmt/format.h>

#include "catch.hpp"
#include "console/access.hpp"
#include "console/html.hpp"
#include "support/temp_dir.hpp"

namespace console_access_test {

using namespace llmdlq::cli;
using llmdlq::test::temp_dir;

TEST_CASE("html_escape: markup, quotes and a closing textarea become text", "[console][escape]") {
  CHECK(html_escape("<script>alert(\"x\")</script>") == "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;");
  CHECK(html_escape("</textarea><b>") == "&lt;/textarea&gt;&lt;b&gt;");
  CHECK(html_escape("a' onmouseover='x") == "a&#39; onmouseover=&#39;x");
  CHECK(html_escape("&lt;") == "&amp;lt;");
  CHECK(html_escape("plain text, é and ✓") == "plain text, é and ✓");
}

TEST_CASE("html_escape: invalid UTF-8 becomes U+FFFD, never markup", "[console][escape]") {
  const std::string replacement = "\xEF\xBF\xBD";
  CHECK(html_escape(std::string("\xff\xfe<", 3)) == replacement + replacement + "&lt;");
  // An overlong encoding of '<' stays two replaced bytes.
  const auto overlong = html_escape(std::string("\xC0\xBC", 2));
  CHECK(overlong == replacement + replacement);
  // A sequence cut at the end.
  CHECK(html_escape(std::string("ok\xE2\x9C", 4)) == "ok" + replacement + replacement);
}

TEST_CASE("html_escape: bidi controls, invisible format characters and controls become visible escapes",
          "[console][escape]") {
  CHECK(html_escape("\u202eevil\u202c") == "\\u202Eevil\\u202C");
  const auto utf8 = [](char32_t cp) {
    std::string out;
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
    return out;
  };
  std::vector<char32_t> hidden;
  const auto add = [&](char32_t first, char32_t last) {
    for (char32_t cp = first; cp <= last; ++cp) hidden.push_back(cp);
  };
  add(0x202A, 0x202E);  // bidi embeddings and overrides
  add(0x2066, 0x2069);  // bidi isolates
  add(0x200B, 0x200F);  // zero-width space, non-joiner, joiner; left-to-right and right-to-left marks
  add(0x061C, 0x061C);  // Arabic letter mark
  add(0xFEFF, 0xFEFF);  // byte order mark, zero-width no-break space
  add(0x2060, 0x2064);  // word joiner, invisible operators
  add(0x00AD, 0x00AD);  // soft hyphen
  add(0x2028, 0x2029);  // line and paragraph separators
  add(0x00, 0x08);      // C0 controls but tab and line breaks
  add(0x0B, 0x0C);
  add(0x0E, 0x1F);
  add(0x7F, 0x9F);      // DEL and the C1 controls
  for (const char32_t cp : hidden) {
    INFO("U+" << std::hex << static_cast<unsigned>(cp));
    const auto shown = html_escape("a" + utf8(cp) + "b");
    CHECK(shown == fmt::format("a\\u{:04X}b", static_cast<unsigned>(cp)));
  }
  // Beyond the BMP as JSON writes it: a tag character, used to hide text
  // from a reader but not from a model.
  CHECK(html_escape(utf8(0xE0041)) == "\\uDB40\\uDC41");
  // What a browser draws is left as it is.
  CHECK(html_escape("tab\tnew line\ncarriage return\r\n") == "tab\tnew line\ncarriage return\r\n");
  CHECK(html_escape("é ✓ 日本語 \U0001F44D עברית") == "é ✓ 日本語 \U0001F44D עברית");
}

TEST_CASE("same_secret: equal only for the same bytes, whatever the lengths", "[console][token]") {
  const auto token = random_secret();
  CHECK(same_secret(token, std::string(token)));
  std::string last_changed = token;
  last_changed.back() = last_changed.back() == '0' ? '1' : '0';
  CHECK_FALSE(same_secret(token, last_changed));
  CHECK_FALSE(same_secret(token, token.substr(0, 63)));
  CHECK_FALSE(same_secret(token, token + "0"));
  CHECK_FALSE(same_secret(token, ""));
}

TEST_CASE("random_secret: 32 random bytes as hex, never the same twice", "[console][token]") {
  const auto a = random_secret();
  const auto b = random_secret();
  CHECK(a.size() == 64);
  CHECK(a.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(a != b);
}

TEST_CASE("session_table: a session is found by its cookie value only, until closed or expired",
          "[console][session]") {
  session_table sessions;
  const auto alice = sessions.open("alice");
  const auto bob = sessions.open("bob");
  REQUIRE(sessions.find(alice.id).has_value());
  CHECK(sessions.find(alice.id)->operator_name == "alice");
  CHECK(sessions.find(bob.id)->operator_name == "bob");
  CHECK(alice.id != bob.id);
  CHECK(alice.csrf != alice.id);
  CHECK_FALSE(sessions.find("").has_value());
  CHECK_FALSE(sessions.find(alice.csrf).has_value());
  CHECK_FALSE(sessions.find(alice.id.substr(1)).has_value());
  sessions.close(alice.id);
  CHECK_FALSE(sessions.find(alice.id).has_value());
  CHECK(sessions.find(bob.id).has_value());

  session_table expiring(std::chrono::seconds(0));
  const auto gone = expiring.open("carol");
  CHECK_FALSE(expiring.find(gone.id).has_value());
}

TEST_CASE("csrf_matches: only the session's own token", "[console][csrf]") {
  session_table sessions;
  const auto alice = sessions.open("alice");
  const auto bob = sessions.open("bob");
  CHECK(csrf_matches(alice, alice.csrf));
  CHECK_FALSE(csrf_matches(alice, ""));
  CHECK_FALSE(csrf_matches(alice, bob.csrf));
  CHECK_FALSE(csrf_matches(alice, alice.id));
  console_session without_token{"id", "", "x", {}};
  CHECK_FALSE(csrf_matches(without_token, ""));
}

TEST_CASE("origin_allowed: absent or this server, never opaque or cross-site", "[console][csrf]") {
  CHECK(origin_allowed("", "127.0.0.1:8080"));
  CHECK_FALSE(origin_allowed("null", "127.0.0.1:8080"));
  CHECK(origin_allowed("http://127.0.0.1:8080", "127.0.0.1:8080", "same-origin"));
  CHECK(origin_allowed("", "127.0.0.1:8080", "none"));
  CHECK_FALSE(origin_allowed("http://127.0.0.1:8080", "127.0.0.1:8080", "same-site"));
  CHECK_FALSE(origin_allowed("", "127.0.0.1:8080", "cross-site"));
  CHECK(origin_allowed("http://127.0.0.1:8080", "127.0.0.1:8080"));
  CHECK_FALSE(origin_allowed("http://127.0.0.1:8081", "127.0.0.1:8080"));
  CHECK_FALSE(origin_allowed("https://127.0.0.1:8080", "127.0.0.1:8080"));
  CHECK_FALSE(origin_allowed("http://evil.example", "127.0.0.1:8080"));
  CHECK_FALSE(origin_allowed("http://evil.example", ""));
}

TEST_CASE("loopback_host_allowed: the console's loopback names and port, nothing else", "[console][host]") {
  CHECK(loopback_host_allowed("127.0.0.1:8080", 8080));
  CHECK(loopback_host_allowed("localhost:8080", 8080));
  CHECK(loopback_host_allowed("[::1]:8080", 8080));
  CHECK(loopback_host_allowed("localhost", 80));
  CHECK_FALSE(loopback_host_allowed("localhost", 8080));
  CHECK_FALSE(loopback_host_allowed("127.0.0.1:8081", 8080));
  CHECK_FALSE(loopback_host_allowed("rebound.example:8080", 8080));
  CHECK_FALSE(loopback_host_allowed("127.0.0.1.rebound.example:8080", 8080));
  CHECK_FALSE(loopback_host_allowed("[::1]", 8080));
  CHECK_FALSE(loopback_host_allowed("", 8080));
}

TEST_CASE("cookie_value: finds one cookie among several", "[console][session]") {
  CHECK(cookie_value("a=1; llmdlq_session=abc; b=2", "llmdlq_session") == "abc");
  CHECK(cookie_value("llmdlq_session=abc", "llmdlq_session") == "abc");
  CHECK(cookie_value("xllmdlq_session=abc", "llmdlq_session").empty());
  CHECK(cookie_value("", "llmdlq_session").empty());
}

TEST_CASE("read_token_file: the first line of a private file, not too short", "[console][token]") {
  temp_dir dir;
  const auto good = dir.write("good", "  0123456789abcdef0123  \nignored\n");
  REQUIRE(::chmod(good.c_str(), 0600) == 0);
  const auto token = read_token_file(good);
  REQUIRE(token.has_value());
  CHECK(*token == "0123456789abcdef0123");

  const auto readable = dir.write("readable", "0123456789abcdef0123\n");
  REQUIRE(::chmod(readable.c_str(), 0644) == 0);
  CHECK_FALSE(read_token_file(readable).has_value());

  const auto shorter = dir.write("short", "short\n");
  REQUIRE(::chmod(shorter.c_str(), 0600) == 0);
  CHECK_FALSE(read_token_file(shorter).has_value());
  CHECK_FALSE(read_token_file((dir.path() / "missing").string()).has_value());
}

}  // namespace console_access_test
