#pragma once

// Where a search's evaluated points go and where the answer takes them back from: the results file, locked
// for the run (one search per file) and resumed from, or, without one, memory.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "search/point.h"
#include "search/point_row.h"
#include "search/point_scores.h"
#include "search/question.h"
#include "search/results_file.h"
#include "util/file_lock.h"

namespace phaze::search {

class PointStore {
 public:
  /// Opens the results file at `db_path` for the question's run identity, locks it and reads the scores
  /// stored there; an empty path: the points are kept in memory.
  PointStore(const std::string& db_path, const SearchQuestion& question);

  /// The scores of the points stored when the run started: what a resumed run takes instead of evaluating.
  const ScoreMap& at_start() const { return at_start_; }
  /// Commits one design's evaluated points to the results file as one batch; nothing without a results file
  /// (keep() takes them then). Safe from several threads at once.
  void commit(const std::vector<PointOutcome>& points);
  /// Without a results file, keeps the rows of one design's evaluated points for the answer; nothing with
  /// one. The caller makes concurrent calls take turns.
  void keep(const std::vector<PointOutcome>& points);

  bool has_file() const { return db_ != nullptr; }
  /// Without a results file, makes room for the rows of this many points at once (an exact search
  /// knows how many it evaluates): the rows then take no more memory than they need.
  void reserve(size_t points);
  /// The row of every point stored now, any order. The rows kept in memory are handed over (the store keeps
  /// none after).
  std::vector<PointRow> take_rows();
  /// The points with these keys from the results file, in their order, as stored; throws std::logic_error
  /// for a key it does not hold. Needs a results file.
  std::vector<PointOutcome> stored(const std::vector<std::string>& keys);

 private:
  // Declared before the database: released only after the connection is closed (util/file_lock.h).
  std::optional<ExclusiveFileLock> db_lock_;
  std::unique_ptr<ResultsDb> db_;
  ScoreMap at_start_;             ///< points of the results file at the start
  std::vector<PointRow> memory_;  ///< without a results file: every point's row, for the answer
};

}  // namespace phaze::search
