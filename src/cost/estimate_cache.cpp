// Persistent estimate cache: one SQLite file (WAL journal, busy timeout) shared by runs and by concurrent
// processes. The file is marked as ours by PRAGMA application_id and versioned by PRAGMA user_version; a
// foreign, corrupt or newer file throws InputError naming it and is left untouched.

#include "cost/estimate_cache.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "util/input_error.h"
#include "util/sqlite_file.h"

namespace phaze::cost {

namespace {

/// 'PHZE': marks the file as a phaze estimate cache.
constexpr int32_t kApplicationId = 0x50485A45;
/// Schema version written to PRAGMA user_version.
constexpr int32_t kSchemaVersion = 1;
/// The file's role, in messages.
constexpr const char* kKind = "estimate cache";

constexpr const char* kCreateSchema =
    "CREATE TABLE IF NOT EXISTS estimates ("
    "key TEXT PRIMARY KEY NOT NULL, latency_s REAL NOT NULL, energy_j REAL NOT NULL) WITHOUT ROWID";

using sqlite::ResetOnExit;

}  // namespace

EstimateCache::EstimateCache(const std::string& path) : path_(path) {
  try {
    open_and_check();
  } catch (...) {
    close();
    throw;
  }
}

EstimateCache::~EstimateCache() {
  close();
}

void EstimateCache::close() noexcept {
  sqlite3_finalize(find_stmt_);
  sqlite3_finalize(insert_stmt_);
  sqlite3_finalize(count_stmt_);
  find_stmt_ = insert_stmt_ = count_stmt_ = nullptr;
  if (db_ != nullptr) sqlite3_close(db_);
  db_ = nullptr;
}

void EstimateCache::fail(const char* what) const {
  sqlite::fail(db_, path_, kKind, what);
}

void EstimateCache::exec(const char* sql) {
  sqlite::exec(db_, path_, kKind, sql);
}

void EstimateCache::open_and_check() {
  sqlite::open_for_writing(path_, kKind, &db_);

  // Reads the header and the schema without writing anything, so that a foreign or corrupt file is left as
  // it is. Returns true when the database is empty (a new file) and needs the schema.
  auto inspect = [this]() -> bool {
    const sqlite::Header h = sqlite::read_header(db_, path_, kKind);
    if (h.empty()) return true;
    if (h.application_id != kApplicationId) {
      throw InputError(fmt::format(
          "{}: not a phaze estimate cache (SQLite application_id {:#010x}, expected {:#010x}; schema objects: {})",
          path_, static_cast<uint32_t>(h.application_id), static_cast<uint32_t>(kApplicationId), h.objects));
    }
    if (h.user_version > kSchemaVersion) {
      throw InputError(fmt::format(
          "{}: estimate cache schema version {} is newer than the supported version {} (written by a newer phaze)",
          path_, h.user_version, kSchemaVersion));
    }
    if (h.user_version != kSchemaVersion) {
      throw InputError(fmt::format("{}: estimate cache has unknown schema version {} (expected {})", path_,
                                   h.user_version, kSchemaVersion));
    }
    sqlite::check_schema(db_, path_, kKind, kCreateSchema);
    sqlite::check_integrity(db_, path_, kKind);
    return false;
  };

  const bool empty = inspect();
  exec("PRAGMA journal_mode=WAL");
  exec("PRAGMA synchronous=NORMAL");
  if (empty) {
    // Another process may be creating the same file: decide again under the write lock.
    exec("BEGIN IMMEDIATE");
    try {
      if (inspect()) {
        exec(kCreateSchema);
        exec(fmt::format("PRAGMA application_id={}", kApplicationId).c_str());
        exec(fmt::format("PRAGMA user_version={}", kSchemaVersion).c_str());
      }
      exec("COMMIT");
    } catch (...) {
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
  }

  auto prepare = [this](const char* sql, sqlite3_stmt** stmt) {
    if (sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, stmt, nullptr) != SQLITE_OK) fail(sql);
  };
  prepare("SELECT latency_s, energy_j FROM estimates WHERE key = ?1", &find_stmt_);
  prepare("INSERT OR IGNORE INTO estimates (key, latency_s, energy_j) VALUES (?1, ?2, ?3)", &insert_stmt_);
  prepare("SELECT count(*) FROM estimates", &count_stmt_);
}

std::optional<CachedEstimate> EstimateCache::lookup(const std::string& key) {
  ResetOnExit reset{find_stmt_};
  if (sqlite3_bind_text(find_stmt_, 1, key.data(), static_cast<int>(key.size()), SQLITE_STATIC) != SQLITE_OK) {
    fail("binding a key");
  }
  const int rc = sqlite3_step(find_stmt_);
  if (rc == SQLITE_DONE) return std::nullopt;
  if (rc != SQLITE_ROW) fail("lookup");
  // A damaged or hand-edited file can hold text, or numbers no estimate has (negative); reading them as
  // doubles would give silently wrong latencies (text reads as 0).
  for (int column : {0, 1}) {
    const int type = sqlite3_column_type(find_stmt_, column);
    if ((type != SQLITE_FLOAT && type != SQLITE_INTEGER) || !(sqlite3_column_double(find_stmt_, column) >= 0)) {
      throw InputError(
          fmt::format("{}: estimate cache: damaged entry for key '{}' ({} is not a number >= 0); "
                      "delete the file to rebuild it",
                      path_, key, column == 0 ? "latency_s" : "energy_j"));
    }
  }
  return CachedEstimate{sqlite3_column_double(find_stmt_, 0), sqlite3_column_double(find_stmt_, 1)};
}

void EstimateCache::insert(const std::string& key, const CachedEstimate& estimate) {
  // SQLite stores NaN as NULL, which the schema rejects: refuse it with a clear message instead.
  if (std::isnan(estimate.latency_s) || std::isnan(estimate.energy_j)) {
    throw std::invalid_argument(fmt::format("{}: estimate cache: NaN estimate for key '{}'", path_, key));
  }
  ResetOnExit reset{insert_stmt_};
  if (sqlite3_bind_text(insert_stmt_, 1, key.data(), static_cast<int>(key.size()), SQLITE_STATIC) != SQLITE_OK ||
      sqlite3_bind_double(insert_stmt_, 2, estimate.latency_s) != SQLITE_OK ||
      sqlite3_bind_double(insert_stmt_, 3, estimate.energy_j) != SQLITE_OK) {
    fail("binding an entry");
  }
  if (sqlite3_step(insert_stmt_) != SQLITE_DONE) fail("store");
}

std::optional<CachedEstimate> EstimateCache::find(const std::string& key) {
  std::lock_guard lock(mutex_);
  return lookup(key);
}

std::vector<std::optional<CachedEstimate>> EstimateCache::find_many(const std::vector<std::string>& keys) {
  std::lock_guard lock(mutex_);
  std::vector<std::optional<CachedEstimate>> result;
  result.reserve(keys.size());
  if (keys.empty()) return result;
  // One read transaction: one consistent snapshot, and the WAL index is consulted once, not per key.
  exec("BEGIN");
  try {
    for (const std::string& key : keys) result.push_back(lookup(key));
    exec("COMMIT");
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
  return result;
}

void EstimateCache::store(const std::string& key, const CachedEstimate& estimate) {
  std::lock_guard lock(mutex_);
  insert(key, estimate);
}

void EstimateCache::store_many(const std::vector<std::pair<std::string, CachedEstimate>>& entries) {
  std::lock_guard lock(mutex_);
  if (entries.empty()) return;
  exec("BEGIN IMMEDIATE");
  try {
    for (const auto& [key, estimate] : entries) insert(key, estimate);
    exec("COMMIT");
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

int64_t EstimateCache::size() {
  std::lock_guard lock(mutex_);
  ResetOnExit reset{count_stmt_};
  if (sqlite3_step(count_stmt_) != SQLITE_ROW) fail("count");
  return sqlite3_column_int64(count_stmt_, 0);
}

std::string EstimateCache::default_path() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  // XDG base directory rule: a relative value is invalid and ignored.
  if (xdg != nullptr && xdg[0] == '/') return (std::filesystem::path(xdg) / "phaze" / "estimates.sqlite").string();
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] != '\0') {
    return (std::filesystem::path(home) / ".cache" / "phaze" / "estimates.sqlite").string();
  }
  throw InputError(
      "estimate cache: neither XDG_CACHE_HOME (absolute) nor HOME is set; give the cache file with --cache PATH");
}

}  // namespace phaze::cost
