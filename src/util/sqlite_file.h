#pragma once

// What phaze's SQLite files (the estimate cache, search results) share: opening a file for writing with a
// busy timeout, retrying the few calls that report a lock without waiting for it, reading the header that
// marks a file as ours, and one-line errors naming the file.

#include <sqlite3.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <thread>

namespace phaze::sqlite {

/// How long a connection waits for another process's lock before giving up.
constexpr int kBusyTimeoutMs = 10000;

/// Finalizes a statement when it goes out of scope (set-up queries).
struct Statement {
  sqlite3_stmt* stmt = nullptr;
  Statement() = default;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement() { sqlite3_finalize(stmt); }
};

/// Resets a reused statement when it goes out of scope, whatever happened.
struct ResetOnExit {
  sqlite3_stmt* stmt;
  ~ResetOnExit() { sqlite3_reset(stmt); }
};

inline bool is_busy(int rc) {
  return (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED;
}
inline bool is_corrupt(int rc) {
  return (rc & 0xff) == SQLITE_NOTADB || (rc & 0xff) == SQLITE_CORRUPT;
}

/// Calls `attempt` (returning an SQLite result code) again while it reports a lock held elsewhere: the busy
/// timeout covers ordinary lock waits, this covers the few paths (journal-mode switch, WAL recovery by
/// another process) that may report SQLITE_BUSY without consulting the busy handler.
template <typename Attempt>
int retry_while_busy(Attempt attempt) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);
  for (;;) {
    const int rc = attempt();
    if (!is_busy(rc) || std::chrono::steady_clock::now() >= deadline) return rc;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

/// The text of a result column (empty for NULL), valid until the statement steps or is reset.
std::string_view column_text(sqlite3_stmt* stmt, int column);

/// Up to `radius` characters of `text` either side of `pos`, control and non-ASCII bytes, quotes and
/// backslashes escaped, so that any text read from a file fits in a one-line message.
std::string excerpt(std::string_view text, size_t pos, size_t radius);

/// Throws InputError for the failed step `what` on the file `path` (`kind` names the file's role, e.g.
/// "estimate cache"): a corrupt file or one that is not SQLite is said to be so.
[[noreturn]] void fail(sqlite3* db, const std::string& path, const char* kind, const char* what);

/// sqlite3_exec, retried while busy; fail() when it does not succeed.
void exec(sqlite3* db, const std::string& path, const char* kind, const char* sql);

/// Opens (creating it and its directory) the file at `path` for reading and writing into `*db`, with
/// extended result codes and the busy timeout. Throws InputError naming the file for an empty path, a path
/// that exists but is not a regular file (a device, a FIFO, a directory), a directory that cannot be created,
/// a file that cannot be opened or is read-only; `*db` is then left for the caller to close.
void open_for_writing(const std::string& path, const char* kind, sqlite3** db);

/// The marks of a file: PRAGMA application_id and user_version, and how many schema objects it holds (all
/// zero for a new, empty file).
struct Header {
  int32_t application_id = 0;
  int32_t user_version = 0;
  int64_t objects = 0;
  bool empty() const { return application_id == 0 && user_version == 0 && objects == 0; }
};
/// Reads the header without writing anything (retried while busy); fail() when it cannot be read.
Header read_header(sqlite3* db, const std::string& path, const char* kind);

/// Throws InputError naming the file when its schema objects (tables, indexes, triggers, views and their SQL)
/// are not exactly those `create_sql` makes in an empty database. A file marked as ours whose tables were
/// altered or damaged could otherwise drop rows without an error (an INSERT OR IGNORE on a changed key, a
/// trigger). Reads without writing anything (retried while busy).
void check_schema(sqlite3* db, const std::string& path, const char* kind, const char* create_sql);

/// Throws InputError naming the file when PRAGMA quick_check finds it damaged. quick_check reads every page
/// once and checks the b-trees (not index contents against tables): a damaged file is reported when it is
/// opened, not later as a row that reads back wrong or a write that lands on another row. Reads without
/// writing anything (retried while busy).
void check_integrity(sqlite3* db, const std::string& path, const char* kind);

}  // namespace phaze::sqlite
