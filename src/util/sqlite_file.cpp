#include "util/sqlite_file.h"

#include <fmt/format.h>

#include <filesystem>
#include <system_error>

#include "util/input_error.h"

namespace phaze::sqlite {

void fail(sqlite3* db, const std::string& path, const char* kind, const char* what) {
  const int rc = db != nullptr ? sqlite3_extended_errcode(db) : SQLITE_ERROR;
  const char* message = db != nullptr ? sqlite3_errmsg(db) : "out of memory";
  if (is_corrupt(rc)) {
    throw InputError(fmt::format("{}: corrupt or not an SQLite file ({}: {})", path, what, message));
  }
  throw InputError(fmt::format("{}: {}: {} failed ({})", path, kind, what, message));
}

void exec(sqlite3* db, const std::string& path, const char* kind, const char* sql) {
  if (retry_while_busy([&] { return sqlite3_exec(db, sql, nullptr, nullptr, nullptr); }) != SQLITE_OK) {
    fail(db, path, kind, sql);
  }
}

void open_for_writing(const std::string& path, const char* kind, sqlite3** db) {
  namespace fs = std::filesystem;
  if (path.empty()) throw InputError(fmt::format("{}: empty path", kind));
  {
    // A device or a FIFO would block or be read forever; a directory cannot hold a database.
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);
    if (!ec && fs::exists(status) && !fs::is_regular_file(status))
      throw InputError(fmt::format("{}: cannot open {} (not a regular file)", path, kind));
  }
  const fs::path parent = fs::path(path).parent_path();
  if (!parent.empty()) {
    std::error_code ec;
    fs::create_directories(parent, ec);
    if (ec) {
      throw InputError(fmt::format("{}: cannot create directory '{}' ({})", path, parent.string(), ec.message()));
    }
  }
  const int open_rc = sqlite3_open_v2(
      path.c_str(), db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE,
      nullptr);
  if (open_rc != SQLITE_OK) {
    if (is_corrupt(open_rc)) fail(*db, path, kind, "open");
    throw InputError(fmt::format("{}: cannot open {} ({})", path, kind,
                                 *db != nullptr ? sqlite3_errmsg(*db) : sqlite3_errstr(open_rc)));
  }
  sqlite3_extended_result_codes(*db, 1);
  sqlite3_busy_timeout(*db, kBusyTimeoutMs);
  if (sqlite3_db_readonly(*db, "main") == 1) {
    throw InputError(fmt::format("{}: cannot open {} for writing (read-only file)", path, kind));
  }
}

Header read_header(sqlite3* db, const std::string& path, const char* kind) {
  Statement q;
  const char* sql =
      "SELECT (SELECT application_id FROM pragma_application_id), (SELECT user_version FROM pragma_user_version), "
      "(SELECT count(*) FROM sqlite_master)";
  const int rc = retry_while_busy([&] {
    sqlite3_finalize(q.stmt);
    q.stmt = nullptr;
    const int prepared = sqlite3_prepare_v2(db, sql, -1, &q.stmt, nullptr);
    return prepared == SQLITE_OK ? sqlite3_step(q.stmt) : prepared;
  });
  if (rc != SQLITE_ROW) fail(db, path, kind, "reading the database header");
  return Header{sqlite3_column_int(q.stmt, 0), sqlite3_column_int(q.stmt, 1), sqlite3_column_int64(q.stmt, 2)};
}

}  // namespace phaze::sqlite
