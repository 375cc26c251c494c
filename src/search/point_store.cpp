#include "search/point_store.h"

#include <iterator>
#include <utility>

#include "search/question_json.h"

namespace phaze::search {

PointStore::PointStore(const std::string& db_path, const SearchQuestion& question) {
  if (db_path.empty()) return;
  db_ = std::make_unique<ResultsDb>(db_path, run_identity(question));
  db_lock_.emplace(db_path, "results file");
  at_start_ = scores();
}

void PointStore::commit(const std::vector<PointOutcome>& points) {
  if (!db_ || points.empty()) return;
  std::vector<PointResult> batch;
  for (const PointOutcome& p : points) batch.push_back({p.key, to_record(p), p.feasible, p.score});
  db_->put_batch(batch);
}

void PointStore::keep(std::vector<PointOutcome>&& points) {
  if (db_) return;
  memory_.insert(memory_.end(), std::make_move_iterator(points.begin()), std::make_move_iterator(points.end()));
}

ScoreMap PointStore::scores() {
  ScoreMap scores;
  if (db_) {
    for (PointResult& r : db_->load_summaries())
      scores.emplace(std::move(r.key), rule_score(r.feasible, r.throughput_samples_per_s));
  } else {
    for (const PointOutcome& p : memory_) scores.emplace(p.key, rule_score(p.feasible, p.score));
  }
  return scores;
}

void PointStore::for_each(const std::function<void(PointOutcome&&)>& take) {
  if (db_) {
    db_->for_each([&](PointResult&& r) { take(from_record(r.key, r.record)); });
  } else {
    for (const PointOutcome& p : memory_) take(as_recorded(p));
  }
}

}  // namespace phaze::search
