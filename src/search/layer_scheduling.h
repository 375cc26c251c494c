#pragma once

// Scheduling the distinct layers of a layer graph on one design: what one thread needs for it (estimator,
// exact solver, the shared schedule cache), the per-layer problems, their exact schedules and their root
// bounds. The search's evaluator and every baseline schedule layers through this one path.

#include <memory>
#include <vector>

#include "cost/operator_cost.h"
#include "hw/architecture.h"
#include "model/layer_graph.h"
#include "schedule/problem.h"
#include "search/question.h"
#include "search/schedule_cache.h"
#include "util/work_sharing.h"

namespace phaze::search {

/// What scheduling layer passes needs on one thread. The cache may be shared (it is thread-safe).
struct Scheduling {
  cost::Estimator estimator;
  std::unique_ptr<schedule::Solver> solver;  ///< keeps no state between solves: helping threads use it too
  ScheduleCache* cache = nullptr;
  /// Where the passes of one layer graph are offered to idle threads (nothing: all solved on this thread).
  WorkSharing* sharing = nullptr;
};
/// The exact solver with the question's node budget (kSearchScheduleNodes when it names none), a fresh estimator on the
/// question's network, and `cache`.
Scheduling make_scheduling(const SearchQuestion& question, ScheduleCache& cache);

/// Forward and backward schedules of the distinct layers of one layer graph (model, width, micro-batch) on one
/// design, in the order of model::LayerGraph::distinct_layers.
struct LayerSchedules {
  struct Passes {
    PassSummary forward, backward;
  };
  std::vector<Passes> layers;
  bool feasible() const;
  bool proven() const;
  int64_t unproven_passes() const;  ///< passes whose schedule is the best found, not proven optimal
  /// The schedules of chain node `index` of `graph`.
  const Passes& node(const model::LayerGraph& graph, int64_t index) const {
    return layers[graph.distinct_index(index)];
  }
};

/// The scheduling problems of the distinct layers of `graph` on `design`: per distinct layer, forward then
/// backward.
std::vector<schedule::Problem> layer_problems(const model::LayerGraph& graph, const hw::Architecture& design,
                                              cost::Estimator& estimator);
/// Whether every operator of every problem has a finite estimate.
bool all_finite(const std::vector<schedule::Problem>& problems);
/// The schedules of layer_problems' problems (exact solver, through the cache), shared with idle threads
/// through `scheduling.sharing` when set.
LayerSchedules solve_layers(const std::vector<schedule::Problem>& problems, Scheduling& scheduling);
/// Stand-in schedules whose makespans are the exact solver's root bounds (slightly lowered) and whose energies
/// are the least any schedule has (schedule::least_energy_j): a plan on their chain is no slower than on the
/// optimal schedules, as every stage load grows with the layers' latencies, nor spends more energy than any.
/// Needs finite latencies. The bounds are taken from `cache`, or computed and stored there.
LayerSchedules bound_layers(const std::vector<schedule::Problem>& problems, ScheduleCache& cache);

/// Schedules every distinct layer pass of `graph` on `design`.
LayerSchedules schedule_layers(const model::LayerGraph& graph, const hw::Architecture& design, Scheduling& scheduling);

}  // namespace phaze::search
