#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "placement/chain.h"

namespace phaze::placement {

/// One stage of a stagewise plan: its own width, data-parallel degree and recomputed layers.
struct StagewiseStage {
  int first = 0;  ///< chain positions [first, last)
  int last = 0;
  size_t chain = 0;             ///< index of the chain (width) its layers run at
  int64_t width = 1;            ///< t of that chain
  int64_t devices = 1;          ///< per replica: t when it holds a tensor-parallel layer, else 1
  int64_t data_parallel = 1;    ///< d: replicas of this stage
  std::vector<int> recomputed;  ///< chain positions whose forward pass its backward pass re-runs, ascending
  double load_s = 0;            ///< seconds: forward and backward of one micro-batch, re-forwards included
  double parameter_bytes = 0;   ///< per device
  double memory_bytes = 0;      ///< per device at the stage's peak (StagewiseCheck::memory_bytes)
  bool operator==(const StagewiseStage&) const = default;
};

/// A plan whose stages each have their own width, degree and recomputation (the stagewise planner). Time
/// per batch (phaze's semantics generalised; equal to BatchTimeModel's, bit for bit, when every stage has
/// the same degree):
///
///     max_k (⌈N/d_k⌉ + p − 1)·L_k  +  max_k (all-reduce(P_k, d_k) + P_k · optimizer seconds per byte)
///
/// Stage k runs ⌈N/d_k⌉ micro-batches of its replica plus the p − 1 slots of fill and drain at its own load
/// L_k; each stage all-reduces its own gradients over its d_k replicas (ring, on the data-parallel link) and
/// then updates its P_k bytes, all stages at once, so the slowest of those sets the tail.
struct StagewisePlan {
  bool feasible = false;
  std::vector<StagewiseStage> stages;  ///< first stage first
  double time_per_batch = 0;           ///< seconds
  /// steady_state and fill_drain of the stage with the largest first term, data_parallel_sync and
  /// optimizer_step of the stage with the largest second term.
  BatchTimeParts parts;
  int64_t devices() const;  ///< Σ devices · data_parallel
};

/// Bytes entering position v of a pure chain (the edge from v − 1; none at the first position): what a
/// stage starting at v receives, and the checkpoint of a run of recomputed layers starting at v.
inline double input_bytes(const Chain& chain, int v) {
  return v > 0 ? chain.edges[static_cast<size_t>(v - 1)].bytes : 0.0;
}

/// The per-stage figures of a chain at one width for the stagewise planner and its evaluator.
struct StagewiseCheck {
  bool feasible = false;
  double time_per_batch = 0;
  BatchTimeParts parts;
  std::vector<double> loads_s;  ///< per stage
  /// Per stage, the bytes one device holds at its peak (stage_memory_bytes with p − k micro-batches in flight).
  std::vector<double> memory_bytes;
  std::string reason;  ///< when infeasible
};

/// The one evaluator of stagewise plans: checks that the stages cover the chains in order, their widths and
/// degrees, the devices, that each recomputed layer lies in its stage (and none without recomputation
/// allowed, Cluster::recompute), and that every stage fits in memory with the micro-batches 1F1B keeps in
/// flight on it; then prices the plan. `chains` are pure chains (edges only between consecutive positions)
/// of equal length.
StagewiseCheck evaluate_stagewise(const std::vector<Chain>& chains, const std::vector<StagewiseStage>& stages,
                                  const Cluster& cluster);

}  // namespace phaze::placement
