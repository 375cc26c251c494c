// Persistent estimate cache: one SQLite file (WAL journal, busy timeout) shared by runs and by concurrent
// processes. The file is marked as ours by PRAGMA application_id and versioned by PRAGMA user_version; a
// foreign, corrupt or newer file throws InputError naming it and is left untouched.

#include "cost/estimate_cache.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "util/input_error.h"

namespace phaze::cost {

namespace {

/// 'PHZE': marks the file as a phaze estimate cache.
constexpr int32_t kApplicationId = 0x50485A45;
/// Schema version written to PRAGMA user_version.
constexpr int32_t kSchemaVersion = 1;
/// How long a connection waits for another process's lock before giving up.
constexpr int kBusyTimeoutMs = 10000;

constexpr const char* kCreateSchema =
    "CREATE TABLE IF NOT EXISTS estimates ("
    "key TEXT PRIMARY KEY NOT NULL, latency_s REAL NOT NULL, energy_j REAL NOT NULL) WITHOUT ROWID";

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

bool is_busy(int rc) {
  return (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED;
}
bool is_corrupt(int rc) {
  return (rc & 0xff) == SQLITE_NOTADB || (rc & 0xff) == SQLITE_CORRUPT;
}

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
  const int rc = db_ != nullptr ? sqlite3_extended_errcode(db_) : SQLITE_ERROR;
  const char* message = db_ != nullptr ? sqlite3_errmsg(db_) : "out of memory";
  if (is_corrupt(rc)) {
    throw InputError(fmt::format("{}: corrupt or not an SQLite file ({}: {})", path_, what, message));
  }
  throw InputError(fmt::format("{}: estimate cache: {} failed ({})", path_, what, message));
}

void EstimateCache::exec(const char* sql) {
  // The busy timeout covers ordinary lock waits; the loop covers the few paths (journal-mode switch, WAL
  // recovery by another process) that may report SQLITE_BUSY without consulting the busy handler.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);
  for (;;) {
    const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, nullptr);
    if (rc == SQLITE_OK) return;
    if (!is_busy(rc) || std::chrono::steady_clock::now() >= deadline) fail(sql);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

void EstimateCache::open_and_check() {
  namespace fs = std::filesystem;
  if (path_.empty()) throw InputError("estimate cache: empty path");
  const fs::path parent = fs::path(path_).parent_path();
  if (!parent.empty()) {
    std::error_code ec;
    fs::create_directories(parent, ec);
    if (ec) {
      throw InputError(fmt::format("{}: cannot create directory '{}' ({})", path_, parent.string(), ec.message()));
    }
  }

  const int open_rc = sqlite3_open_v2(
      path_.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE,
      nullptr);
  if (open_rc != SQLITE_OK) {
    if (is_corrupt(open_rc)) fail("open");
    throw InputError(fmt::format("{}: cannot open estimate cache ({})", path_,
                                 db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(open_rc)));
  }
  sqlite3_extended_result_codes(db_, 1);
  sqlite3_busy_timeout(db_, kBusyTimeoutMs);
  if (sqlite3_db_readonly(db_, "main") == 1) {
    throw InputError(fmt::format("{}: cannot open estimate cache for writing (read-only file)", path_));
  }

  // Reads the header and the schema without writing anything, so that a foreign or corrupt file is left as
  // it is. Returns true when the database is empty (a new file) and needs the schema.
  auto inspect = [this]() -> bool {
    Statement q;
    const char* sql =
        "SELECT (SELECT application_id FROM pragma_application_id), (SELECT user_version FROM pragma_user_version), "
        "(SELECT count(*) FROM sqlite_master)";
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);
    int rc;
    for (;;) {
      rc = sqlite3_prepare_v2(db_, sql, -1, &q.stmt, nullptr);
      if (rc == SQLITE_OK) rc = sqlite3_step(q.stmt);
      if (!is_busy(rc) || std::chrono::steady_clock::now() >= deadline) break;
      sqlite3_finalize(q.stmt);
      q.stmt = nullptr;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (rc != SQLITE_ROW) fail("reading the database header");
    const int32_t application_id = sqlite3_column_int(q.stmt, 0);
    const int32_t user_version = sqlite3_column_int(q.stmt, 1);
    const int64_t objects = sqlite3_column_int64(q.stmt, 2);
    if (application_id == 0 && user_version == 0 && objects == 0) return true;
    if (application_id != kApplicationId) {
      throw InputError(fmt::format(
          "{}: not a phaze estimate cache (SQLite application_id {:#010x}, expected {:#010x}; schema objects: {})",
          path_, static_cast<uint32_t>(application_id), static_cast<uint32_t>(kApplicationId), objects));
    }
    if (user_version > kSchemaVersion) {
      throw InputError(fmt::format(
          "{}: estimate cache schema version {} is newer than the supported version {} (written by a newer phaze)",
          path_, user_version, kSchemaVersion));
    }
    if (user_version != kSchemaVersion) {
      throw InputError(fmt::format("{}: estimate cache has unknown schema version {} (expected {})", path_,
                                   user_version, kSchemaVersion));
    }
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
