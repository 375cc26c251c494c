#pragma once

#include <cstdint>

#include "placement/chain.h"

namespace phaze::placement {

/// What the time per batch of a plan depends on, besides the cluster. Each time model reads one of the two
/// parameter figures; a planner fills the one of the model it is exact for (the other may stay 0).
struct PipelineShape {
  double max_stage_load = 0;  ///< seconds: the slowest stage's forward and backward of one micro-batch
  int64_t stages = 1;         ///< p
  int64_t data_parallel = 1;  ///< d
  /// Bytes per device of the first stage: the reference's data-parallel term charges them.
  double first_stage_parameter_bytes = 0;
  /// Bytes per device of the largest stage: the corrected terms charge them (ring all-reduce and optimizer
  /// step of every stage run at the same time, so the largest sets both).
  double max_stage_parameter_bytes = 0;
};

/// A time per batch and its terms, in seconds (in the reference format: the unit of the input).
struct BatchTime {
  /// What the planners minimise and report. The terms are summed in a fixed order of their own, so
  /// parts.total() may differ from it in the last bit.
  double total = 0;
  BatchTimeParts parts;
};

/// The one time per batch of placement, for every planner and evaluator (so a plan a planner reconstructs
/// re-evaluates to the same bits). With `cluster.corrected.enabled` off, placement.md's formula:
///
///     max load · (⌈N/d⌉ + p − 1) + 4·(d − 1)·P_first / (d·bandwidth)
///
/// on, ours (method.md D22, D3):
///
///     max load · (⌈N/d⌉ + p − 1) + (ring all-reduce(P_max, d) + P_max · optimizer seconds per byte)
///
/// with the ring all-reduce of accelerator.md 7, 2·(d − 1)/d · P_max / BW + 2·(d − 1)·α, on the
/// data-parallel links (CorrectedTerms::sync_bandwidth, else Cluster::bandwidth). Every read of the links and
/// of the corrected terms' constants is here.
BatchTime batch_time(const PipelineShape& shape, const Cluster& cluster);

}  // namespace phaze::placement
