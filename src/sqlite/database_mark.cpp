// SPDX-License-Identifier: MIT
// database_mark.hpp on the SQLite C API: the application id, and llmdlq's
// tables as this version makes them, read back from a database in memory.
#include "database_mark.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "connection.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail::sqlite {
namespace {

// A column as `PRAGMA table_info` gives it; a CHECK constraint is not part
// of it (an earlier version's status CHECK was narrower).
struct column {
  std::string name;
  std::string type;
  bool not_null = false;
  int primary_key = 0;  // its place in the primary key, 0 when not in it
  bool operator==(const column&) const = default;
};
using layout = std::vector<column>;

// The columns of `table` in `db`; nothing when SQLite fails.
std::optional<layout> layout_of(sqlite3* db, std::string_view table) {
  statement query;
  if (!query.prepare(db, R"sql(SELECT name, type, "notnull", pk FROM pragma_table_info(?1))sql")) return std::nullopt;
  bind_text(query.get(), 1, table);
  layout columns;
  int rc;
  while ((rc = sqlite3_step(query.get())) == SQLITE_ROW) {
    columns.push_back({column_text(query.get(), 0), column_text(query.get(), 1),
                       sqlite3_column_int(query.get(), 2) != 0, sqlite3_column_int(query.get(), 3)});
  }
  if (rc != SQLITE_DONE) return std::nullopt;
  return columns;
}

// A kind of table llmdlq makes, and how one is named: the dead letters
// under any name, the replay state's tables under any prefix, the others
// under their own name.
struct known_table {
  enum class naming { any, suffix, exact };
  naming named;
  std::string name;  // the suffix ("_leases") or the name ("llmdlq_traffic")
  layout columns;
};

// The dead letters' columns added since the first version (claimed_by and
// resolution, by ALTER TABLE): a table an earlier version made may end before them.
constexpr std::size_t columns_added_since_first_version = 2;

// llmdlq's tables as this version makes them, made in a database in memory
// and read back, so that they cannot drift from the statements that make
// them. Nothing when SQLite failed (out of memory).
const std::vector<known_table>* known_tables() {
  static const auto known = []() -> std::optional<std::vector<known_table>> {
    connection memory;  // declared first: closed after the statement
    if (sqlite3_open_v2(":memory:", &memory.db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) return std::nullopt;
    const std::string tables = store_tables("t") + replay_state_tables("p");
    if (sqlite3_exec(memory.db, tables.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) return std::nullopt;
    statement names;
    if (!names.prepare(memory.db, "SELECT name FROM sqlite_master WHERE type = 'table'")) return std::nullopt;
    std::vector<known_table> found;
    while (sqlite3_step(names.get()) == SQLITE_ROW) {
      std::string name = column_text(names.get(), 0);
      auto columns = layout_of(memory.db, name);
      if (!columns) return std::nullopt;
      using enum known_table::naming;
      if (name == "t") {
        found.push_back({any, {}, std::move(*columns)});
      } else if (name.starts_with("p_")) {
        found.push_back({suffix, name.substr(1), std::move(*columns)});
      } else {
        found.push_back({exact, std::move(name), std::move(*columns)});
      }
    }
    return found;
  }();
  return known ? &*known : nullptr;
}

bool is_known(const known_table& known, std::string_view name, const layout& columns) {
  switch (known.named) {
    case known_table::naming::any:
      return columns.size() <= known.columns.size() &&
             columns.size() + columns_added_since_first_version >= known.columns.size() &&
             std::equal(columns.begin(), columns.end(), known.columns.begin());
    case known_table::naming::suffix:
      return name.size() > known.name.size() && name.ends_with(known.name) && columns == known.columns;
    case known_table::naming::exact:
      return name == known.name && columns == known.columns;
  }
  return false;
}

// "the table orders (id INTEGER, total REAL)", "the view totals".
std::string described(std::string_view type, std::string_view name, const layout& columns = {}) {
  std::string text = fmt::format("the {} {}", type, name);
  for (std::size_t i = 0; i < columns.size(); ++i) {
    text += i == 0 ? " (" : ", ";
    text += columns[i].name;
    if (!columns[i].type.empty()) text += " " + columns[i].type;
  }
  if (!columns.empty()) text += ")";
  return text;
}

// An integer a pragma reads; nothing when SQLite fails.
std::optional<std::int64_t> pragma_value(sqlite3* db, const char* pragma) {
  statement query;
  if (!query.prepare(db, pragma) || sqlite3_step(query.get()) != SQLITE_ROW) return std::nullopt;
  return sqlite3_column_int64(query.get(), 0);
}

}  // namespace

std::string mark_statement() { return fmt::format("PRAGMA application_id = {};", application_id); }

std::optional<database_contents> read_contents(sqlite3* db) {
  const auto id = pragma_value(db, "PRAGMA application_id");
  if (!id) return std::nullopt;
  const auto marked = static_cast<std::uint32_t>(*id);
  if (marked == application_id) return database_contents{true, {}};
  if (marked != 0) {
    return database_contents{false, fmt::format("its application id is 0x{:08x}, another application's (a DLQ's "
                                                "is 0x{:08x})",
                                                marked, application_id)};
  }
  const auto version = pragma_value(db, "PRAGMA user_version");
  if (!version) return std::nullopt;
  if (*version != 0) {
    return database_contents{false, fmt::format("its user_version is {}, which llmdlq never sets", *version)};
  }
  // SQLite's own objects (sqlite_sequence, sqlite_stat1, automatic indexes) are left out.
  statement objects;
  if (!objects.prepare(db, R"sql(SELECT type, name, tbl_name FROM sqlite_master
                                 WHERE name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY type <> 'table', name)sql")) {
    return std::nullopt;
  }
  const auto* known = known_tables();
  std::vector<std::string> ours;
  int rc;
  while ((rc = sqlite3_step(objects.get())) == SQLITE_ROW) {
    const std::string type = column_text(objects.get(), 0);
    const std::string name = column_text(objects.get(), 1);
    if (type == "table") {
      const auto columns = layout_of(db, name);
      if (!columns) return std::nullopt;
      if (known && std::any_of(known->begin(), known->end(),
                               [&](const known_table& k) { return is_known(k, name, *columns); })) {
        ours.push_back(name);
        continue;
      }
      return database_contents{false, "it holds " + described(type, name, *columns) + ", which llmdlq did not make"};
    }
    // Tables come first: an index belongs when its table does.
    if (type == "index" && std::find(ours.begin(), ours.end(), column_text(objects.get(), 2)) != ours.end()) continue;
    return database_contents{false, "it holds " + described(type, name) + ", which llmdlq did not make"};
  }
  if (rc != SQLITE_DONE) return std::nullopt;
  return database_contents{false, {}};
}

std::string foreign_database_refusal(std::string_view path, std::string_view kind, std::string_view foreign) {
  return fmt::format("{} is not {}: {}; nothing was written to it (give the path of {}, or of a file that is not "
                     "there yet)",
                     path, kind, foreign, kind);
}

}  // namespace detail::sqlite
LLMDLQ_END_NAMESPACE
