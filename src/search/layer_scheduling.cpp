#include "search/layer_scheduling.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <thread>

#include "schedule/layer_problem.h"

namespace phaze::search {

namespace {

/// Relative slack on a root bound before it stands in for a makespan: the lower bounds and the schedules sum
/// their latencies in other orders, so a bound may exceed the makespan it bounds by rounding.
constexpr double kBoundSlack = 1e-9;

}  // namespace

void Scheduling::renew_estimator() {
  estimator = cost::Estimator(estimator.params(), estimator.network());
}

Scheduling make_scheduling(const SearchQuestion& q, ScheduleCache& cache) {
  Scheduling s;
  s.estimator = cost::Estimator(cost::CostParams{}, q.network);
  s.solver =
      q.schedule_node_budget > 0 ? schedule::make_exact_solver(q.schedule_node_budget) : schedule::make_exact_solver();
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
  auto solve = [&](size_t k) {
    const auto t0 = std::chrono::steady_clock::now();
    struct Rep {
      std::chrono::steady_clock::time_point t0;
      size_t k;
      size_t n;
      ~Rep() {
        double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (el > 0.2 && std::getenv("PHAZE_TRACE"))
          std::fprintf(stderr, "SOLVE k %zu of %zu %.3f s thread %zu\n", k, n, el,
                       std::hash<std::thread::id>{}(std::this_thread::get_id()) % 1000);
      }
    } rep{t0, k, problems.size()};
    (k % 2 == 0 ? s.layers[k / 2].forward : s.layers[k / 2].backward) =
        scheduling.cache->solve(problems[k], *scheduling.solver);
  };
  if (!scheduling.sharing) {
    for (size_t k = 0; k < 2 * s.layers.size(); ++k) solve(k);
    return s;
  }
  // Each pass is solved once, by whichever thread takes it: the schedules do not depend on which.
  std::vector<std::function<void()>> tasks;
  for (size_t k = 0; k < 2 * s.layers.size(); ++k) tasks.emplace_back([&solve, k] { solve(k); });
  scheduling.sharing->run(std::move(tasks));
  return s;
}

LayerSchedules bound_layers(const std::vector<schedule::Problem>& problems, ScheduleCache& cache) {
  LayerSchedules s;
  s.layers.resize(problems.size() / 2);
  for (size_t k = 0; k < problems.size(); ++k) {
    const double bound = cache.root_bound(problems[k]) * (1 - kBoundSlack);
    (k % 2 == 0 ? s.layers[k / 2].forward : s.layers[k / 2].backward) = {true, bound, 0, 0, 0, false, bound};
  }
  return s;
}

LayerSchedules schedule_layers(const model::LayerGraph& graph, const hw::Architecture& design, Scheduling& scheduling) {
  return solve_layers(layer_problems(graph, design, scheduling.estimator), scheduling);
}

}  // namespace phaze::search
