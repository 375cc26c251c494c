#pragma once

#include <vector>

#include "placement/chain.h"

namespace phaze::placement {

/// One way of recomputing part of a stage (per-layer recomputation, the stagewise planner): the layers in
/// the set keep only a checkpoint for the backward pass and re-run their forward pass before it.
struct RecomputeOption {
  double reforward_s = 0;  ///< seconds: Σ forward times of the recomputed layers
  /// Bytes the stage keeps per further micro-batch in flight: the activations of every layer it does not
  /// recompute, plus per run of consecutive recomputed layers the input of the run's first layer (the
  /// checkpoint the run is rebuilt from).
  double stash_bytes = 0;
  std::vector<int> layers;  ///< chain positions recomputed, ascending (filled only when tracked)
};

/// The non-dominated recomputation sets of a growing stage [first, j) of a chain: no other set re-runs
/// fewer forward seconds and stashes fewer bytes. Computed exactly by a sweep over the stage with two
/// frontiers, "last layer kept" and "last layer recomputed"; a stage of c identical layers has about c
/// options. Recomputing nothing is always the first option (reforward 0), recomputing everything from the
/// stage's input the last one when allowed: the two whole-stage settings of PHAZE's planner.
class RecomputeFrontier {
 public:
  /// Starts an empty stage. `allowed` false: only the empty set (no recomputation). `track`: fill
  /// RecomputeOption::layers (for the stages of an answer).
  void start(bool allowed, bool track);
  /// Extends the stage by the layer at chain position `position` with its forward seconds and activation
  /// bytes, whose input (the checkpoint of a run that starts with it) is `input_bytes`.
  void add(int position, double forward_s, double activation_bytes, double input_bytes);
  /// Options of the stage so far: reforward_s ascending, stash_bytes strictly descending.
  const std::vector<RecomputeOption>& options() const { return all_; }

 private:
  static void prune(std::vector<RecomputeOption>& options);

  bool allowed_ = true;
  bool track_ = false;
  std::vector<RecomputeOption> kept_;        // sets whose last layer is kept
  std::vector<RecomputeOption> recomputed_;  // sets whose last layer is recomputed
  std::vector<RecomputeOption> all_, next_kept_, next_recomputed_;
};

}  // namespace phaze::placement
