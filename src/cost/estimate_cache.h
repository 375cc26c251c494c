#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace phaze::cost {

/// One cached estimate: an operator on one core configuration.
struct CachedEstimate {
  double latency_s = 0;  ///< seconds
  double energy_j = 0;   ///< joules
  bool operator==(const CachedEstimate&) const = default;
};

/// Persistent cache of operator estimates in an SQLite file, shared by runs and by concurrent processes
/// (WAL journal, busy timeout). Keys are full signatures (operator kind, dimensions, batch, fused
/// epilogue, direction, core configuration, cost-model version) built by the cost model. A file that is
/// not a phaze cache, or is corrupt, throws InputError naming the file.
class EstimateCache {
 public:
  /// Opens (creating it and its directory if needed) the cache at `path`.
  explicit EstimateCache(const std::string& path);
  ~EstimateCache();
  EstimateCache(const EstimateCache&) = delete;
  EstimateCache& operator=(const EstimateCache&) = delete;

  std::optional<CachedEstimate> find(const std::string& key);
  /// Looks up many keys at once (one statement, one read transaction); missing keys give nullopt.
  std::vector<std::optional<CachedEstimate>> find_many(const std::vector<std::string>& keys);
  void store(const std::string& key, const CachedEstimate& estimate);
  /// Stores many entries in one transaction (first writer wins on a key stored concurrently).
  void store_many(const std::vector<std::pair<std::string, CachedEstimate>>& entries);
  int64_t size();
  const std::string& path() const { return path_; }

  /// $XDG_CACHE_HOME/phaze/estimates.sqlite, else $HOME/.cache/phaze/estimates.sqlite.
  static std::string default_path();

 private:
  void open_and_check();
  void close() noexcept;
  [[noreturn]] void fail(const char* what) const;
  void exec(const char* sql);
  std::optional<CachedEstimate> lookup(const std::string& key);
  void insert(const std::string& key, const CachedEstimate& estimate);

  std::string path_;
  sqlite3* db_ = nullptr;
  sqlite3_stmt* find_stmt_ = nullptr;    ///< SELECT latency_s, energy_j ... WHERE key = ?1
  sqlite3_stmt* insert_stmt_ = nullptr;  ///< INSERT OR IGNORE ... VALUES (?1, ?2, ?3)
  sqlite3_stmt* count_stmt_ = nullptr;   ///< SELECT count(*)
  std::mutex mutex_;                     ///< one connection: calls from several threads take turns
};

}  // namespace phaze::cost
