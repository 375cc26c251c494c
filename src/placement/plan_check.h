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
PlanCheck check_plan(const StageCosts& costs, const std::vector<Stage>& stages, int64_t data_parallel,
                     const Cluster& cluster);

/// A hand-set plan, as the method's tables and the placement format's fixed strategy give it: p pipeline
/// stages, every stage on t devices, d replicas (p·t·d devices). Two rules cut a chain into its stages:
/// the reference's (evaluate_hand_set) and ours (hand_set_stages).
struct HandSetPlan {
  int64_t pipeline = 1;       ///< p
  int64_t width = 1;          ///< t
  int64_t data_parallel = 1;  ///< d
  bool operator==(const HandSetPlan&) const = default;
};

/// The reference's hand-set strategy on the chain of width t: p stages of ⌈L/p⌉ chain positions each in
/// topological order, all positions from L on in the last stage (L = `transformer_layers`, the placement
/// format's numTransformerLayers).
PlanCheck evaluate_hand_set(const std::vector<Chain>& chains, const Cluster& cluster, const HandSetPlan& plan,
                            int64_t transformer_layers);

/// The stages of a hand-set plan over the chain of a model with `layers` transformer layers (position 0 the
/// embedding, 1..L the layers, L + 1 the head), by our rule (method.md D26): ⌈L/p⌉ transformer layers per
/// stage in order, the embedding in the first stage, the head and whatever layers remain in the last; every
/// stage on t devices. A stage past the last layer is empty ([first, first)), as when ⌈L/p⌉·(p − 2) ≥ L.
std::vector<Stage> hand_set_stages(int64_t layers, const HandSetPlan& plan);

/// Whether every stage of `stages` (a plan of `chain`) fits in `cluster`'s memory with the micro-batches 1F1B
/// keeps in flight on it (as check_plan checks it), in O(positions · edges) without the stage tables.
bool stages_fit_memory(const Chain& chain, const std::vector<Stage>& stages, const Cluster& cluster);

/// Bytes one device of each stage of `stages` (a plan of `chain`) holds at its peak: its weights with their
/// gradients (and optimizer state), one micro-batch's activations and the stash of each further micro-batch
/// 1F1B keeps in flight on it (p − q on stage q), by PHAZE's whole-stage recomputation rule (stage_memory.h).
std::vector<double> stage_peak_bytes(const Chain& chain, const std::vector<Stage>& stages, const Cluster& cluster);

/// Whether the clusters differ at most in their memory per device: a plan then takes the same time on both
/// (memory decides only which plans fit), so the best time on the roomier one bounds the other's from below,
/// and is the other's when its plan fits there too.
bool differ_only_in_memory(const Cluster& a, const Cluster& b);

/// Re-evaluates a plan a planner reconstructed from its tables with check_plan, and throws
/// std::logic_error when the two disagree: both use the one BatchTimeModel, so a disagreement is a planner bug.
/// Returns the re-evaluation (for its parts).
PlanCheck recheck_plan(const StageCosts& costs, const Plan& plan, const Cluster& cluster);

}  // namespace phaze::placement
