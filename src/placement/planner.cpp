#include "placement/planner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace phaze::placement {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

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

/// placement.md: max stage load · (⌈N/d⌉ + p − 1) + 4·(d − 1)·params(first stage) / (bandwidth·d).
double batch_time(double max_load, int64_t stages, int64_t data_parallel, double first_stage_params,
                  const Cluster& cluster) {
  const int64_t slots = ceil_div(cluster.micro_batches, data_parallel) + stages - 1;
  return max_load * static_cast<double>(slots) + 4.0 * static_cast<double>(data_parallel - 1) * first_stage_params /
                                                     (cluster.bandwidth * static_cast<double>(data_parallel));
}

/// Re-evaluates the reconstructed plan independently; the dynamic program and the formula must agree.
void check_consistency(const StageCosts& costs, const Plan& plan, const Cluster& cluster) {
  const PlanCheck check = evaluate_plan(costs, plan.stages, plan.data_parallel, cluster);
  const double tolerance = 1e-9 * std::max(1.0, std::abs(plan.time_per_batch));
  if (!check.feasible || std::abs(check.time_per_batch - plan.time_per_batch) > tolerance)
    throw std::logic_error(fmt::format("placement: reconstructed plan disagrees with the search ({} vs {}{})",
                                       check.time_per_batch, plan.time_per_batch,
                                       check.feasible ? "" : ", " + check.reason));
}

}  // namespace

PlanCheck evaluate_plan(const StageCosts& costs, const std::vector<Stage>& stages, int64_t data_parallel,
                        const Cluster& cluster) {
  PlanCheck result;
  const int64_t p = static_cast<int64_t>(stages.size());
  if (p == 0) {
    result.reason = "no stages";
    return result;
  }
  if (data_parallel < 1 || data_parallel > cluster.micro_batches) {
    result.reason =
        fmt::format("data-parallel degree {} is not in 1..{} (micro-batches)", data_parallel, cluster.micro_batches);
    return result;
  }
  int64_t devices = 0;
  double max_load = 0;
  for (int64_t q = 0; q < p; ++q) {
    const Stage& stage = stages[q];
    if (stage.first >= stage.last) {
      result.reason = fmt::format("stage {} is empty", q + 1);
      return result;
    }
    const int64_t stages_from_here = p - q;
    if (costs.max_stages(stage.first, stage.last) < stages_from_here) {
      result.reason =
          fmt::format("stage {} does not fit in memory with {} micro-batches in flight", q + 1, stages_from_here);
      return result;
    }
    devices += stage.devices;
    max_load = std::max(max_load, costs.load(stage.first, stage.last, stages_from_here));
  }
  if (devices * data_parallel > cluster.devices) {
    result.reason =
        fmt::format("the plan needs {} devices, {} are available", devices * data_parallel, cluster.devices);
    return result;
  }
  result.feasible = true;
  result.time_per_batch =
      batch_time(max_load, p, data_parallel, costs.parameter_bytes(stages.front().first, stages.front().last), cluster);
  return result;
}

Plan Planner::solve(const std::vector<Chain>& chains, const Cluster& cluster) {
  std::vector<const Chain*> order;
  for (const Chain& c : chains) order.push_back(&c);
  std::stable_sort(order.begin(), order.end(), [](const Chain* a, const Chain* b) { return a->width < b->width; });
  Plan best;
  for (const Chain* chain : order) {
    Plan plan = solve(*chain, cluster);
    if (plan.feasible && (!best.feasible || plan.time_per_batch < best.time_per_batch)) best = std::move(plan);
  }
  return best;
}

Plan Planner::solve(const Chain& chain, const Cluster& cluster) {
  costs_.compute(chain, cluster);
  Plan plan = costs_.uniform_devices() ? solve_uniform(chain, cluster) : solve_mixed(chain, cluster);
  if (plan.feasible) check_consistency(costs_, plan, cluster);
  return plan;
}

Plan Planner::solve_uniform(const Chain& chain, const Cluster& cluster) {
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
      const int64_t top = std::min<int64_t>({costs_.max_stages(i, j), cap, n - j + 1});
      if (top < 1) continue;
      const double plain = costs_.load(i, j, 1), later = costs_.load(i, j, 2);
      const double* rest = &best_[cell(j, 0)];
      double* here = &best_[cell(i, 0)];
      int* choice = &next_[cell(i, 0)];
      for (int64_t s = 1; s <= top; ++s) {
        const double value = std::max(rest[s - 1], s > 1 ? later : plain);
        if (value < here[s]) {
          here[s] = value;
          choice[s] = j;
        }
      }
    }
  }

  // Final round: the first stage [0, j) and the data-parallel degree d.
  Candidate best;
  const int64_t replicas = std::min(K, cluster.micro_batches);
  for (int64_t d = 1; d <= replicas; ++d) {
    const int64_t stage_cap = std::min(cap, (K / d) / a);
    if (stage_cap < 1) break;  // K/d only shrinks
    for (int j = n; j >= 1; --j) {
      const int64_t top = std::min<int64_t>({costs_.max_stages(0, j), stage_cap, n - j + 1});
      const double params = costs_.parameter_bytes(0, j);
      for (int64_t s = 1; s <= top; ++s) {
        const double rest = best_[cell(j, s - 1)];
        if (rest == kInfinity) continue;
        best.offer(batch_time(std::max(rest, costs_.load(0, j, s)), s, d, params, cluster), d, j, s);
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

Plan Planner::solve_mixed(const Chain& chain, const Cluster& cluster) {
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
      const int64_t top = std::min<int64_t>({costs_.max_stages(i, j), cap, n - j + 1});
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

  Candidate best;
  const int64_t replicas = std::min(K, cluster.micro_batches);
  for (int64_t d = 1; d <= replicas; ++d) {
    const int64_t kd = K / d;
    for (int j = n; j >= 1; --j) {
      const int64_t a = costs_.devices(0, j);
      if (kd < a) continue;
      const int64_t top = std::min<int64_t>({costs_.max_stages(0, j), cap, n - j + 1});
      const double params = costs_.parameter_bytes(0, j);
      for (int64_t s = 1; s <= top; ++s) {
        const int64_t left = kd - a - (s - 1);  // devices beyond one per remaining stage
        if (left < 0) break;
        const int64_t c_top = std::min<int64_t>(s - 1, left / (t - 1));
        const double rest = prefix_best_[cell(j, s - 1, c_top)];
        if (rest == kInfinity) continue;
        best.offer(batch_time(std::max(rest, costs_.load(0, j, s)), s, d, params, cluster), d, j, s,
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

PlanCheck evaluate_hand_set(const std::vector<Chain>& chains, const Cluster& cluster, const HandSetPlan& hand) {
  PlanCheck result;
  const auto it = std::find_if(chains.begin(), chains.end(), [&](const Chain& c) { return c.width == hand.width; });
  if (it == chains.end()) {
    result.reason = fmt::format("width {} is not in the input", hand.width);
    return result;
  }
  if (hand.pipeline * hand.width * hand.data_parallel > cluster.devices) {
    result.reason = fmt::format("p·t·d = {}·{}·{} exceeds the {} devices", hand.pipeline, hand.width,
                                hand.data_parallel, cluster.devices);
    return result;
  }
  if (hand.data_parallel > cluster.micro_batches) {
    result.reason = fmt::format("d = {} exceeds the {} micro-batches", hand.data_parallel, cluster.micro_batches);
    return result;
  }
  const int n = static_cast<int>(it->nodes.size());
  const int64_t per_stage = ceil_div(hand.transformer_layers, hand.pipeline);
  std::vector<Stage> stages(static_cast<size_t>(hand.pipeline), Stage{n, 0, hand.width});
  for (int i = 0; i < n; ++i) {
    const int64_t q = i < hand.transformer_layers ? i / per_stage : hand.pipeline - 1;
    stages[q].first = std::min(stages[q].first, i);
    stages[q].last = std::max(stages[q].last, i + 1);
  }
  StageCosts costs;
  costs.compute(*it, cluster);
  return evaluate_plan(costs, stages, hand.data_parallel, cluster);
}

}  // namespace phaze::placement
