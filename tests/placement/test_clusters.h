#pragma once

// Clusters of the hand-worked placement tests, and the links of a layout written out for the brute forces.

#include <algorithm>
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
  c.pipeline_network.tiers[0].bandwidth = c.data_parallel_network.tiers[0].bandwidth = bandwidth;
  c.recompute = recompute;
  c.optimizer = optimizer;
  return c;
}

/// `c` with the corrected terms on: α seconds per ring step, the data-parallel link's bytes per second (0:
/// the pipeline link's) and the optimizer's seconds per parameter byte.
inline Cluster with_corrected(Cluster c, double ring_latency_s, double sync_bandwidth,
                              double optimizer_seconds_per_byte) {
  c.corrected.enabled = true;
  c.data_parallel_network.tiers[0].latency_s = ring_latency_s;
  if (sync_bandwidth > 0) c.data_parallel_network.tiers[0].bandwidth = sync_bandwidth;
  c.corrected.optimizer_seconds_per_byte = optimizer_seconds_per_byte;
  return c;
}

/// A link as the brute force reads it: bytes per second and seconds per message.
struct RefLink {
  double bandwidth = 0;
  double latency_s = 0;
};

/// The link of a ring of `size` devices `stride` apart, written out for networks of one or two tiers
/// (docs/execution-models.md, "Network rules"): inside one group of the inner tier, that tier; otherwise the
/// outer tier, where the k = clamp(⌊inner members / stride⌋, 1, size) members that share an inner group
/// together reach k times its per-device bandwidth, at most the inner tier's.
inline RefLink ring_link(const hw::Network& network, int64_t size, int64_t stride) {
  const hw::NetworkTier& inner = network.tiers.front();
  const RefLink inside{inner.bandwidth * inner.efficiency, inner.latency_s};
  if (network.tiers.size() == 1 || (size - 1) * stride + 1 <= inner.members) return inside;
  const hw::NetworkTier& outer = network.tiers[1];
  const int64_t k = std::clamp<int64_t>(inner.members / stride, 1, size);
  return RefLink{std::min(static_cast<double>(k) * outer.bandwidth * outer.efficiency, inside.bandwidth),
                 outer.latency_s};
}

/// The link of a send `distance` devices on: the inner tier when the two devices can share one of its
/// groups, else the outer tier at its per-device bandwidth.
inline RefLink send_link(const hw::Network& network, int64_t distance) {
  const hw::NetworkTier& inner = network.tiers.front();
  const hw::NetworkTier& tier = network.tiers.size() == 1 || distance + 1 <= inner.members ? inner : network.tiers[1];
  return RefLink{tier.bandwidth * tier.efficiency, tier.latency_s};
}

/// A network of two tiers: groups of `members` devices on `inner` bytes/s (latency `inner_latency_s`), every
/// device on `outer` bytes/s (latency `outer_latency_s`) between them, both at `efficiency`.
inline hw::Network two_tiers(int64_t members, double inner, double inner_latency_s, double outer,
                             double outer_latency_s, double efficiency) {
  return hw::Network{{hw::NetworkTier{"inner", members, inner, inner_latency_s, efficiency},
                      hw::NetworkTier{"outer", 0, outer, outer_latency_s, efficiency}}};
}

}  // namespace phaze::placement::testing
