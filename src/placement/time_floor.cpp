#include "placement/time_floor.h"

namespace phaze::placement {

double time_floor_s(const Chain& chain, const Cluster& cluster) {
  double passes_s = 0;
  bool all_wide = chain.width > 1;
  for (const ChainNode& node : chain.nodes) {
    passes_s += node.forward_time + node.backward_time;
    all_wide = all_wide && node.tensor_parallel;
  }
  const double stage_devices = all_wide ? static_cast<double>(chain.width) : 1.0;
  return passes_s * static_cast<double>(cluster.micro_batches) * stage_devices / static_cast<double>(cluster.devices) *
         (1 - 1e-9);
}

}  // namespace phaze::placement
