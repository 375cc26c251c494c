#pragma once

#include <cstdint>

#include "cost/vector_cost.h"
#include "placement/chain.h"
#include "placement/links.h"

namespace phaze::placement {

/// What the time per batch of a plan depends on, besides the cluster and the data-parallel degree. Each time
/// model reads one of the two parameter figures; a planner fills the one of the model it is exact for (the
/// other may stay 0).
struct PipelineShape {
  double max_stage_load = 0;  ///< seconds: the slowest stage's forward and backward of one micro-batch
  int64_t stages = 1;         ///< p
  /// Bytes per device of the first stage: the reference's data-parallel term charges them.
  double first_stage_parameter_bytes = 0;
  /// Bytes per device of the largest stage: the corrected terms charge them (ring all-reduce and optimizer
  /// step of every stage run at the same time, so the largest sets both).
  double max_stage_parameter_bytes = 0;
};

/// ⌈N/d⌉: the micro-batches one of d replicas runs in a batch of N.
inline int64_t replica_micro_batches(int64_t micro_batches, int64_t data_parallel) {
  return (micro_batches + data_parallel - 1) / data_parallel;
}

/// A stage's slots on the pipeline's critical path: its replica's ⌈N/d⌉ micro-batches plus the p − 1 of fill
/// and drain, each at the stage's load. The pipeline term of every time per batch is its largest
/// `slots · load`.
inline int64_t pipeline_slots(int64_t micro_batches, int64_t data_parallel, int64_t stages) {
  return replica_micro_batches(micro_batches, data_parallel) + stages - 1;
}

/// The corrected terms' once-per-iteration cost of one stage (method.md D22, D3): the ring all-reduce of its
/// P parameter bytes per device over its d replicas on its data-parallel link (accelerator.md 7; the link
/// follows the plan's layout, placement/links.h), then the optimizer step over those bytes. Every stage runs
/// both at the same time, so the largest sets the tail. The one place the corrected terms price the
/// all-reduce and read the optimizer's seconds per byte.
class StageSyncModel {
 public:
  explicit StageSyncModel(const Cluster& cluster)
      : optimizer_seconds_per_byte_(cluster.corrected.optimizer_seconds_per_byte) {}

  /// Seconds of the ring all-reduce of `parameter_bytes` over `data_parallel` replicas on `link`.
  static double sync_s(double parameter_bytes, int64_t data_parallel, const cost::GroupLink& link) {
    return cost::all_reduce_seconds(parameter_bytes, data_parallel, link.bandwidth, link.latency_s);
  }
  /// Seconds of the optimizer step over `parameter_bytes`.
  double optimizer_s(double parameter_bytes) const { return parameter_bytes * optimizer_seconds_per_byte_; }
  /// Both, in the order every answer was computed in.
  double total_s(double parameter_bytes, int64_t data_parallel, const cost::GroupLink& link) const {
    return sync_s(parameter_bytes, data_parallel, link) + optimizer_s(parameter_bytes);
  }

 private:
  double optimizer_seconds_per_byte_;
};

/// A time per batch and its terms, in seconds (in the reference format: the unit of the input).
struct BatchTime {
  /// What the planners minimise and report. The terms are summed in a fixed order of their own, so
  /// parts.total() may differ from it in the last bit.
  double total = 0;
  BatchTimeParts parts;
};

/// The one time per batch of placement, for every planner and evaluator (so a plan a planner reconstructs
/// re-evaluates to the same bits), at one data-parallel degree d of replicas on R devices each, on one
/// cluster. With `cluster.corrected.enabled` off, placement.md's formula:
///
///     max load · (⌈N/d⌉ + p − 1) + 4·(d − 1)·P_first / (d·bandwidth)
///
/// (bandwidth: reference_link's); on, ours (method.md D22, D3):
///
///     max load · (⌈N/d⌉ + p − 1) + (ring all-reduce(P_max, d) + P_max · optimizer seconds per byte)
///
/// with the ring all-reduce of accelerator.md 7, 2·(d − 1)/d · P_max / BW + 2·(d − 1)·α, on the plan's
/// data-parallel link (ring_link of d and R: its effective bandwidth and latency), StageSyncModel.
/// The stagewise planner and its evaluator, whose stages each have their own d, take the same three rules
/// per stage: pipeline_slots, StageSyncModel and the sum of the two largest terms.
///
/// Bound to d and R because the planners price many plans per pair in their innermost loops: what depends
/// on them and the cluster alone is computed once, to the same bits, and inline the compiler drops the parts
/// when only the total is read (computed per plan and out of line, the reference planner took about a sixth
/// longer).
class BatchTimeModel {
 public:
  /// The link the data-parallel term reads for `data_parallel` replicas of `replica_devices` devices:
  /// ring_link with the corrected terms, reference_link (the same for every plan) without.
  static cost::GroupLink sync_link(const Cluster& cluster, int64_t data_parallel, int64_t replica_devices) {
    return cluster.corrected.enabled ? ring_link(cluster, data_parallel, replica_devices) : reference_link(cluster);
  }
  BatchTimeModel(const Cluster& cluster, int64_t data_parallel, int64_t replica_devices)
      : BatchTimeModel(cluster, data_parallel, sync_link(cluster, data_parallel, replica_devices)) {}
  /// With the link sync_link gives, computed once by a caller that prices many plans on it.
  BatchTimeModel(const Cluster& cluster, int64_t data_parallel, const cost::GroupLink& link)
      : corrected_(cluster.corrected.enabled),
        data_parallel_(data_parallel),
        per_replica_(replica_micro_batches(cluster.micro_batches, data_parallel)),
        reference_sync_numerator_(4.0 * static_cast<double>(data_parallel - 1)),
        reference_sync_denominator_(link.bandwidth * static_cast<double>(data_parallel)),
        link_(link),
        sync_(cluster) {}

  BatchTime batch_time(const PipelineShape& shape) const {
    const double slots = static_cast<double>(per_replica_ + shape.stages - 1);
    BatchTime t;
    t.parts.steady_state = shape.max_stage_load * static_cast<double>(per_replica_);
    t.parts.fill_drain = shape.max_stage_load * static_cast<double>(shape.stages - 1);
    if (corrected_) {
      t.parts.data_parallel_sync = StageSyncModel::sync_s(shape.max_stage_parameter_bytes, data_parallel_, link_);
      t.parts.optimizer_step = sync_.optimizer_s(shape.max_stage_parameter_bytes);
      // Both once-per-iteration terms first, then the pipeline: the order every answer was computed in.
      t.total = shape.max_stage_load * slots + (t.parts.data_parallel_sync + t.parts.optimizer_step);
    } else {
      t.parts.data_parallel_sync =
          reference_sync_numerator_ * shape.first_stage_parameter_bytes / reference_sync_denominator_;
      t.total = shape.max_stage_load * slots + t.parts.data_parallel_sync;
    }
    return t;
  }

 private:
  bool corrected_;
  int64_t data_parallel_;              // d
  int64_t per_replica_;                // ⌈N/d⌉ micro-batches of one replica
  double reference_sync_numerator_;    // 4·(d − 1)
  double reference_sync_denominator_;  // bytes per second · d
  cost::GroupLink link_;               // the corrected terms' data-parallel ring
  StageSyncModel sync_;
};

}  // namespace phaze::placement
