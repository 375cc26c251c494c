#include "search/layer_scheduling.h"

#include <algorithm>
#include <functional>

#include "schedule/layer_problem.h"

namespace phaze::search {

namespace {

/// Relative slack on a root bound before it stands in for a makespan: the lower bounds and the schedules sum
/// their latencies in other orders, so a bound may exceed the makespan it bounds by rounding.
constexpr double kBoundSlack = 1e-9;

/// The pass of problem k of layer_problems' list: the forward (even k) or backward pass of layer k / 2.
PassSummary& pass_of(LayerSchedules& s, size_t k) {
  return k % 2 == 0 ? s.layers[k / 2].forward : s.layers[k / 2].backward;
}

}  // namespace

Scheduling make_scheduling(const SearchQuestion& q, ScheduleCache& cache) {
  Scheduling s;
  s.estimator = cost::Estimator(cost::CostParams{}, devices_network(q));
  s.solver = schedule::make_exact_solver(q.schedule_node_budget > 0 ? q.schedule_node_budget : kSearchScheduleNodes);
  s.cache = &cache;
  return s;
}

bool LayerSchedules::feasible() const {
  return std::all_of(layers.begin(), layers.end(),
                     [](const Passes& p) { return p.forward.feasible && p.backward.feasible; });
}

bool LayerSchedules::proven() const {
  return unproven_passes() == 0;
}

int64_t LayerSchedules::unproven_passes() const {
  int64_t n = 0;
  for (const Passes& p : layers) n += !p.forward.proven_optimal + !p.backward.proven_optimal;
  return n;
}

std::vector<schedule::Problem> layer_problems(const model::LayerGraph& graph, const hw::Architecture& design,
                                              cost::Estimator& estimator) {
  std::vector<schedule::Problem> out;
  for (const model::DistinctLayer& d : graph.distinct_layers()) {
    out.push_back(schedule::layer_problem(d.layer->forward, design, estimator));
    out.push_back(schedule::layer_problem(d.layer->backward, design, estimator));
  }
  return out;
}

bool all_finite(const std::vector<schedule::Problem>& problems) {
  return std::all_of(problems.begin(), problems.end(), schedule::has_finite_latencies);
}

LayerSchedules solve_layers(const std::vector<schedule::Problem>& problems, Scheduling& scheduling) {
  LayerSchedules s;
  s.layers.resize(problems.size() / 2);
  // Each pass is solved once, by whichever thread takes it: the schedules do not depend on which. The passes
  // with the most operators, the costliest to schedule as a rule, are listed last: this thread takes those.
  std::vector<size_t> order(2 * s.layers.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return problems[a].tasks.size() < problems[b].tasks.size(); });
  std::vector<std::function<void()>> tasks;
  for (const size_t k : order)
    tasks.emplace_back([&, k] { pass_of(s, k) = scheduling.cache->solve(problems[k], *scheduling.solver); });
  run_tasks(scheduling.sharing, std::move(tasks));
  return s;
}

LayerSchedules bound_layers(const std::vector<schedule::Problem>& problems, ScheduleCache& cache) {
  LayerSchedules s;
  s.layers.resize(problems.size() / 2);
  for (size_t k = 0; k < problems.size(); ++k) {
    const double bound = cache.root_bound(problems[k]) * (1 - kBoundSlack);
    pass_of(s, k) = {true, bound, schedule::least_energy_j(problems[k]), 0, 0, false, bound};
  }
  return s;
}

LayerSchedules schedule_layers(const model::LayerGraph& graph, const hw::Architecture& design, Scheduling& scheduling) {
  return solve_layers(layer_problems(graph, design, scheduling.estimator), scheduling);
}

}  // namespace phaze::search
