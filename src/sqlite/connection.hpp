// SPDX-License-Identifier: MIT
// What the SQLite stores share: the connection and statement owners, text
// binding, the private database file and its directory, and the names they
// accept.
#pragma once

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "llmdlq/config.hpp"
#include "llmdlq/detail/private_file.hpp"

LLMDLQ_BEGIN_NAMESPACE
namespace detail::sqlite {

// Why SQLite must not open the database `path`, read-only or not, if it
// must not: group or others may write the directory it is in, sticky or
// not. SQLite opens the database's -wal, -shm and -journal files by name in
// that directory whenever it needs them, long after any check made here, and
// reads a WAL it finds there as the database's newest pages: whoever may
// create a file there could plant one that adds or erases dead letters. The
// sticky bit keeps others from removing or renaming a file, not from
// creating a name. Judged where the path leads, its links resolved, as
// SQLite resolves them to name the files beside it; a directory that cannot
// be read is left for the open to report. Who owns the directories is
// directory_chain_refusal's to judge, for a connection that writes.
inline std::optional<std::string> shared_directory_refusal(const std::string& path) {
  std::error_code error;
  auto target = std::filesystem::absolute(path, error);
  if (!error) target = std::filesystem::weakly_canonical(target, error);
  const auto directory = target.parent_path();
  struct stat info;
  if (error || ::stat(directory.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) return std::nullopt;
  if ((info.st_mode & (S_IWGRP | S_IWOTH)) == 0) return std::nullopt;
  return fmt::format(
      "{} is in {}, which has mode {:04o} (it belongs to {}): group or others may create files there, and SQLite "
      "opens the database's -wal, -shm and -journal files by name in it, so another user could plant a WAL that "
      "adds or erases dead letters{}; it is left unchanged (keep a SQLite DLQ in a directory only its owner may "
      "write, as one made with mkdir -m 700, or chmod go-w {})",
      path, directory.string(), info.st_mode & 07777, user_description(info.st_uid),
      (info.st_mode & S_ISVTX) != 0 ? " (the sticky bit does not stop that: it guards the files there, not new names)"
                                    : "",
      directory.string());
}

// Readies `path` for a writable connection: refuses a database in a
// directory group or others may write (shared_directory_refusal), a
// database, or a -wal, -shm or -journal file beside it, that is a symbolic
// link, that group or others can write or that another user owns, and a
// path another user could replace through a directory above it (the files
// beside it share its directory); creates a missing database 0600 whatever
// the umask (SQLite gives its WAL, shared-memory and journal files the
// database's mode and, run by root, its owner). Returns why it refuses; any
// other failure is left for SQLite to report.
//
// An existing database is judged by lstat alone, never opened: POSIX locks
// belong to the process, and closing any descriptor of a file drops every
// lock the process holds on it, those of its open SQLite connections too.
// Another process could then checkpoint and delete the WAL under them.
// Only a file this call creates (O_EXCL: open nowhere else) is opened and closed.
inline std::optional<std::string> prepare_private_database(const std::string& path) {
  if (auto why = shared_directory_refusal(path)) return why;  // first: chmod +t, as the chain suggests, is no cure
  if (auto why = directory_chain_refusal(path)) return why;
  for (const char* beside : {"-wal", "-shm", "-journal"}) {
    if (auto why = existing_file_refusal(path + beside)) return why;
  }
  for (int attempt = 0; attempt < 4; ++attempt) {  // another process may create or remove it in between
    struct stat info;
    if (::lstat(path.c_str(), &info) == 0) {
      if (S_ISLNK(info.st_mode)) return symbolic_link_refusal(path);
      return exposed_file_refusal(path, info);
    }
    if (errno != ENOENT) return std::nullopt;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, private_file_mode);
    if (fd >= 0) {
      const bool owner_only = ::fchmod(fd, private_file_mode) == 0;  // the umask may have taken the owner's bits
      ::close(fd);
      if (!owner_only) return fmt::format("cannot make {} its owner's only", path);
      return std::nullopt;
    }
    if (errno != EEXIST) return std::nullopt;
  }
  return std::nullopt;
}

// A table name (or prefix) used unquoted in SQL: letters, digits, underscores.
inline bool valid_table_name(std::string_view name) {
  return !name.empty() && name.size() <= 63 && !(name[0] >= '0' && name[0] <= '9') &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
         });
}

// A prepared statement that resets itself after each use.
class statement {
 public:
  statement() = default;
  statement(const statement&) = delete;
  statement& operator=(const statement&) = delete;
  ~statement() { sqlite3_finalize(stmt_); }

  bool prepare(sqlite3* db, const std::string& sql) {
    return sqlite3_prepare_v3(db, sql.c_str(), static_cast<int>(sql.size() + 1), SQLITE_PREPARE_PERSISTENT, &stmt_,
                              nullptr) == SQLITE_OK;
  }
  sqlite3_stmt* get() const noexcept { return stmt_; }

 private:
  sqlite3_stmt* stmt_ = nullptr;
};

// Binds `text`, or NULL when it is empty.
inline void bind_text_or_null(sqlite3_stmt* stmt, int index, std::string_view text) {
  if (text.empty()) {
    sqlite3_bind_null(stmt, index);
  } else {
    sqlite3_bind_text(stmt, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  }
}

// Binds `text` as it is, an empty text included.
inline void bind_text(sqlite3_stmt* stmt, int index, std::string_view text) {
  sqlite3_bind_text(stmt, index, text.empty() ? "" : text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
}

// Column `column` of the current row as text (empty when NULL).
inline std::string column_text(sqlite3_stmt* stmt, int column) {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt, column));
  return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(stmt, column))) : std::string();
}

// Declared before the statements, so destroyed after them: sqlite3_close
// refuses while a statement is alive.
struct connection {
  sqlite3* db = nullptr;
  connection() = default;
  connection(const connection&) = delete;
  ~connection() { sqlite3_close(db); }
};

}  // namespace detail::sqlite
LLMDLQ_END_NAMESPACE
