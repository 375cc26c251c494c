#include "util/sqlite_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <vector>

#include "util/input_error.h"

namespace phaze::sqlite {

namespace {

/// One schema object as sqlite_master lists it; an automatic index has no SQL.
struct SchemaObject {
  std::string type, name, table, sql;
  bool has_sql = false;
  bool operator==(const SchemaObject&) const = default;
};

/// The schema objects of `db` in a fixed order, or the SQLite result code that stopped the reading.
int read_schema(sqlite3* db, std::vector<SchemaObject>* objects) {
  return retry_while_busy([&] {
    objects->clear();
    Statement q;
    int rc = sqlite3_prepare_v2(db, "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name", -1,
                                &q.stmt, nullptr);
    if (rc != SQLITE_OK) return rc;
    auto text = [&](int column) { return std::string(column_text(q.stmt, column)); };
    while ((rc = sqlite3_step(q.stmt)) == SQLITE_ROW) {
      const bool has_sql = sqlite3_column_type(q.stmt, 3) != SQLITE_NULL;  // before any conversion
      objects->push_back(SchemaObject{text(0), text(1), text(2), text(3), has_sql});
    }
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
  });
}

}  // namespace

std::string_view column_text(sqlite3_stmt* stmt, int column) {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, column));
  return text != nullptr ? std::string_view(text, static_cast<size_t>(sqlite3_column_bytes(stmt, column)))
                         : std::string_view();
}

std::string excerpt(std::string_view text, size_t pos, size_t radius) {
  const size_t begin = pos > radius ? pos - radius : 0;
  const size_t end = std::min(text.size(), pos + radius);
  std::string out = begin > 0 ? "..." : "";
  for (size_t i = begin; i < end; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c >= 0x7f || c == '\'' || c == '\\') {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  if (end < text.size()) out += "...";
  return out;
}

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

void check_schema(sqlite3* db, const std::string& path, const char* kind, const char* create_sql) {
  std::vector<SchemaObject> expected;
  {
    sqlite3* reference = nullptr;
    const bool made = sqlite3_open_v2(":memory:", &reference, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK &&
                      sqlite3_exec(reference, create_sql, nullptr, nullptr, nullptr) == SQLITE_OK &&
                      read_schema(reference, &expected) == SQLITE_OK;
    sqlite3_close(reference);
    // The schema is phaze's own text: failing to build it in memory is a defect, not bad input.
    if (!made) throw std::logic_error(fmt::format("{}: cannot build the reference schema", kind));
  }
  std::vector<SchemaObject> found;
  if (read_schema(db, &found) != SQLITE_OK) fail(db, path, kind, "reading the schema");
  if (found == expected) return;
  // Name one object that differs: one the file lacks, else one it has in addition, else one it changed.
  auto named = [](const std::vector<SchemaObject>& objects, const SchemaObject& like) {
    return std::find_if(objects.begin(), objects.end(),
                        [&](const SchemaObject& o) { return o.type == like.type && o.name == like.name; });
  };
  const SchemaObject* odd = nullptr;
  const char* how = "is listed twice";  // when every name matches but the counts differ: a damaged file
  for (const SchemaObject& e : expected) {
    if (odd == nullptr && named(found, e) == found.end()) odd = &e, how = "is missing";
  }
  for (const SchemaObject& f : found) {
    if (odd == nullptr && named(expected, f) == expected.end()) odd = &f, how = "is not phaze's";
  }
  for (const SchemaObject& f : found) {
    if (odd == nullptr && !(*named(expected, f) == f)) odd = &f, how = "differs from phaze's";
  }
  if (odd == nullptr) odd = &found.front();
  throw InputError(
      fmt::format("{}: {} with a schema phaze does not write (the {} '{}' {}); delete the file to "
                  "rebuild it",
                  path, kind, excerpt(odd->type, 0, 60), excerpt(odd->name, 0, 60), how));
}

void check_integrity(sqlite3* db, const std::string& path, const char* kind) {
  Statement q;
  const int rc = retry_while_busy([&] {
    sqlite3_finalize(q.stmt);
    q.stmt = nullptr;
    const int prepared = sqlite3_prepare_v2(db, "PRAGMA quick_check(1)", -1, &q.stmt, nullptr);
    return prepared == SQLITE_OK ? sqlite3_step(q.stmt) : prepared;
  });
  if (rc != SQLITE_ROW) fail(db, path, kind, "integrity check");
  const std::string_view verdict = column_text(q.stmt, 0);
  if (verdict != "ok") {
    throw InputError(fmt::format("{}: corrupt {} (integrity check: {})", path, kind, excerpt(verdict, 0, 200)));
  }
}

}  // namespace phaze::sqlite
