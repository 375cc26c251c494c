#include "search/buckets.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace phaze::search {

std::vector<Combination> combinations(const SearchQuestion& q) {
  std::vector<Combination> out;
  for (int64_t b : q.micro_batches)
    for (int64_t hbm : q.hbm_bytes)
      for (bool rc : recompute_values(q.recompute)) out.push_back({b, hbm, rc});
  return out;
}

std::optional<int64_t> stop_window(const SearchQuestion& q) {
  return q.stop_rule == StopRule::Exact ? std::nullopt : std::optional<int64_t>(q.stop_window);
}

int64_t area_bucket(double area_um2, double bucket_um2) {
  // Clamped so that an absurdly fine width cannot overflow; the kept areas are far below the bound.
  constexpr double kLimit = 4.0e18;
  return static_cast<int64_t>(std::clamp(std::floor(area_um2 / bucket_um2), -kLimit, kLimit));
}

size_t BucketOrder::bucket_of(size_t position) const {
  return static_cast<size_t>(std::upper_bound(start.begin(), start.end(), position) - start.begin()) - 1;
}

BucketOrder bucket_order(const std::vector<hw::Design>& designs, double bucket_um2) {
  BucketOrder order;
  std::vector<int64_t> bucket(designs.size());
  for (size_t i = 0; i < designs.size(); ++i) bucket[i] = area_bucket(designs[i].area_um2, bucket_um2);
  order.designs.resize(designs.size());
  std::iota(order.designs.begin(), order.designs.end(), size_t{0});
  // Stable: inside a bucket the canonical order (the design list's) stays.
  std::stable_sort(order.designs.begin(), order.designs.end(),
                   [&](size_t a, size_t b) { return bucket[a] > bucket[b]; });
  for (size_t p = 0; p < order.designs.size(); ++p)
    if (p == 0 || bucket[order.designs[p]] != bucket[order.designs[p - 1]]) order.start.push_back(p);
  order.start.push_back(order.designs.size());
  return order;
}

bool stop_rule_fires(const std::vector<double>& maxima, int64_t window) {
  if (window <= 0 || maxima.size() < static_cast<size_t>(window)) return false;
  return std::is_sorted(maxima.end() - window, maxima.end(), std::greater<double>());
}

bool finish_bucket(CombinationState& state, std::optional<double> bucket_max, int64_t designs,
                   std::optional<int64_t> window) {
  ++state.buckets_visited;
  state.designs_visited += designs;
  if (bucket_max) {
    state.maxima.push_back(*bucket_max);
    state.stop_fired = window && stop_rule_fires(state.maxima, *window);
  }
  return !state.stop_fired;
}

bool running(const CombinationState& state, const BucketOrder& order) {
  return !state.stop_fired && state.buckets_visited < static_cast<int64_t>(order.buckets());
}

CombinationState search_buckets(const std::vector<std::optional<double>>& bucket_maxima, int64_t window) {
  CombinationState state;
  for (const std::optional<double>& m : bucket_maxima)
    if (!finish_bucket(state, m, 1, window)) break;
  return state;
}

std::optional<double> bucket_maximum(const BucketOrder& order, size_t bucket, size_t combination,
                                     const ScoreOf& score) {
  std::optional<double> best;
  for (size_t p = order.start[bucket]; p < order.start[bucket + 1]; ++p) {
    const std::optional<double> s = score(p, combination);
    if (s && (!best || *s > *best)) best = s;
  }
  return best;
}

std::vector<CombinationState> replay(const BucketOrder& order, size_t combinations, const ScoreOf& score,
                                     std::optional<int64_t> window) {
  std::vector<CombinationState> states(combinations);
  for (size_t c = 0; c < combinations; ++c)
    for (size_t k = 0; running(states[c], order); ++k) {
      const auto designs = static_cast<int64_t>(order.start[k + 1] - order.start[k]);
      finish_bucket(states[c], bucket_maximum(order, k, c, score), designs, window);
    }
  return states;
}

}  // namespace phaze::search
