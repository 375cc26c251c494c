#pragma once

// Clusters of the hand-worked placement tests.

#include <cstdint>

#include "placement/chain.h"

namespace phaze::placement::testing {

/// K devices of M bytes on links of `bandwidth` bytes per second, N micro-batches per batch.
inline Cluster cluster(int64_t K, int64_t N, double M, double bandwidth, bool recompute = false,
                       Optimizer optimizer = Optimizer::Sgd) {
  Cluster c;
  c.devices = K;
  c.micro_batches = N;
  c.memory_bytes = M;
  c.pipeline_link.bandwidth = c.data_parallel_link.bandwidth = bandwidth;
  c.recompute = recompute;
  c.optimizer = optimizer;
  return c;
}

/// `c` with the corrected terms on: α seconds per ring step, the data-parallel link's bytes per second (0:
/// the pipeline link's) and the optimizer's seconds per parameter byte.
inline Cluster with_corrected(Cluster c, double ring_latency_s, double sync_bandwidth,
                              double optimizer_seconds_per_byte) {
  c.corrected.enabled = true;
  c.data_parallel_link.latency_s = ring_latency_s;
  if (sync_bandwidth > 0) c.data_parallel_link.bandwidth = sync_bandwidth;
  c.corrected.optimizer_seconds_per_byte = optimizer_seconds_per_byte;
  return c;
}

}  // namespace phaze::placement::testing
