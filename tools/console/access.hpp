// SPDX-License-Identifier: MIT
// Who may use the console: the access token, browser sessions and their
// CSRF tokens.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include <llmdlq/expected.hpp>

namespace llmdlq::cli {

/// 32 random bytes from the system's CSPRNG, as 64 hex digits.
std::string random_secret();

/// Whether two secrets are equal, in time that depends on neither's content
/// nor length (their SHA-256 digests are compared with CRYPTO_memcmp).
bool same_secret(std::string_view a, std::string_view b);

/// The access token in `path`: its first line, without surrounding blanks.
/// Refuses a file group or others may read, and a token shorter than 16 bytes.
expected<std::string, std::string> read_token_file(const std::string& path);

/// Whether a POST may come from this request's page: its Origin is absent
/// (a client that is not a browser: it still needs a session or bearer
/// token) or this very server (`http://` + its Host header), and a browser's
/// Sec-Fetch-Site, when sent, says `same-origin` (or `none`: typed by the
/// user). An opaque origin (`null`: a sandboxed frame, a data: page) is
/// refused. The console sends Referrer-Policy same-origin, so a browser
/// names the console as the Origin of its own forms.
bool origin_allowed(std::string_view origin, std::string_view host, std::string_view fetch_site = {});

/// Whether a request's Host header names this loopback console
/// (`127.0.0.1`, `localhost` or `[::1]`, with `port`). A page of another
/// name that resolves to 127.0.0.1 (DNS rebinding) is refused by it before
/// it can read anything.
bool loopback_host_allowed(std::string_view host_header, int port);

/// A logged-in browser: its cookie value, the token each of its forms
/// carries, and the operator name it acts under.
struct console_session {
  std::string id;
  std::string csrf;
  std::string operator_name;
  std::chrono::steady_clock::time_point expires;
};

/// The live sessions. Looked up by the digest of their id, so a lookup's
/// time tells nothing about a valid id. Thread-safe.
class session_table {
 public:
  explicit session_table(std::chrono::seconds lifetime = std::chrono::hours(12)) : lifetime_(lifetime) {}

  console_session open(std::string operator_name);
  /// The live session with this cookie value, if any.
  std::optional<console_session> find(std::string_view id);
  void close(std::string_view id);

 private:
  std::chrono::seconds lifetime_;
  std::mutex mutex_;
  std::map<std::string, console_session> by_digest_;
};

/// Whether a form's CSRF field matches its session's token.
inline bool csrf_matches(const console_session& session, std::string_view submitted) {
  return !submitted.empty() && same_secret(session.csrf, submitted);
}

}  // namespace llmdlq::cli

namespace llmdlq::cli {

/// The value of cookie `name` in a Cookie header, or nothing.
std::string cookie_value(std::string_view cookie_header, std::string_view name);

}  // namespace llmdlq::cli
