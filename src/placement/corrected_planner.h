#pragma once

#include <vector>

#include "placement/chain.h"
#include "placement/planner.h"
#include "placement/stage_costs.h"

namespace phaze::placement {

/// Exact placement under the corrected terms (`Cluster::corrected` on; method.md D22, D3), the planner of
/// the co-search: the smallest time per batch over contiguous stage partitions, data-parallel degrees
/// d = 1..min(K, N) and widths, under the per-device memory limit, for 1F1B with or without recomputation.
///
/// The time per batch charges the largest stage's parameters (ring all-reduce and optimizer step), a second
/// bottleneck next to the largest stage load. The planner keeps, per (suffix, stages[, t-device stages]),
/// the Pareto frontier of (largest stage parameter bytes, smallest largest load): the optimum for every cap
/// on the stage parameters at once, which is the cap sweep of method.md D22 without a dynamic program per
/// cap. The time is increasing in both, so the best plan is on the frontier of the whole chain, and every
/// frontier point is the exact figure of the plan it reconstructs to. The search stays exact (tests: brute
/// force over all partitions, d and widths). Among equal times the first found wins: smaller d, then fewer
/// stages, then smaller stage parameters.
class CorrectedPlanner final : public Planner {
 public:
  /// Best plan over widths (best_over_widths). Throws std::invalid_argument when the corrected terms are off.
  Plan solve(const std::vector<Chain>& chains, const Cluster& cluster) override;
  /// Best plan for one width.
  Plan solve(const Chain& chain, const Cluster& cluster);

 private:
  Plan solve_frontiers(const Chain& chain, const Cluster& cluster);

  /// One point of a frontier: a partial plan (a suffix of the chain in a given number of stages).
  struct FrontPoint {
    double params = 0;  // largest stage parameter bytes of the partial plan
    double load = 0;    // its largest stage load
    int next = -1;      // end of its first stage, where the rest of the plan starts (-1: nothing left)
    int pick = -1;      // the rest of the plan: index of its point within the frontier of `next`
  };

  /// Merges into the frontier `acc` the frontier `rest` (rest_size points) extended by a first stage of
  /// `load` and `params` that ends at `next`. A frontier lists points by strictly increasing params and
  /// strictly decreasing load: point k holds the smallest largest load of the partial plans whose stages
  /// all hold at most params_k bytes, and is that of the plan it reconstructs to.
  /// Adds one point to the frontier `acc` (extend_frontier with one rest point, the usual case).
  static void add_point(std::vector<FrontPoint>& acc, const FrontPoint& point);
  void extend_frontier(std::vector<FrontPoint>& acc, const FrontPoint* rest, int rest_size, double load, double params,
                       int next);

  /// The dimensions of one call's frontier table, cells (suffix start i, stages s, one-device stages e).
  struct FrontierShape {
    int n = 0;             // chain positions
    int64_t t = 1, K = 1;  // width, devices
    bool mixed = false;    // stages of 1 and of t devices
    int64_t a = 1;         // devices of every stage when not mixed
    int64_t cap = 0;       // the most stages of a plan
    int64_t e_top = 0;     // the most one-device stages of a plan
    size_t sdim = 1, edim = 1;
    size_t cell(int i, int64_t s, int64_t e) const {
      return (static_cast<size_t>(i) * sdim + static_cast<size_t>(s)) * edim + static_cast<size_t>(e);
    }
    /// Devices of one replica of a plan of s stages, e of them on one device.
    int64_t devices_of(int64_t s, int64_t e) const { return s + (s - e) * (t - 1); }
  };
  /// Sizes the table for `chain`; false when no plan can exist (no positions, or no stage fits the devices).
  bool set_up(const Chain& chain, const Cluster& cluster);
  /// floor_ for suffix start i.
  void set_floors(int i);
  /// The frontiers of every cell (i, s) of a chain whose stages all have the same devices.
  void uniform_frontiers(int i);
  /// The frontiers of every cell (i, s, e) of a chain with stages of 1 and of t devices.
  void mixed_frontiers(int i);
  /// Whether `front` holds a plan with at most `params` and at most `load`.
  static bool dominated(const std::vector<FrontPoint>& front, double params, double load);
  /// The best plan over every data-parallel degree and every frontier point of the whole chain.
  Plan best_plan(const Cluster& cluster) const;

  StageCosts costs_;
  // Frontiers of every (suffix start, stages[, t-device stages]) cell, as slices of pool_.
  std::vector<FrontPoint> pool_;
  std::vector<int> front_begin_, front_size_;
  std::vector<std::vector<FrontPoint>> row_;  // frontiers of the cell being built, per wide-stage count
  std::vector<FrontPoint> merged_;
  std::vector<char> closed_;   // per wide-stage count of the cell being built: no longer first stage can help
  std::vector<double> floor_;  // per stage end: the smallest load of any longer stage from the same start
  std::vector<int> lowest_;    // per stage count: the smallest suffix start with a plan in that many stages
  FrontierShape shape_;        // of the call being solved
};

}  // namespace phaze::placement
