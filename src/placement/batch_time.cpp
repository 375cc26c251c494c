#include "placement/batch_time.h"

#include "cost/vector_cost.h"

namespace phaze::placement {

namespace {

/// ⌈N/d⌉: the micro-batches of one replica, each through the slowest stage in the steady state.
int64_t micro_batches_per_replica(int64_t micro_batches, int64_t data_parallel) {
  return (micro_batches + data_parallel - 1) / data_parallel;
}

/// placement.md's data-parallel term: 4·(d − 1)·P_first / (d·bandwidth).
double reference_sync(const PipelineShape& shape, const Cluster& cluster) {
  return 4.0 * static_cast<double>(shape.data_parallel - 1) * shape.first_stage_parameter_bytes /
         (cluster.bandwidth * static_cast<double>(shape.data_parallel));
}

/// The ring all-reduce of the largest stage's gradients over the d replicas.
double corrected_sync(const PipelineShape& shape, const Cluster& cluster) {
  const CorrectedTerms& c = cluster.corrected;
  const double bandwidth = c.sync_bandwidth > 0 ? c.sync_bandwidth : cluster.bandwidth;
  return cost::all_reduce_seconds(shape.max_stage_parameter_bytes, shape.data_parallel, bandwidth, c.ring_latency_s);
}

}  // namespace

BatchTime batch_time(const PipelineShape& shape, const Cluster& cluster) {
  const int64_t per_replica = micro_batches_per_replica(cluster.micro_batches, shape.data_parallel);
  const double slots = static_cast<double>(per_replica + shape.stages - 1);
  BatchTime t;
  t.parts.steady_state = shape.max_stage_load * static_cast<double>(per_replica);
  t.parts.fill_drain = shape.max_stage_load * static_cast<double>(shape.stages - 1);
  if (cluster.corrected.enabled) {
    t.parts.data_parallel_sync = corrected_sync(shape, cluster);
    t.parts.optimizer_step = shape.max_stage_parameter_bytes * cluster.corrected.optimizer_seconds_per_byte;
    // Both once-per-iteration terms first, then the pipeline: the order the planners were validated with.
    t.total = shape.max_stage_load * slots + (t.parts.data_parallel_sync + t.parts.optimizer_step);
  } else {
    t.parts.data_parallel_sync = reference_sync(shape, cluster);
    t.total = shape.max_stage_load * slots + t.parts.data_parallel_sync;
  }
  return t;
}

}  // namespace phaze::placement
