// Search results: one SQLite file (WAL journal, busy timeout) per search run. The file is marked as ours by
// PRAGMA application_id, versioned by PRAGMA user_version and tied to one run by the identity in its meta
// table; a foreign, corrupt or newer file, or another run's, throws InputError naming it and is left as it
// was: nothing is written before every check has passed.

#include "search/results_file.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <utility>

#include "util/input_error.h"
#include "util/sqlite_file.h"

namespace phaze::search {

namespace {

/// 'PHZR': marks the file as a phaze results file.
constexpr int32_t kApplicationId = 0x50485A52;
/// 'PHZE': the estimate cache's mark, named in the error when one is opened as a results file by mistake.
constexpr int32_t kEstimateCacheApplicationId = 0x50485A45;
/// Schema version written to PRAGMA user_version.
constexpr int32_t kSchemaVersion = 1;
/// The file's role, in messages.
constexpr const char* kKind = "results file";

// Records are a few hundred bytes or more, too large for a WITHOUT ROWID table to pay off; the primary key's
// index keeps keys in order for all() and load_keys(), the throughput index serves best().
constexpr const char* kCreateSchema =
    "CREATE TABLE meta (name TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL) WITHOUT ROWID;"
    "CREATE TABLE points ("
    "key TEXT PRIMARY KEY NOT NULL,"
    "feasible INTEGER NOT NULL CHECK (feasible IN (0, 1)),"
    "throughput_samples_per_s REAL NOT NULL CHECK (throughput_samples_per_s >= 0),"
    "record TEXT NOT NULL);"
    "CREATE INDEX points_by_throughput ON points (feasible, throughput_samples_per_s DESC)";

constexpr const char* kPointColumns = "key, feasible, throughput_samples_per_s, record";

using sqlite::column_text;
using sqlite::excerpt;
using sqlite::ResetOnExit;
using sqlite::retry_while_busy;
using sqlite::Statement;

}  // namespace

ResultsDb::ResultsDb(const std::string& path, const std::string& run_identity, OpenMode mode)
    : path_(path), identity_(run_identity) {
  if (identity_.empty()) throw std::invalid_argument(fmt::format("{}: results file: empty run identity", path_));
  try {
    open_and_check(mode);
  } catch (...) {
    // Closing the last connection checkpoints the WAL into the main file and removes the WAL; open_and_check
    // turned that off so that a rejected file keeps its bytes. When the WAL is empty (most often one that
    // opening the file created) the checkpoint writes nothing, and removing the WAL leaves no trace.
    if (db_ != nullptr) {
      std::error_code ec;
      const char* wal = sqlite3_filename_wal(sqlite3_db_filename(db_, "main"));
      const bool empty_wal =
          wal == nullptr || !std::filesystem::exists(wal, ec) || std::filesystem::file_size(wal, ec) == 0;
      if (empty_wal && !ec) sqlite3_db_config(db_, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 0, nullptr);
    }
    close();
    throw;
  }
}

ResultsDb::~ResultsDb() {
  close();
}

void ResultsDb::close() noexcept {
  for (sqlite3_stmt** stmt : {&find_stmt_, &insert_stmt_, &identity_stmt_, &count_stmt_}) {
    sqlite3_finalize(*stmt);
    *stmt = nullptr;
  }
  if (db_ != nullptr) sqlite3_close(db_);
  db_ = nullptr;
}

void ResultsDb::fail(const char* what) const {
  sqlite::fail(db_, path_, kKind, what);
}

void ResultsDb::exec(const char* sql) {
  sqlite::exec(db_, path_, kKind, sql);
}

std::optional<std::string> ResultsDb::stored_identity() {
  if (identity_stmt_ == nullptr) {
    const char* sql = "SELECT value FROM meta WHERE name = 'run_identity'";
    if (sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &identity_stmt_, nullptr) != SQLITE_OK) {
      fail(sql);
    }
  }
  ResetOnExit reset{identity_stmt_};
  const int rc = retry_while_busy([&] {
    sqlite3_reset(identity_stmt_);
    return sqlite3_step(identity_stmt_);
  });
  if (rc == SQLITE_DONE) return std::nullopt;
  if (rc != SQLITE_ROW) fail("reading the run identity");
  return std::string(column_text(identity_stmt_, 0));
}

// Empties the points and stores this run's identity (inside the caller's write transaction).
void ResultsDb::start_over() {
  exec("DELETE FROM points");
  Statement set;
  const char* sql = "INSERT OR REPLACE INTO meta (name, value) VALUES ('run_identity', ?1)";
  if (sqlite3_prepare_v2(db_, sql, -1, &set.stmt, nullptr) != SQLITE_OK ||
      sqlite3_bind_text(set.stmt, 1, identity_.data(), static_cast<int>(identity_.size()), SQLITE_STATIC) !=
          SQLITE_OK ||
      sqlite3_step(set.stmt) != SQLITE_DONE) {
    fail("storing the run identity");
  }
}

void ResultsDb::open_and_check(OpenMode mode) {
  sqlite::open_for_writing(path_, kKind, &db_);
  // Closing the last connection to a WAL file normally checkpoints it into the main file: not for a file we
  // reject, which must stay as it was. Switched back on below, once the file is known to be ours.
  sqlite3_db_config(db_, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);

  // Reads the header and the schema without writing anything. Returns true when the database is empty (a new
  // file) and needs the schema.
  auto inspect = [this]() -> bool {
    const sqlite::Header h = sqlite::read_header(db_, path_, kKind);
    if (h.empty()) return true;
    if (h.application_id != kApplicationId) {
      throw InputError(fmt::format(
          "{}: not a phaze results file{} (SQLite application_id {:#010x}, expected {:#010x}; schema objects: {})",
          path_, h.application_id == kEstimateCacheApplicationId ? " but a phaze estimate cache" : "",
          static_cast<uint32_t>(h.application_id), static_cast<uint32_t>(kApplicationId), h.objects));
    }
    if (h.user_version > kSchemaVersion) {
      throw InputError(fmt::format(
          "{}: results file schema version {} is newer than the supported version {} (written by a newer phaze)", path_,
          h.user_version, kSchemaVersion));
    }
    if (h.user_version != kSchemaVersion) {
      throw InputError(fmt::format("{}: results file has unknown schema version {} (expected {})", path_,
                                   h.user_version, kSchemaVersion));
    }
    sqlite::check_schema(db_, path_, kKind, kCreateSchema);
    return false;
  };

  // A different identity is an error in kResume mode; kStartOver accepts any.
  auto check_identity = [this, mode]() {
    const std::optional<std::string> stored = stored_identity();
    if (!stored) throw InputError(fmt::format("{}: results file without a run identity", path_));
    if (mode == OpenMode::kStartOver || *stored == identity_) return;
    const size_t pos = static_cast<size_t>(
        std::mismatch(stored->begin(), stored->end(), identity_.begin(), identity_.end()).first - stored->begin());
    throw InputError(
        fmt::format("{}: holds the results of another run (stored run identity '{}' differs from this run's '{}' at "
                    "character {}); start over or choose another results file",
                    path_, excerpt(*stored, pos, 30), excerpt(identity_, pos, 30), pos + 1));
  };

  const bool empty = inspect();
  if (!empty) {
    check_identity();
    sqlite::check_integrity(db_, path_, kKind);
  }
  exec("PRAGMA journal_mode=WAL");
  exec("PRAGMA synchronous=NORMAL");
  if (empty || mode == OpenMode::kStartOver) {
    // Another process may be creating or starting over the same file: decide again under the write lock.
    exec("BEGIN IMMEDIATE");
    try {
      if (inspect()) {
        exec(kCreateSchema);
        exec(fmt::format("PRAGMA application_id={}", kApplicationId).c_str());
        exec(fmt::format("PRAGMA user_version={}", kSchemaVersion).c_str());
        start_over();
      } else {
        check_identity();
        if (mode == OpenMode::kStartOver) start_over();
      }
      exec("COMMIT");
    } catch (...) {
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
  }
  sqlite3_db_config(db_, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 0, nullptr);

  auto prepare = [this](const std::string& sql, sqlite3_stmt** stmt) {
    if (sqlite3_prepare_v3(db_, sql.c_str(), -1, SQLITE_PREPARE_PERSISTENT, stmt, nullptr) != SQLITE_OK) {
      fail(sql.c_str());
    }
  };
  prepare(fmt::format("SELECT {} FROM points WHERE key = ?1", kPointColumns), &find_stmt_);
  prepare(fmt::format("INSERT OR IGNORE INTO points ({}) VALUES (?1, ?2, ?3, ?4)", kPointColumns), &insert_stmt_);
  prepare("SELECT count(*) FROM points", &count_stmt_);
}

PointResult ResultsDb::read_point(sqlite3_stmt* stmt) const {
  PointResult point;
  point.key = std::string(column_text(stmt, 0));
  point.feasible = sqlite3_column_int(stmt, 1) != 0;
  point.throughput_samples_per_s = sqlite3_column_double(stmt, 2);
  point.record = nlohmann::json::parse(column_text(stmt, 3), nullptr, /*allow_exceptions=*/false);
  if (point.record.is_discarded()) {
    throw InputError(
        fmt::format("{}: the stored record of point '{}' is not valid JSON", path_, excerpt(point.key, 0, 200)));
  }
  return point;
}

void ResultsDb::read_points(sqlite3_stmt* stmt, const std::function<void(PointResult&&)>& visit) {
  int rc;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) visit(read_point(stmt));
  if (rc != SQLITE_DONE) fail("reading points");
}

std::optional<PointResult> ResultsDb::find(const std::string& key) {
  std::lock_guard lock(mutex_);
  ResetOnExit reset{find_stmt_};
  if (sqlite3_bind_text(find_stmt_, 1, key.data(), static_cast<int>(key.size()), SQLITE_STATIC) != SQLITE_OK) {
    fail("binding a key");
  }
  const int rc = sqlite3_step(find_stmt_);
  if (rc == SQLITE_DONE) return std::nullopt;
  if (rc != SQLITE_ROW) fail("lookup");
  return read_point(find_stmt_);
}

int64_t ResultsDb::put_batch(const std::vector<PointResult>& points) {
  // Validate and serialize first: a bad point throws before the transaction starts, and the write lock, which
  // other processes wait for, is held only for the inserts.
  std::vector<std::string> records;
  records.reserve(points.size());
  for (const PointResult& point : points) {
    if (point.key.empty()) throw std::invalid_argument(fmt::format("{}: results file: empty point key", path_));
    if (!std::isfinite(point.throughput_samples_per_s) || point.throughput_samples_per_s < 0) {
      throw std::invalid_argument(fmt::format("{}: results file: throughput {} of point '{}' is not finite and >= 0",
                                              path_, point.throughput_samples_per_s, point.key));
    }
    records.push_back(point.record.dump());
  }

  std::lock_guard lock(mutex_);
  if (points.empty()) return 0;
  int64_t added = 0;
  exec("BEGIN IMMEDIATE");
  try {
    // A run that started the file over in the meantime owns it now: writing this run's points there would mix
    // two runs' answers under one identity.
    if (stored_identity() != identity_) {
      throw InputError(
          fmt::format("{}: another run started this results file over; its results are no longer "
                      "this run's to extend",
                      path_));
    }
    for (size_t i = 0; i < points.size(); ++i) {
      const PointResult& point = points[i];
      ResetOnExit reset{insert_stmt_};
      if (sqlite3_bind_text(insert_stmt_, 1, point.key.data(), static_cast<int>(point.key.size()), SQLITE_STATIC) !=
              SQLITE_OK ||
          sqlite3_bind_int(insert_stmt_, 2, point.feasible ? 1 : 0) != SQLITE_OK ||
          sqlite3_bind_double(insert_stmt_, 3, point.throughput_samples_per_s) != SQLITE_OK ||
          sqlite3_bind_text(insert_stmt_, 4, records[i].data(), static_cast<int>(records[i].size()), SQLITE_STATIC) !=
              SQLITE_OK) {
        fail("binding a point");
      }
      if (sqlite3_step(insert_stmt_) != SQLITE_DONE) fail("store");
      added += sqlite3_changes(db_);
    }
    exec("COMMIT");
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
  return added;
}

int64_t ResultsDb::count() {
  std::lock_guard lock(mutex_);
  ResetOnExit reset{count_stmt_};
  if (sqlite3_step(count_stmt_) != SQLITE_ROW) fail("count");
  return sqlite3_column_int64(count_stmt_, 0);
}

std::vector<PointResult> ResultsDb::all() {
  std::vector<PointResult> points;
  for_each([&points](PointResult&& point) { points.push_back(std::move(point)); });
  return points;
}

void ResultsDb::scan_in_key_order(const char* columns, const char* what,
                                  const std::function<void(sqlite3_stmt*)>& row) {
  std::lock_guard lock(mutex_);
  Statement q;
  const std::string sql = fmt::format("SELECT {} FROM points ORDER BY key", columns);
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &q.stmt, nullptr) != SQLITE_OK) fail(sql.c_str());
  int rc;
  while ((rc = sqlite3_step(q.stmt)) == SQLITE_ROW) row(q.stmt);
  if (rc != SQLITE_DONE) fail(what);
}

void ResultsDb::for_each(const std::function<void(PointResult&&)>& visit) {
  scan_in_key_order(kPointColumns, "reading points", [&](sqlite3_stmt* stmt) { visit(read_point(stmt)); });
}

std::vector<std::string> ResultsDb::load_keys() {
  std::vector<std::string> keys;
  scan_in_key_order("key", "reading keys", [&](sqlite3_stmt* stmt) { keys.emplace_back(column_text(stmt, 0)); });
  return keys;
}

std::vector<PointResult> ResultsDb::load_summaries() {
  std::vector<PointResult> points;
  scan_in_key_order("key, feasible, throughput_samples_per_s", "reading point summaries", [&](sqlite3_stmt* stmt) {
    points.push_back(
        {std::string(column_text(stmt, 0)), nullptr, sqlite3_column_int(stmt, 1) != 0, sqlite3_column_double(stmt, 2)});
  });
  return points;
}

std::vector<PointResult> ResultsDb::best(int64_t limit) {
  std::lock_guard lock(mutex_);
  if (limit <= 0) return {};
  Statement q;
  const std::string sql = fmt::format(
      "SELECT {} FROM points WHERE feasible = 1 ORDER BY throughput_samples_per_s DESC, key LIMIT ?1", kPointColumns);
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &q.stmt, nullptr) != SQLITE_OK ||
      sqlite3_bind_int64(q.stmt, 1, limit) != SQLITE_OK) {
    fail(sql.c_str());
  }
  std::vector<PointResult> points;
  read_points(q.stmt, [&points](PointResult&& point) { points.push_back(std::move(point)); });
  return points;
}

}  // namespace phaze::search
