#pragma once

#include <string>
#include <vector>

#include "placement/chain.h"
#include "placement/stage_costs.h"

namespace phaze::placement {

/// Time per batch of a given plan and its parts (BatchTimeModel), or infeasible with a reason.
struct PlanCheck {
  bool feasible = false;
  double time_per_batch = 0;
  BatchTimeParts parts;  ///< time_per_batch split into its terms
  std::string reason;
};

/// The one evaluator of a plan: infeasible when a stage is empty, does not fit in memory with the
/// micro-batches 1F1B keeps in flight on it, or the plan needs more devices or replicas than there are.
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

/// Whether every stage of `stages` (a plan of `chain`) fits in `cluster`'s memory with the micro-batches 1F1B
/// keeps in flight on it (as evaluate_plan checks it), in O(positions · edges) without the stage tables.
bool stages_fit_memory(const Chain& chain, const std::vector<Stage>& stages, const Cluster& cluster);

/// Whether the clusters differ at most in their memory per device: a plan then takes the same time on both
/// (memory decides only which plans fit), so the best time on the roomier one bounds the other's from below,
/// and is the other's when its plan fits there too.
bool differ_only_in_memory(const Cluster& a, const Cluster& b);

/// Re-evaluates a plan a planner reconstructed from its tables with evaluate_plan, and throws
/// std::logic_error when the two disagree: both use the one BatchTimeModel, so a disagreement is a planner bug.
/// Returns the re-evaluation (for its parts).
PlanCheck recheck_plan(const StageCosts& costs, const Plan& plan, const Cluster& cluster);

}  // namespace phaze::placement
