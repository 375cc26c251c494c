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
    if (!best || better_for_model(point, *best, m)) best = point;
  }
}

}  // namespace

void accumulate(SearchAnswer& answer, const PointOutcome& point, int64_t top) {
  if (point.feasible) {
    ++answer.feasible_points;
    if (!answer.best || better(point, *answer.best)) answer.best = point;
    if (top > 0) {
      // One entry per design (chip and HBM size), with its best micro-batch and recomputation setting.
      const auto same = std::find_if(answer.top.begin(), answer.top.end(),
                                     [&](const PointOutcome& p) { return same_design(p.design, point.design); });
      if (same != answer.top.end()) {
        if (!better(point, *same)) return accumulate_per_model(answer, point);
        answer.top.erase(same);
      }
      auto at = std::upper_bound(answer.top.begin(), answer.top.end(), point, better);
      if (at - answer.top.begin() < top) {
        answer.top.insert(at, point);
        if (static_cast<int64_t>(answer.top.size()) > top) answer.top.pop_back();
      }
    }
  }
  accumulate_per_model(answer, point);
}

SearchAnswer build_answer(const SearchQuestion& q, const std::vector<hw::Design>& designs, const BucketOrder& order,
                          const std::vector<Combination>& combos, const ScoreMap& scores,
                          const std::function<void(const std::function<void(PointOutcome&&)>&)>& visit_points,
                          int64_t top, bool keep_all) {
  const std::vector<CombinationState> states = replay(
      order, combos.size(),
      [&](size_t position, size_t c) {
        const auto found = scores.find(point_key_for(designs[order.designs[position]], combos[c]));
        if (found == scores.end()) throw std::logic_error("search: a point the answer needs was never evaluated");
        return found->second;
      },
      stop_window(q));

  SearchAnswer answer;
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

  visit_points([&](PointOutcome&& p) {
    const auto c = static_cast<size_t>(
        std::find(combos.begin(), combos.end(), Combination{p.micro_batch, p.design.hbm_bytes, p.recompute}) -
        combos.begin());
    if (c == combos.size() || !lowest_bucket[c] || area_bucket(p.area_um2, q.bucket_um2) < *lowest_bucket[c]) return;
    accumulate(answer, p, top);
    std::optional<PointOutcome>& best = answer.combinations[c].best;
    if (p.feasible && (!best || better(p, *best))) best = p;
    if (keep_all) answer.all.push_back(std::move(p));
  });
  if (keep_all) std::sort(answer.all.begin(), answer.all.end(), before);
  return answer;
}

}  // namespace phaze::search
