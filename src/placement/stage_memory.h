#pragma once

#include <cmath>
#include <cstdint>

#include "placement/chain.h"

namespace phaze::placement {

/// Bytes one device of a stage holds, from its layers at the chain's width (ChainNode's figures are per
/// device already, so the width is in them).
struct StageFootprint {
  double parameter_bytes = 0;   ///< the stage's weights
  double activation_bytes = 0;  ///< stashed for one micro-batch
  /// Held for each further micro-batch in flight: what the stage keeps of a micro-batch until its backward
  /// pass. PHAZE's planners take whole_stage_stash_bytes; the stagewise planner the kept layers' activations
  /// plus each recomputed run's input.
  double stash_bytes = 0;
};

/// The stash of a stage that recomputes all its layers or none (PHAZE's rule, placement.md "Memory"): with
/// recomputation only the `boundary_bytes` that entered the stage from earlier stages (the rest is rebuilt
/// in the backward pass), else its `activation_bytes`.
inline double whole_stage_stash_bytes(double activation_bytes, double boundary_bytes, const Cluster& cluster) {
  return cluster.recompute ? boundary_bytes : activation_bytes;
}

/// Bytes held whatever the micro-batches in flight: the weights with their gradients and the optimizer's
/// state (held_bytes_per_parameter_byte: SGD ×2, PHAZE's Adam ×3, mixed-precision Adam ×9), and one
/// micro-batch's activations.
inline double resident_bytes(const StageFootprint& stage, const Cluster& cluster) {
  return held_bytes_per_parameter_byte(cluster.optimizer) * stage.parameter_bytes + stage.activation_bytes;
}

/// Bytes one device of the stage holds with `in_flight` ≥ 1 micro-batches begun and not finished
/// (placement.md, "Memory").
inline double stage_memory_bytes(const StageFootprint& stage, int64_t in_flight, const Cluster& cluster) {
  return resident_bytes(stage, cluster) + static_cast<double>(in_flight - 1) * stage.stash_bytes;
}

/// The most micro-batches in flight, at most K = Cluster::devices (no plan has more stages), with which
/// the stage fits in Cluster::memory_bytes; 0 when not even one does. Under 1F1B a stage holds one
/// micro-batch per stage from it to the last, so this is also the most stages from it to the end.
///
/// Inline: StageCosts calls it for every stage of every chain, about a tenth of a reference solve when it
/// was out of line.
inline int64_t max_in_flight(const StageFootprint& stage, const Cluster& cluster) {
  if (stage_memory_bytes(stage, cluster.devices, cluster) <= cluster.memory_bytes) return cluster.devices;
  const double resident = resident_bytes(stage, cluster);
  if (resident > cluster.memory_bytes) return 0;
  return 1 + static_cast<int64_t>(std::floor((cluster.memory_bytes - resident) / stage.stash_bytes));
}

}  // namespace phaze::placement
