#pragma once

// The outer architecture search of method.md 7: per outer combination (micro-batch size, HBM size,
// recomputation setting) the designs are visited by area bucket, largest area first, and the visit of a
// combination stops once the maxima of its last `window` buckets with a feasible design are non-increasing.
// Everything here is plain data and pure functions: the driver applies them while it evaluates, and again
// over the stored points to build the answer, so that a resumed run decides exactly as a fresh one.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "hw/enumerate.h"
#include "search/question.h"

namespace phaze::search {

/// One outer combination: everything of a point except the design.
struct Combination {
  int64_t micro_batch = 0;
  int64_t hbm_bytes = 0;
  bool recompute = false;
  bool operator==(const Combination&) const = default;
};

/// The question's combinations: micro-batch sizes (the question's order), within them HBM sizes (the
/// question's order), within them recomputation off before on.
std::vector<Combination> combinations(const SearchQuestion& question);

/// The stop rule's window of a question; nothing under the exact rule, which visits every bucket.
std::optional<int64_t> stop_window(const SearchQuestion& question);

/// Index of ⌊area / bucket width⌋ (area and width in µm²).
int64_t area_bucket(double area_um2, double bucket_um2);

/// The visiting order shared by every combination: designs grouped by area bucket, the bucket of the largest
/// area first, inside a bucket in canonical enumeration order.
struct BucketOrder {
  std::vector<size_t> designs;  ///< indices into the design list, in visiting order
  /// Bucket k (k-th visited) holds the positions start[k] .. start[k + 1] - 1 of `designs`; one more entry
  /// than there are buckets.
  std::vector<size_t> start;
  size_t buckets() const { return start.size() - 1; }
  /// The bucket (visiting rank) of the design at position `position` of `designs`.
  size_t bucket_of(size_t position) const;
};

/// The visiting order of `designs` (canonical order) for buckets of `bucket_um2` µm².
BucketOrder bucket_order(const std::vector<hw::Design>& designs, double bucket_um2);

/// The stop rule on the maxima of the finished buckets that had a feasible design, in visiting order: at
/// least `window` of them, and the last `window` non-increasing (m1 ≥ m2 ≥ … ≥ m_window; equal maxima
/// count as non-increasing).
bool stop_rule_fires(const std::vector<double>& maxima, int64_t window);

/// The architecture search of one combination so far.
struct CombinationState {
  std::vector<double> maxima;   ///< maxima of the finished buckets with a feasible design, in visiting order
  int64_t buckets_visited = 0;  ///< finished buckets, those without a feasible design included
  int64_t designs_visited = 0;  ///< designs of the finished buckets
  bool stop_fired = false;
};

/// Records a finished bucket of `designs` designs whose best feasible score is `bucket_max` (nothing when no
/// design of it is feasible: the bucket is visited but does not enter the window, D23), then applies the stop
/// rule; no window: never stops (the exact rule). Returns whether the combination is still running.
bool finish_bucket(CombinationState& state, std::optional<double> bucket_max, int64_t designs,
                   std::optional<int64_t> window);

/// Whether a combination still visits buckets: its rule has not fired and buckets are left.
bool running(const CombinationState& state, const BucketOrder& order);

/// The search of one combination over a whole sequence of bucket maxima (nothing: no feasible design), one
/// design per bucket: where it stops, or every bucket visited.
CombinationState search_buckets(const std::vector<std::optional<double>>& bucket_maxima, int64_t window);

/// A point's score as the rule sees it; nothing when the point is infeasible.
using ScoreOf = std::function<std::optional<double>(size_t position, size_t combination)>;

/// The best score of bucket `bucket` for `combination`, over the designs of that bucket.
std::optional<double> bucket_maximum(const BucketOrder& order, size_t bucket, size_t combination, const ScoreOf& score);

/// Replays the search of every combination over known scores (`score` of position and combination, asked only
/// for the buckets a combination visits).
std::vector<CombinationState> replay(const BucketOrder& order, size_t combinations, const ScoreOf& score,
                                     std::optional<int64_t> window);

}  // namespace phaze::search
