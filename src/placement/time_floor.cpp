#include "placement/time_floor.h"

#include <algorithm>
#include <cmath>

#include "placement/stage_memory.h"

namespace phaze::placement {

double time_floor_s(const Chain& chain, const Cluster& cluster) {
  double passes_s = 0, widest_node_s = 0, parameter_bytes = 0;
  bool all_wide = chain.width > 1;
  for (const ChainNode& node : chain.nodes) {
    passes_s += node.forward_time + node.backward_time;
    widest_node_s = std::max(widest_node_s, node.forward_time + node.backward_time);
    parameter_bytes += node.parameter_bytes;
    all_wide = all_wide && node.tensor_parallel;
  }
  const auto n = static_cast<int64_t>(chain.nodes.size());
  const int64_t stage_devices = all_wide ? chain.width : 1;
  const double devices = static_cast<double>(cluster.devices), batches = static_cast<double>(cluster.micro_batches);
  const double per_device_slots = batches * static_cast<double>(stage_devices) / devices;  // N·a/K

  // The fewest stages a fitting plan can have: its largest stage holds at least 1/p of the parameters, and
  // every stage holds its parameters' resident copies (weights, gradients, optimizer state). Rounding is
  // absorbed by a relative 1e-9 in the memory's favour; the most stages bound it from above.
  const int64_t most_stages = std::max<int64_t>(1, std::min(n, cluster.devices / stage_devices));
  const double resident_per_byte = resident_bytes(StageFootprint{1.0, 0.0, 0.0}, cluster);
  double p = 1;  // stages
  if (cluster.memory_bytes > 0) {
    const double needed = resident_per_byte * parameter_bytes / (cluster.memory_bytes * (1 + 1e-9));
    if (needed > 1) p = std::min(static_cast<double>(most_stages), std::ceil(needed));
  }

  // p stages of a devices, d times over, fit in K devices, so a replica runs ⌈N/d⌉ ≥ N·a·p/K micro-batches
  // through its slowest stage, plus p − 1 of pipeline fill and drain. That stage's load is at least the
  // passes over p and at least the longest layer's. Both bounds grow with p, so the fewest stages give
  // the floor. The corrected terms add the optimizer step of the largest stage, at least 1/most_stages of
  // the parameters; the all-reduce is at least 0.
  const double pipeline_s =
      std::max(passes_s * (per_device_slots + 1.0 - 1.0 / p), widest_node_s * (per_device_slots * p + p - 1.0));
  const double optimizer_s = cluster.corrected.enabled ? parameter_bytes / static_cast<double>(most_stages) *
                                                             cluster.corrected.optimizer_seconds_per_byte
                                                       : 0.0;
  return (pipeline_s + optimizer_s) * (1 - 1e-9);
}

}  // namespace phaze::placement
