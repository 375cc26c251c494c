#include "placement/stagewise_bound.h"

#include <algorithm>
#include <limits>

namespace phaze::placement {

double stagewise_work_bound_s(const std::vector<Chain>& chains, const Cluster& cluster) {
  if (chains.empty()) return 0;
  double work_s = 0;  // device-seconds of one micro-batch, each position at its cheapest chain
  for (size_t v = 0; v < chains.front().nodes.size(); ++v) {
    double least = std::numeric_limits<double>::infinity();
    for (const Chain& c : chains) {
      const ChainNode& node = c.nodes[v];
      // A tensor-parallel layer holds its stage's t devices; any other holds at least one.
      const double devices = node.tensor_parallel ? static_cast<double>(c.width) : 1.0;
      least = std::min(least, devices * (node.forward_time + node.backward_time));
    }
    work_s += least;
  }
  // Lowered by a part in 10^9 against the rounding of the sums: a bound must never exceed the plan's time.
  return static_cast<double>(cluster.micro_batches) * work_s / static_cast<double>(cluster.devices) * (1 - 1e-9);
}

}  // namespace phaze::placement
