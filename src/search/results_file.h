#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace phaze::search {

/// One evaluated point of a search: the caller's canonical key, its result record (any JSON the caller
/// chooses) and two numbers kept beside it in their own columns so that queries need not parse records.
struct PointResult {
  std::string key;                      ///< canonical point key, made by the caller; not empty
  nlohmann::json record;                ///< the caller's result record
  bool feasible = false;                ///< whether a training plan fits this point
  double throughput_samples_per_s = 0;  ///< training throughput (samples/s), finite and >= 0; 0 if infeasible
  bool operator==(const PointResult&) const = default;
};

/// Results of one search run in an SQLite file (WAL journal), so that a run killed at any moment resumes
/// where its last committed batch ended.
///
/// A run has an identity: a canonical string of everything that determines its answers (models, options,
/// cost-model version), made by the caller and stored in the file. Opening a file whose identity differs,
/// that is not a phaze results file, is corrupt (PRAGMA quick_check, which reads the whole file once) or
/// has a newer schema throws InputError naming the file, and leaves the file as it was; OpenMode::kStartOver
/// instead discards the stored results of a results file of any identity and takes this run's identity.
///
/// Crash safety: put_batch commits a whole batch or nothing; a process killed (even by SIGKILL) leaves a file
/// that opens again with exactly the batches whose put_batch returned, plus possibly the one in flight. A
/// power loss may also drop the last few committed batches (synchronous=NORMAL), never corrupt the file.
///
/// Threads: every method takes one mutex, so calls from several threads are safe but take turns on the one
/// connection. The intended use is one thread collecting the workers' results and writing them in batches,
/// and load_keys() (or all()) once at start to resume. Several processes running the same identity may share
/// a file (busy timeout); the first writer of a key wins. Reads that meet a damaged page or a record that
/// is not JSON throw InputError naming the file.
class ResultsDb {
 public:
  enum class OpenMode {
    kResume,     ///< keep the stored results; a different identity is an error
    kStartOver,  ///< discard the stored results (one transaction) and take this run's identity
  };

  /// Opens (creating it and its directory if needed) the results file at `path` for the run `run_identity`
  /// (not empty).
  ResultsDb(const std::string& path, const std::string& run_identity, OpenMode mode = OpenMode::kResume);
  ~ResultsDb();
  ResultsDb(const ResultsDb&) = delete;
  ResultsDb& operator=(const ResultsDb&) = delete;

  std::optional<PointResult> find(const std::string& key);
  /// Stores the points in one transaction: all of them or, on any error, none. A key already stored (by an
  /// earlier batch, another process or earlier in this batch) keeps its first result. Returns how many
  /// points were new. Throws std::invalid_argument, before writing anything, for an empty key or a
  /// throughput that is negative or not finite; JSON numbers that are not finite are stored as null. Throws
  /// InputError, writing nothing, once another run has started the file over.
  int64_t put_batch(const std::vector<PointResult>& points);
  int64_t count();
  /// Every stored point, ordered by key (byte order, as std::string compares).
  std::vector<PointResult> all();
  /// Calls `visit` with every stored point in the order of all(), one at a time: for files too large to hold
  /// parsed (a parsed record takes several times the memory of its text). `visit` must not call back into
  /// this object (it runs under the mutex).
  void for_each(const std::function<void(PointResult&&)>& visit);
  /// Every stored key, ordered by key: what a resumed run skips. Reads the key index only, not the records.
  std::vector<std::string> load_keys();
  /// Every stored point without its record (record null): key, feasibility and throughput, ordered by key.
  /// What a resumed search needs to replay its decisions, without parsing a record.
  std::vector<PointResult> load_summaries();
  /// The `limit` feasible points of highest throughput, highest first (ties by key).
  std::vector<PointResult> best(int64_t limit);

  const std::string& path() const { return path_; }
  const std::string& run_identity() const { return identity_; }

 private:
  void open_and_check(OpenMode mode);
  void close() noexcept;
  [[noreturn]] void fail(const char* what) const;
  void exec(const char* sql);
  std::optional<std::string> stored_identity();
  void start_over();
  PointResult read_point(sqlite3_stmt* stmt) const;  ///< a row of kPointColumns
  void read_points(sqlite3_stmt* stmt, const std::function<void(PointResult&&)>& visit);
  /// Calls `row` with every row of "SELECT columns FROM points ORDER BY key", under the mutex; `what` names
  /// the read in errors.
  void scan_in_key_order(const char* columns, const char* what, const std::function<void(sqlite3_stmt*)>& row);

  std::string path_;
  std::string identity_;
  sqlite3* db_ = nullptr;
  sqlite3_stmt* find_stmt_ = nullptr;      ///< SELECT key, feasible, throughput, record ... WHERE key = ?1
  sqlite3_stmt* insert_stmt_ = nullptr;    ///< INSERT OR IGNORE INTO points ...
  sqlite3_stmt* identity_stmt_ = nullptr;  ///< SELECT value FROM meta WHERE name = 'run_identity'
  sqlite3_stmt* count_stmt_ = nullptr;     ///< SELECT count(*) FROM points
  std::mutex mutex_;                       ///< one connection: calls from several threads take turns
};

}  // namespace phaze::search
