// SPDX-License-Identifier: MIT
// What the PostgreSQL stores share: libpq handles, identifiers, the
// classification of failures, and a durable session.
#pragma once

#include <libpq-fe.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "llmdlq/config.hpp"
#include "llmdlq/expected.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail::postgres {

inline bool valid_identifier(std::string_view name, std::size_t max_size) {
  return !name.empty() && name.size() <= max_size && !(name[0] >= '0' && name[0] <= '9') &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
         });
}

// Why a table, a schema or a connection string cannot be used, if one cannot.
inline std::optional<std::string> unusable_names(std::string_view conninfo, const std::string& table,
                                                 std::size_t max_table, const std::string& schema,
                                                 std::size_t max_schema) {
  if (!valid_identifier(table, max_table)) {
    return fmt::format("postgres: invalid table name '{}' (letters, digits and _, at most {})", table, max_table);
  }
  if (!schema.empty() && !valid_identifier(schema, max_schema)) {
    return "postgres: invalid schema name '" + schema + "'";
  }
  if (conninfo.find('\0') != std::string_view::npos) return "postgres: the connection string holds a NUL byte";
  return std::nullopt;
}

// Only for names valid_identifier accepted: they hold no quote to double.
inline std::string quote_identifier(std::string_view name) { return fmt::format("\"{}\"", name); }

// `"schema"."table"`, or `"table"` when no schema is named (the search_path's first).
inline std::string qualified_name(std::string_view schema, std::string_view table) {
  return schema.empty() ? quote_identifier(table)
                        : fmt::format("{}.{}", quote_identifier(schema), quote_identifier(table));
}

struct result_deleter {
  void operator()(PGresult* r) const noexcept { PQclear(r); }
};
using result = std::unique_ptr<PGresult, result_deleter>;

struct connection_deleter {
  void operator()(PGconn* c) const noexcept { PQfinish(c); }
};
using connection = std::unique_ptr<PGconn, connection_deleter>;

// libpq's default notice processor prints to stderr; a library must not.
inline void drop_notice(void*, const char*) {}

// ---------------------------------------------------------------------------
// Failures.

enum class failure_kind : std::uint8_t { unavailable, timeout, rejected, io_error };

struct failure {
  failure_kind kind = failure_kind::unavailable;
  std::string message;   // "postgres: <what>: <reason>"
  std::string sqlstate;  // empty when the server gave none (a lost connection)
  std::string reason;    // libpq's or the server's message, on one line
};

// libpq's messages end with a newline and may span lines: one line for ours.
inline std::string one_line(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool space = false;
  for (const char c : text) {
    if (c == '\n' || c == '\r' || c == '\t' || c == ' ') {
      space = !out.empty();
      continue;
    }
    if (space) out.push_back(' ');
    space = false;
    out.push_back(c);
  }
  return out;
}

inline failure classify(PGconn* conn, const PGresult* r, std::string_view what) {
  const char* state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
  const char* text = r && *PQresultErrorMessage(r) ? PQresultErrorMessage(r) : PQerrorMessage(conn);
  failure f;
  f.sqlstate = state ? state : "";
  f.reason = one_line(text ? text : "unknown error");
  f.message = fmt::format("postgres: {}: {}", what, f.reason);
  const std::string_view s = f.sqlstate;
  const std::string_view kind = s.substr(0, std::min<std::size_t>(2, s.size()));
  if (PQstatus(conn) != CONNECTION_OK || s.empty() || kind == "08" || kind == "53" || kind == "40" ||
      s.starts_with("57P") || s == "25P03") {
    // lost connection, server shutting down or out of resources, transaction
    // rolled back by the server: nothing was written, trying again may work
    f.kind = failure_kind::unavailable;
  } else if (s == "57014" || s == "55P03") {  // statement_timeout, lock_timeout
    f.kind = failure_kind::timeout;
  } else if (kind == "22" || kind == "23" || kind == "42" || kind == "54" || kind == "2B" || kind == "44") {
    f.kind = failure_kind::rejected;  // the data or the statement, as they are, will not go in
  } else {
    f.kind = failure_kind::io_error;  // 58 (system), XX (internal), anything else
  }
  return f;
}

// ---------------------------------------------------------------------------
// Connections.

// Connects with `conninfo`. Later keywords win: the caller's string
// overrides the application name and timeout, not the encoding.
inline expected<connection, failure> open_connection(const std::string& conninfo) {
  const std::array<const char*, 5> keywords = {"fallback_application_name", "connect_timeout", "dbname",
                                               "client_encoding", nullptr};
  const std::array<const char*, 5> values = {"llmdlq", "10", conninfo.c_str(), "UTF8", nullptr};
  connection conn(PQconnectdbParams(keywords.data(), values.data(), 1));
  if (!conn)
    return unexpected(failure{failure_kind::unavailable, "postgres: connect: out of memory", {}, "out of memory"});
  PQsetNoticeProcessor(conn.get(), drop_notice, nullptr);
  if (PQstatus(conn.get()) != CONNECTION_OK) return unexpected(classify(conn.get(), nullptr, "connect"));
  return conn;
}

// Per-connection settings: the statement timeout (0 keeps the server's),
// and commits that are durable before they return.
inline expected<void, failure> set_up_durable_session(PGconn* conn, int statement_timeout_ms) {
  const std::string timeout = std::to_string(std::max(0, statement_timeout_ms));
  const std::array<const char*, 1> values = {timeout.c_str()};
  const result r(PQexecParams(conn,
                              "SELECT set_config('statement_timeout', $1, false), "
                              "CASE WHEN current_setting('synchronous_commit') = 'off' "
                              "THEN set_config('synchronous_commit', 'on', false) END",
                              1, nullptr, values.data(), nullptr, nullptr, 0));
  if (!r || PQresultStatus(r.get()) != PGRES_TUPLES_OK) return unexpected(classify(conn, r.get(), "session settings"));
  return {};
}

}  // namespace detail::postgres
LLMDLQ_END_NAMESPACE
