#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "placement/chain.h"

namespace phaze::placement {

/// A placement planner: the best plan of a layer graph, given as one chain per tensor-parallel width, on a
/// cluster. Implementations own their work buffers: create one and call it repeatedly without allocating
/// after the first call. Each is exact for one time model (batch_time.h), so the caller picks the planner
/// that matches `Cluster::corrected`: ReferencePlanner (placement.md's semantics, `phaze place` without
/// corrected terms) or CorrectedPlanner (ours, the co-search); make_planner does that choice.
class Planner {
 public:
  virtual ~Planner() = default;
  /// Best plan over the chains; `feasible` is false when nothing fits.
  virtual Plan solve(const std::vector<Chain>& chains, const Cluster& cluster) = 0;
};

/// The planner exact for the cluster's time model: CorrectedPlanner with the corrected terms on, else
/// ReferencePlanner.
std::unique_ptr<Planner> make_planner(const Cluster& cluster);

/// For planners that place one width at a time: the best of `solve_width` over the chains visited in
/// ascending width; a later width must be strictly faster to win.
Plan best_over_widths(const std::vector<Chain>& chains, const std::function<Plan(const Chain&)>& solve_width);

}  // namespace phaze::placement
