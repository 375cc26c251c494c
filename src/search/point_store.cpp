#include "search/point_store.h"

#include <stdexcept>
#include <utility>

#include "search/question_json.h"

namespace phaze::search {

PointStore::PointStore(const std::string& db_path, const SearchQuestion& question) {
  if (db_path.empty()) return;
  db_ = std::make_unique<ResultsDb>(db_path, run_identity(question));
  db_lock_.emplace(db_path, "results file");
  for (PointResult& r : db_->load_summaries())
    at_start_.emplace(std::move(r.key), rule_score(r.feasible, r.throughput_samples_per_s));
}

void PointStore::commit(const std::vector<PointOutcome>& points) {
  if (!db_ || points.empty()) return;
  std::vector<PointResult> batch;
  for (const PointOutcome& p : points) batch.push_back({p.key, to_record(p), p.feasible, p.score});
  db_->put_batch(batch);
}

void PointStore::keep(const std::vector<PointOutcome>& points) {
  if (db_) return;
  for (const PointOutcome& p : points) memory_.push_back(row_of(p));
}

void PointStore::reserve(size_t points) {
  if (!db_) memory_.reserve(points);
}

std::vector<PointRow> PointStore::take_rows() {
  if (!db_) return std::move(memory_);
  std::vector<PointRow> rows;
  db_->for_each([&](PointResult&& r) { rows.push_back(row_of(from_record(r.key, r.record))); });
  return rows;
}

std::vector<PointOutcome> PointStore::stored(const std::vector<std::string>& keys) {
  if (!db_) throw std::logic_error("search: stored points asked of a search without a results file");
  std::vector<PointOutcome> out;
  for (const std::string& key : keys) {
    const std::optional<PointResult> found = db_->find(key);
    if (!found) throw std::logic_error("search: the results file lost point " + key);
    out.push_back(from_record(key, found->record));
  }
  return out;
}

}  // namespace phaze::search
