#pragma once

// Plain SQLite access for tests of phaze's SQLite files: build foreign files, tamper with ours, inspect them.

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>

namespace phaze_test {

/// Runs one SQL script on a plain SQLite connection.
inline void sql(const std::string& path, const std::string& script) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  const int rc = sqlite3_exec(db, script.c_str(), nullptr, nullptr, &error);
  const std::string message = error != nullptr ? error : "";
  sqlite3_free(error);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK) << message;
}

/// First column of the first row of a query on a plain SQLite connection, as text ("" when there is none).
inline std::string query_text(const std::string& path, const std::string& query) {
  sqlite3* db = nullptr;
  std::string result;
  if (sqlite3_open(path.c_str(), &db) == SQLITE_OK) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, query.c_str(), -1, &stmt, nullptr) == SQLITE_OK && sqlite3_step(stmt) == SQLITE_ROW) {
      const unsigned char* text = sqlite3_column_text(stmt, 0);
      if (text != nullptr) result = reinterpret_cast<const char*>(text);
    }
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
  return result;
}

}  // namespace phaze_test
