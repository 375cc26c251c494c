#pragma once

#include <string>
#include <vector>

#include "placement/chain.h"
#include "placement/stage_costs.h"

namespace phaze::placement {

/// Exact pipeline / tensor / data-parallel placement (placement.md): the smallest time per batch over
/// contiguous stage partitions, data-parallel degrees d = 1..min(K, N) and widths, under the per-device
/// memory limit, for 1F1B with or without recomputation.
///
/// The reference dynamic program keeps a dimension for "at most k devices" (k = 0..K). A stage uses 1 or
/// t devices, so a plan with s stages of which c use t devices needs s + c·(t − 1) devices: the planner
/// keeps (suffix, stages, c) instead, and c is implied by s when every stage has the same devices (the
/// usual case), which removes the factor K. The final round only visits stage counts that fit in K/d
/// devices.
///
/// A Planner owns its work buffers: create one and call it repeatedly (different latencies, memory
/// limits or clusters on the same graph shape) without allocating after the first call.
class Planner {
 public:
  /// Best plan for one width; `feasible` is false when nothing fits.
  Plan solve(const Chain& chain, const Cluster& cluster);
  /// Best plan over widths, visited in ascending width; a later width must be strictly faster to win.
  Plan solve(const std::vector<Chain>& chains, const Cluster& cluster);

 private:
  Plan solve_uniform(const Chain& chain, const Cluster& cluster);
  Plan solve_mixed(const Chain& chain, const Cluster& cluster);

  StageCosts costs_;
  std::vector<double> best_;  // best max stage load per (suffix start, stages[, t-device stages])
  std::vector<int> next_;     // where the suffix's first stage ends, for reconstruction
  std::vector<double> prefix_best_;
  std::vector<int> prefix_arg_;
};

/// Time per batch of a given plan (placement.md's formula), or infeasible with a reason when a stage is
/// empty, does not fit in memory, or the plan needs more devices or replicas than there are.
struct PlanCheck {
  bool feasible = false;
  double time_per_batch = 0;
  std::string reason;
};
PlanCheck evaluate_plan(const StageCosts& costs, const std::vector<Stage>& stages, int64_t data_parallel,
                        const Cluster& cluster);

/// The reference's hand-set strategy: p stages of ⌈L/p⌉ chain positions each in topological order, all
/// positions from L on in the last stage, every stage on t devices, d replicas.
struct HandSetPlan {
  int64_t pipeline = 1;            ///< p
  int64_t width = 1;               ///< t
  int64_t data_parallel = 1;       ///< d
  int64_t transformer_layers = 0;  ///< L
};
PlanCheck evaluate_hand_set(const std::vector<Chain>& chains, const Cluster& cluster, const HandSetPlan& plan);

}  // namespace phaze::placement
