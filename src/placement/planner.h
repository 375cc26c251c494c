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
/// With `Cluster::corrected` on, the time per batch charges the largest stage's parameters (ring
/// all-reduce and optimizer step), a second bottleneck next to the largest stage load. The planner then
/// keeps, per (suffix, stages[, t-device stages]), the Pareto frontier of (largest stage parameter bytes,
/// smallest largest load): the optimum for every cap on the stage parameters at once, which is the cap
/// sweep of method.md D22 without a dynamic program per cap. The time is increasing in both, so the best
/// plan is on the frontier of the whole chain, and every frontier point is the exact figure of the plan it
/// reconstructs to. The search stays exact (tests: brute force over all partitions, d and widths). Among
/// equal times the first found wins: smaller d, then fewer stages, then smaller stage parameters.
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
  Plan solve_corrected(const Chain& chain, const Cluster& cluster);

  /// One point of a frontier: a partial plan (a suffix of the chain in a given number of stages).
  struct FrontPoint {
    double params = 0;  // largest stage parameter bytes of the partial plan
    double load = 0;    // its largest stage load
    int next = -1;      // end of its first stage, where the rest of the plan starts (-1: nothing left)
    int pick = -1;      // the rest of the plan: index of its point within the frontier of `next`
  };

  /// Merges into the frontier `acc` the frontier `rest` (rest_size points) extended by a first stage of
  /// `load` and `params` that ends at `next`. A frontier lists points by strictly increasing params and
  /// strictly decreasing load: point k holds the smallest largest load of the partial plans whose stages
  /// all hold at most params_k bytes, and is that of the plan it reconstructs to.
  void extend_frontier(std::vector<FrontPoint>& acc, const FrontPoint* rest, int rest_size, double load, double params,
                       int next);

  StageCosts costs_;
  std::vector<double> best_;  // best max stage load per (suffix start, stages[, t-device stages])
  std::vector<int> next_;     // where the suffix's first stage ends, for reconstruction
  std::vector<double> prefix_best_;
  std::vector<int> prefix_arg_;
  // Corrected terms: frontiers of every (suffix start, stages[, t-device stages]) cell, as slices of pool_.
  std::vector<FrontPoint> pool_;
  std::vector<int> front_begin_, front_size_;
  std::vector<std::vector<FrontPoint>> row_;  // frontiers of the cell being built, per wide-stage count
  std::vector<FrontPoint> merged_;
  std::vector<char> closed_;   // per wide-stage count of the cell being built: no longer first stage can help
  std::vector<double> floor_;  // per stage end: the smallest load of any longer stage from the same start
  std::vector<int> lowest_;    // per stage count: the smallest suffix start with a plan in that many stages
};

/// Time per batch of a given plan and its parts (placement.md's formula, or the corrected one when
/// `cluster.corrected.enabled`), or infeasible with a reason when a stage is empty, does not fit in
/// memory, or the plan needs more devices or replicas than there are.
struct PlanCheck {
  bool feasible = false;
  double time_per_batch = 0;
  BatchTimeParts parts;  ///< time_per_batch split into its terms
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
