// SPDX-License-Identifier: MIT
// A SQLite DLQ of 50 letters written through the store, one of which a test
// then breaks with plain SQL, as a bad disk, a careless script or another
// program would: for the tests that every command reads around a record
// that does not read back.
#pragma once

#include <sqlite3.h>

#include <chrono>
#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <llmdlq/sqlite/store.hpp>

#include "catch.hpp"
#include "support/replay_letters.hpp"
#include "support/temp_dir.hpp"

namespace llmdlq::test {

/// How one record is broken.
struct record_corruption {
  std::string name;
  std::string sql;          ///< statements on table dead_letters; ?1 is the record's dlq_id
  std::string reason;       ///< a fragment of what every report of the record says
  bool status = false;      ///< the status is broken: what reads records by status never takes it
  bool expiry_only = false;  ///< only expires_at is broken: only a purge reads it
};

/// One record broken each way: an envelope that is not JSON, JSON that is
/// not an envelope, an unknown status, fields of the wrong type.
inline std::vector<record_corruption> record_corruptions() {
  return {
      {"an envelope that is not JSON", "UPDATE dead_letters SET envelope = '{garbage' WHERE dlq_id = ?1", "not JSON"},
      {"an empty object for an envelope", "UPDATE dead_letters SET envelope = '{}' WHERE dlq_id = ?1", "envelope"},
      {"an array for an envelope", "UPDATE dead_letters SET envelope = '[1]' WHERE dlq_id = ?1", "envelope"},
      {"an unknown status", "UPDATE dead_letters SET status = 'bogus' WHERE dlq_id = ?1", "bogus", true},
      {"attempts that are a text",
       "UPDATE dead_letters SET envelope = json_set(envelope, '$.attempts', 'x') WHERE dlq_id = ?1", "attempts"},
      {"an envelope whose created_at is a number",
       "UPDATE dead_letters SET envelope = json_set(envelope, '$.created_at', 1764583200) WHERE dlq_id = ?1",
       "created_at"},
      {"a created_at column that is a number", "UPDATE dead_letters SET created_at = 1764583200 WHERE dlq_id = ?1",
       "created_at"},
      {"an envelope that is another letter's",
       "UPDATE dead_letters SET envelope = json_set(envelope, '$.dlq_id', "
       "(SELECT min(dlq_id) FROM dead_letters WHERE dlq_id <> ?1)) WHERE dlq_id = ?1",
       "not of this record"},
      {"an expires_at column that is a number", "UPDATE dead_letters SET expires_at = 1764583200 WHERE dlq_id = ?1",
       "expires_at", false, true},
  };
}

/// Letters 0..49 of replay_letters (cut off: a replay re-asks the model
/// about each), each expiring a day after it was made; 0..39 are pending,
/// 40..49 claimed and resolved by `ann` with letter N's recovered answer.
struct broken_records_dlq {
  static constexpr std::size_t letters = 50;
  static constexpr std::size_t first_resolved = 40;
  /// The pending letter and the resolved one the tests break.
  static constexpr std::size_t pending_victim = 20;
  static constexpr std::size_t resolved_victim = 45;

  temp_dir dir;
  std::string db = (dir.path() / "dlq.db").string();
  std::string store = "sqlite:" + db;
  std::string schema = dir.write("schema.json", replay_schema);
  std::vector<std::string> ids;  ///< by letter number

  broken_records_dlq() {
    auto made = cut_off_letters(letters);
    auto dlq = sqlite_store::open(db);
    REQUIRE(dlq.has_value());
    for (auto& letter : made) {
      letter.expires_at = letter.created_at + std::chrono::hours(24);
      REQUIRE(dlq->publish(letter).has_value());
      ids.push_back(letter.dlq_id);
    }
    for (std::size_t n = first_resolved; n < letters; ++n) {
      moderation_request claim{ids[n], moderation_action::claim, "ann", "", {}, {}};
      REQUIRE(dlq->act(claim).has_value());
      moderation_request resolve{ids[n], moderation_action::resolve, "ann", "read it off",
                                 recovered_answer(static_cast<int>(n)), {}};
      REQUIRE(dlq->act(resolve).has_value());
    }
  }

  /// Runs `sql` (a corruption's) on the record of letter `n`, bypassing the status CHECK.
  void corrupt(std::size_t n, const std::string& sql) const {
    sqlite3* handle = nullptr;
    REQUIRE(sqlite3_open(db.c_str(), &handle) == SQLITE_OK);
    REQUIRE(sqlite3_exec(handle, "PRAGMA ignore_check_constraints = ON", nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_stmt* statement = nullptr;
    INFO(sqlite3_errmsg(handle));
    REQUIRE(sqlite3_prepare_v2(handle, sql.c_str(), -1, &statement, nullptr) == SQLITE_OK);
    sqlite3_bind_text(statement, 1, ids[n].c_str(), -1, SQLITE_TRANSIENT);
    CHECK(sqlite3_step(statement) == SQLITE_DONE);
    sqlite3_finalize(statement);
    CHECK(sqlite3_changes(handle) == 1);
    sqlite3_close(handle);
  }

  /// Replaces the stored envelope of letter `n` with `bytes`, whatever they are.
  void set_envelope(std::size_t n, std::string_view bytes) const {
    sqlite3* handle = nullptr;
    REQUIRE(sqlite3_open(db.c_str(), &handle) == SQLITE_OK);
    sqlite3_stmt* statement = nullptr;
    REQUIRE(sqlite3_prepare_v2(handle, "UPDATE dead_letters SET envelope = ?2 WHERE dlq_id = ?1", -1, &statement,
                               nullptr) == SQLITE_OK);
    sqlite3_bind_text(statement, 1, ids[n].c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(statement, 2, bytes.data(), static_cast<int>(bytes.size()), SQLITE_TRANSIENT);
    CHECK(sqlite3_step(statement) == SQLITE_DONE);
    sqlite3_finalize(statement);
    sqlite3_close(handle);
  }

  /// Column `column` of every record, as text, by dlq_id (NULL: "NULL").
  [[nodiscard]] std::map<std::string, std::string> column(const std::string& column) const {
    sqlite3* handle = nullptr;
    REQUIRE(sqlite3_open_v2(db.c_str(), &handle, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
    sqlite3_stmt* statement = nullptr;
    const std::string sql = "SELECT dlq_id, " + column + " FROM dead_letters";
    REQUIRE(sqlite3_prepare_v2(handle, sql.c_str(), -1, &statement, nullptr) == SQLITE_OK);
    std::map<std::string, std::string> found;
    while (sqlite3_step(statement) == SQLITE_ROW) {
      const auto* id = reinterpret_cast<const char*>(sqlite3_column_text(statement, 0));
      const auto* value = reinterpret_cast<const char*>(sqlite3_column_blob(statement, 1));
      found[id] = value ? std::string(value, static_cast<std::size_t>(sqlite3_column_bytes(statement, 1))) : "NULL";
    }
    sqlite3_finalize(statement);
    sqlite3_close(handle);
    return found;
  }

  [[nodiscard]] std::map<std::string, std::string> statuses() const { return column("status"); }

  /// The stored envelope of letter `n`, as text.
  [[nodiscard]] std::string envelope_text(std::size_t n) const { return column("envelope").at(ids[n]); }
};

}  // namespace llmdlq::test
