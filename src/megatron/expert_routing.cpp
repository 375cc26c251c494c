#include "megatron/expert_routing.h"

#include <cmath>

namespace phaze::megatron {

namespace {

/// C(a, k) / C(b, k) for a ≤ b: the chance that k draws without replacement from b all fall among a of them.
double all_among(double a, double b, double k) {
  if (a < k) return 0;
  return std::exp(std::lgamma(a + 1) - std::lgamma(a - k + 1) - std::lgamma(b + 1) + std::lgamma(b - k + 1));
}

}  // namespace

double expected_remote_nodes(const model::ModelSpec& spec, int64_t nodes) {
  if (nodes <= 1 || !spec.moe()) return 0;
  const double n = static_cast<double>(nodes), E = static_cast<double>(spec.experts),
               k = static_cast<double>(spec.experts_per_token), per_node = E / n;
  if (spec.expert_groups == nodes) {
    const double g = static_cast<double>(spec.expert_groups_per_token);
    return (n - 1) * g / n * (1 - all_among((g - 1) * per_node, g * per_node, k));
  }
  return (n - 1) * (1 - all_among(E - per_node, E, k));
}

}  // namespace phaze::megatron
