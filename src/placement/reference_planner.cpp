#include "placement/reference_planner.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "placement/batch_time.h"
#include "placement/degree_classes.h"
#include "placement/plan_check.h"

namespace phaze::placement {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

/// The best candidate of the final round: first strict minimum in visiting order.
struct Candidate {
  double time = kInfinity;
  int64_t data_parallel = 0, stages = 0, wide_stages = 0;
  int first_stage_end = 0;

  void offer(double t, int64_t d, int j, int64_t s, int64_t c = 0) {
    if (t < time) *this = Candidate{t, d, s, c, j};
  }
  bool found() const { return time != kInfinity; }
  Plan plan_head(int64_t width) const {
    Plan plan;
    plan.width = width;
    plan.feasible = found();
    plan.data_parallel = data_parallel;
    plan.time_per_batch = time;
    return plan;
  }
};

/// The time per batch of a plan whose first stage holds `first_stage_params` bytes per device.
double reference_time(const BatchTimeModel& time, double max_load, int64_t stages, double first_stage_params) {
  return time.batch_time(PipelineShape{max_load, stages, first_stage_params, 0}).total;
}

}  // namespace

Plan ReferencePlanner::solve(const std::vector<Chain>& chains, const Cluster& cluster) {
  return best_over_widths(chains, [&](const Chain& chain) { return solve(chain, cluster); });
}

Plan ReferencePlanner::solve(const Chain& chain, const Cluster& cluster) {
  if (cluster.corrected.enabled)
    throw std::invalid_argument("placement: the reference planner is exact only without the corrected terms");
  costs_.compute(chain, cluster);
  Plan plan = costs_.uniform_devices() ? solve_uniform(chain, cluster) : solve_mixed(chain, cluster);
  if (plan.feasible) plan.parts = recheck_plan(costs_, plan, cluster).parts;
  return plan;
}

Plan ReferencePlanner::solve_uniform(const Chain& chain, const Cluster& cluster) {
  const int n = costs_.size();
  Plan plan;
  plan.width = chain.width;
  if (n == 0) return plan;
  const int64_t a = costs_.devices(0, n);  // every stage has these devices
  const int64_t K = cluster.devices;
  // Stages of one replica: at most one per node and a devices each.
  const int64_t cap = std::min<int64_t>({K / a, n});
  if (cap == 0) return plan;
  const size_t width = static_cast<size_t>(cap) + 1;
  best_.assign(static_cast<size_t>(n + 1) * width, kInfinity);
  next_.assign(static_cast<size_t>(n + 1) * width, -1);
  auto cell = [width](int i, int64_t s) { return static_cast<size_t>(i) * width + static_cast<size_t>(s); };
  best_[cell(n, 0)] = 0.0;

  // Suffixes [i, n) for i ≥ 1, split into s stages, first stage [i, j).
  for (int i = n - 1; i >= 1; --i) {
    for (int j = i + 1; j <= n; ++j) {
      const int64_t top = std::min<int64_t>({costs_.max_in_flight(i, j), cap, n - j + 1});
      if (top < 1) continue;
      const double plain = costs_.load(i, j, 1), later = costs_.load(i, j, 2);
      const double* rest = &best_[cell(j, 0)];
      double* here = &best_[cell(i, 0)];
      int* choice = &next_[cell(i, 0)];
      // Without a branch: whether a split improves is data-dependent and mispredicts often (about a quarter
      // of the planner's time when written as an if).
      for (int64_t s = 1; s <= top; ++s) {
        const double value = std::max(rest[s - 1], s > 1 ? later : plain);
        const bool improves = value < here[s];
        here[s] = improves ? value : here[s];
        choice[s] = improves ? j : choice[s];
      }
    }
  }

  // Final round: the first stage [0, j) and the data-parallel degree d, on the one link of the reference
  // formula.
  Candidate best;
  const cost::GroupLink link = reference_link(cluster);
  const int64_t replicas = std::min(K, cluster.micro_batches);
  for (int64_t d = 1; d <= replicas; d = last_equivalent_degree(d, cluster.micro_batches, K) + 1) {
    const int64_t stage_cap = std::min(cap, (K / d) / a);
    if (stage_cap < 1) break;  // K/d only shrinks
    const BatchTimeModel time(cluster, d, link);
    for (int j = n; j >= 1; --j) {
      const int64_t top = std::min<int64_t>({costs_.max_in_flight(0, j), stage_cap, n - j + 1});
      const double params = costs_.parameter_bytes(0, j);
      for (int64_t s = 1; s <= top; ++s) {
        const double rest = best_[cell(j, s - 1)];
        if (rest == kInfinity) continue;
        best.offer(reference_time(time, std::max(rest, costs_.load(0, j, s)), s, params), d, j, s);
      }
    }
  }
  if (!best.found()) return plan;

  plan = best.plan_head(chain.width);
  plan.stages.push_back(Stage{0, best.first_stage_end, a});
  for (int i = best.first_stage_end, s = static_cast<int>(best.stages) - 1; s > 0; --s) {
    const int j = next_[cell(i, s)];
    plan.stages.push_back(Stage{i, j, a});
    i = j;
  }
  return plan;
}

void ReferencePlanner::set_prefix_best(int n, int64_t cap) {
  const size_t w = static_cast<size_t>(cap) + 1;
  auto cell = [w](int i, int64_t s, int64_t c) { return (static_cast<size_t>(i) * w + s) * w + c; };
  // Best over c ≤ bound for each (suffix, stages): the final round asks "at most k devices".
  prefix_best_.assign(best_.size(), kInfinity);
  prefix_arg_.assign(best_.size(), -1);
  for (int j = 1; j <= n; ++j)
    for (int64_t s = 0; s <= cap; ++s) {
      double running = kInfinity;
      int arg = -1;
      for (int64_t c = 0; c <= s && c <= cap; ++c) {
        if (best_[cell(j, s, c)] < running) {
          running = best_[cell(j, s, c)];
          arg = static_cast<int>(c);
        }
        prefix_best_[cell(j, s, c)] = running;
        prefix_arg_[cell(j, s, c)] = arg;
      }
    }
}

Plan ReferencePlanner::solve_mixed(const Chain& chain, const Cluster& cluster) {
  // Some stages use t devices, others 1: track c, the stages on t devices, as a third index.
  const int n = costs_.size();
  const int64_t t = chain.width, K = cluster.devices;
  Plan plan;
  plan.width = t;
  const int64_t cap = std::min<int64_t>(K, n);
  const size_t w = static_cast<size_t>(cap) + 1;
  best_.assign(static_cast<size_t>(n + 1) * w * w, kInfinity);
  next_.assign(best_.size(), -1);
  auto cell = [w](int i, int64_t s, int64_t c) { return (static_cast<size_t>(i) * w + s) * w + c; };
  best_[cell(n, 0, 0)] = 0.0;
  auto fits = [&](int64_t s, int64_t c, int64_t devices) { return s + c * (t - 1) <= devices; };

  for (int i = n - 1; i >= 1; --i) {
    for (int j = i + 1; j <= n; ++j) {
      const int64_t top = std::min<int64_t>({costs_.max_in_flight(i, j), cap, n - j + 1});
      const int64_t wide = costs_.devices(i, j) == t ? 1 : 0;
      const double plain = costs_.load(i, j, 1), later = costs_.load(i, j, 2);
      for (int64_t s = 1; s <= top; ++s) {
        for (int64_t c_rest = 0; c_rest < s; ++c_rest) {
          const double rest = best_[cell(j, s - 1, c_rest)];
          if (rest == kInfinity) continue;
          const int64_t c = c_rest + wide;
          if (!fits(s, c, K)) break;  // more wide stages only need more devices
          const double value = std::max(rest, s > 1 ? later : plain);
          if (value < best_[cell(i, s, c)]) {
            best_[cell(i, s, c)] = value;
            next_[cell(i, s, c)] = j;
          }
        }
      }
    }
  }

  set_prefix_best(n, cap);

  Candidate best;
  const cost::GroupLink link = reference_link(cluster);  // the reference formula's one link
  const int64_t replicas = std::min(K, cluster.micro_batches);
  for (int64_t d = 1; d <= replicas; d = last_equivalent_degree(d, cluster.micro_batches, K) + 1) {
    const int64_t kd = K / d;
    const BatchTimeModel time(cluster, d, link);
    for (int j = n; j >= 1; --j) {
      const int64_t a = costs_.devices(0, j);
      if (kd < a) continue;
      const int64_t top = std::min<int64_t>({costs_.max_in_flight(0, j), cap, n - j + 1});
      const double params = costs_.parameter_bytes(0, j);
      for (int64_t s = 1; s <= top; ++s) {
        const int64_t left = kd - a - (s - 1);  // devices beyond one per remaining stage
        if (left < 0) break;
        const int64_t c_top = std::min<int64_t>(s - 1, left / (t - 1));
        const double rest = prefix_best_[cell(j, s - 1, c_top)];
        if (rest == kInfinity) continue;
        best.offer(reference_time(time, std::max(rest, costs_.load(0, j, s)), s, params), d, j, s,
                   prefix_arg_[cell(j, s - 1, c_top)]);
      }
    }
  }
  if (!best.found()) return plan;

  plan = best.plan_head(t);
  plan.stages.push_back(Stage{0, best.first_stage_end, costs_.devices(0, best.first_stage_end)});
  int64_t c = best.wide_stages;
  for (int i = best.first_stage_end, s = static_cast<int>(best.stages) - 1; s > 0; --s) {
    const int j = next_[cell(i, s, c)];
    const int64_t a = costs_.devices(i, j);
    plan.stages.push_back(Stage{i, j, a});
    if (a == t) --c;
    i = j;
  }
  return plan;
}

}  // namespace phaze::placement
