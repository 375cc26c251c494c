#pragma once

#include <vector>

#include "placement/chain.h"
#include "placement/planner.h"
#include "placement/stage_costs.h"

namespace phaze::placement {

/// Exact placement under placement.md's reference semantics (corrected terms off), for `phaze place` on
/// files in the original format: the smallest time per batch over contiguous stage partitions,
/// data-parallel degrees d = 1..min(K, N) and widths, under the per-device memory limit, for 1F1B with or
/// without recomputation. The time per batch charges the first stage's parameters (4·(d − 1)·P_first /
/// (d·bandwidth)) and no optimizer step; CorrectedPlanner is the planner of the corrected terms.
///
/// The reference dynamic program keeps a dimension for "at most k devices" (k = 0..K). A stage uses 1 or
/// t devices, so a plan with s stages of which c use t devices needs s + c·(t − 1) devices: the planner
/// keeps (suffix, stages, c) instead, and c is implied by s when every stage has the same devices (the
/// usual case), which removes the factor K. The final round only visits stage counts that fit in K/d
/// devices. Among equal times the first found wins: smaller d, then the longest first stage, then fewer
/// stages.
class ReferencePlanner final : public Planner {
 public:
  /// Best plan over widths (best_over_widths). Throws std::invalid_argument when the corrected terms are on.
  Plan solve(const std::vector<Chain>& chains, const Cluster& cluster) override;
  /// Best plan for one width.
  Plan solve(const Chain& chain, const Cluster& cluster);

 private:
  Plan solve_uniform(const Chain& chain, const Cluster& cluster);
  Plan solve_mixed(const Chain& chain, const Cluster& cluster);
  /// prefix_best_ and prefix_arg_ of solve_mixed's table (n positions, at most `cap` stages): per (suffix,
  /// stages, c) the best over at most c stages on t devices.
  void set_prefix_best(int n, int64_t cap);

  StageCosts costs_;
  std::vector<double> best_;  // best max stage load per (suffix start, stages[, t-device stages])
  std::vector<int> next_;     // where the suffix's first stage ends, for reconstruction
  std::vector<double> prefix_best_;
  std::vector<int> prefix_arg_;
};

}  // namespace phaze::placement
