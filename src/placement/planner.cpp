#include "placement/planner.h"

#include <algorithm>

#include "placement/corrected_planner.h"
#include "placement/reference_planner.h"

namespace phaze::placement {

std::unique_ptr<Planner> make_planner(const Cluster& cluster) {
  if (cluster.corrected.enabled) return std::make_unique<CorrectedPlanner>();
  return std::make_unique<ReferencePlanner>();
}

Plan best_over_widths(const std::vector<Chain>& chains, const std::function<Plan(const Chain&)>& solve_width) {
  std::vector<const Chain*> order;
  for (const Chain& c : chains) order.push_back(&c);
  std::stable_sort(order.begin(), order.end(), [](const Chain* a, const Chain* b) { return a->width < b->width; });
  Plan best;
  for (const Chain* chain : order) {
    Plan plan = solve_width(*chain);
    if (plan.feasible && (!best.feasible || plan.time_per_batch < best.time_per_batch)) best = std::move(plan);
  }
  return best;
}

}  // namespace phaze::placement
