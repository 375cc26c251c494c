#include "search/answer.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace phaze::search {

namespace {

void accumulate_per_model(SearchAnswer& answer, const PointOutcome& point) {
  for (size_t m = 0; m < answer.best_per_model.size() && m < point.models.size(); ++m) {
    if (!point.models[m].feasible) continue;
    auto& best = answer.best_per_model[m];
    if (!best || better_for_model(point, *best, m, answer.ranking)) best = point;
  }
}

}  // namespace

void accumulate(SearchAnswer& answer, const PointOutcome& point, int64_t top) {
  if (point.feasible) {
    ++answer.feasible_points;
    const Ranking ranking = answer.ranking;
    if (!answer.best || better(point, *answer.best, ranking)) answer.best = point;
    if (top > 0) {
      // One entry per design (or chip), with its best point.
      const auto same = std::find_if(answer.top.begin(), answer.top.end(),
                                     [&](const PointOutcome& p) { return same_entry(p, point, ranking); });
      if (same != answer.top.end()) {
        if (!better(point, *same, ranking)) return accumulate_per_model(answer, point);
        answer.top.erase(same);
      }
      auto at =
          std::upper_bound(answer.top.begin(), answer.top.end(), point,
                           [ranking](const PointOutcome& a, const PointOutcome& b) { return better(a, b, ranking); });
      if (at - answer.top.begin() < top) {
        answer.top.insert(at, point);
        if (static_cast<int64_t>(answer.top.size()) > top) answer.top.pop_back();
      }
    }
  }
  accumulate_per_model(answer, point);
}

SearchAnswer build_answer(const AnswerSpace& space, const ScoreOf& score, std::vector<PointRow> rows,
                          const FullPoints& full_points, const AnswerListing& listing) {
  const SearchQuestion& q = space.question;
  const std::vector<hw::Design>& designs = space.designs;
  const BucketOrder& order = space.order;
  const std::vector<Combination>& combos = space.combinations;
  const int64_t top = listing.top;
  const bool keep_all = listing.keep_all;
  const bool keep_rows = keep_all || listing.pareto;
  const std::vector<CombinationState> states = replay(order, combos.size(), score, stop_window(q));

  SearchAnswer answer;
  answer.ranking = q.ranking;
  answer.designs = static_cast<int64_t>(designs.size());
  answer.points = static_cast<int64_t>(designs.size() * combos.size());
  answer.buckets = static_cast<int64_t>(order.buckets());
  answer.best_per_model.resize(q.models.size());
  // A point is explored when its design's area bucket is at or above the last bucket its combination visited
  // (buckets are visited from the largest area down).
  std::vector<std::optional<int64_t>> lowest_bucket(combos.size());
  int64_t deepest = 0;
  for (size_t c = 0; c < combos.size(); ++c) {
    const CombinationState& s = states[c];
    answer.combinations.push_back({combos[c], s.buckets_visited, s.designs_visited, s.stop_fired, std::nullopt});
    answer.points_explored += s.designs_visited;
    deepest = std::max(deepest, s.buckets_visited);
    if (s.buckets_visited > 0) {
      const hw::Design& last = designs[order.designs[order.start[static_cast<size_t>(s.buckets_visited - 1)]]];
      lowest_bucket[c] = area_bucket(last.area_um2, q.bucket_um2);
    }
  }
  answer.designs_explored = static_cast<int64_t>(order.start[static_cast<size_t>(deepest)]);

  // Ranked by their outlines; the points shown in full replace them at the end.
  constexpr size_t kHbmField = kDesignFields.size() - 1;
  size_t kept = 0;
  for (PointRow& row : rows) {
    const auto c = static_cast<size_t>(
        std::find(combos.begin(), combos.end(), Combination{row.micro_batch, row.design[kHbmField], row.recompute}) -
        combos.begin());
    if (c == combos.size() || !lowest_bucket[c] || area_bucket(row.area_um2, q.bucket_um2) < *lowest_bucket[c])
      continue;
    const PointOutcome outline = outline_of(row);
    accumulate(answer, outline, top);
    std::optional<PointOutcome>& best = answer.combinations[c].best;
    if (outline.feasible && (!best || better(outline, *best, answer.ranking))) best = outline;
    if (!keep_rows) continue;
    if (&rows[kept] != &row) rows[kept] = std::move(row);  // no self-move: it would empty the row
    ++kept;
  }
  if (keep_rows) rows.resize(kept);
  if (listing.pareto) answer.pareto = pareto_frontiers(rows, q.models.size(), q.global_batch);
  if (keep_all) {
    std::sort(rows.begin(), rows.end(), [](const PointRow& a, const PointRow& b) { return before(a, b); });
    answer.all = std::move(rows);
  }

  std::vector<PointOutcome*> shown;
  if (answer.best) shown.push_back(&*answer.best);
  for (PointOutcome& p : answer.top) shown.push_back(&p);
  for (std::optional<PointOutcome>& p : answer.best_per_model)
    if (p) shown.push_back(&*p);
  for (CombinationResult& r : answer.combinations)
    if (r.best) shown.push_back(&*r.best);
  std::vector<PointOutcome> outlines;
  for (const PointOutcome* p : shown) outlines.push_back(*p);
  std::vector<PointOutcome> full = full_points(outlines);
  if (full.size() != shown.size()) throw std::logic_error("search: a point the answer shows was not found");
  for (size_t i = 0; i < shown.size(); ++i) {
    if (full[i].key != shown[i]->key || full[i].score != shown[i]->score)
      throw std::logic_error("search: a point the answer shows differs from its row: " + shown[i]->key);
    *shown[i] = std::move(full[i]);
  }
  return answer;
}

}  // namespace phaze::search
