#include "placement/planner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "cost/vector_cost.h"

namespace phaze::placement {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

/// The largest degree d' ≥ d with the same ⌈N/d'⌉ and ⌊K/d'⌋ as d (N micro-batches, K devices, 1 ≤ d ≤ K).
/// Every degree in [d, d'] offers the same stages and the same pipeline slots; only the data-parallel
/// synchronisation differs, and it grows with the degree, so no degree past d can strictly beat d and the
/// final rounds visit one degree per class: O(√N + √K) of them instead of min(N, K).
int64_t last_equivalent_degree(int64_t d, int64_t micro_batches, int64_t devices) {
  const int64_t same_devices = devices / (devices / d);
  const int64_t quotient = (micro_batches - 1) / d;  // ⌈N/d⌉ − 1
  const int64_t same_slots = quotient == 0 ? std::numeric_limits<int64_t>::max() : (micro_batches - 1) / quotient;
  return std::min(same_devices, same_slots);
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

/// The reference formula split into its terms (the sum may differ from batch_time in the last bit).
BatchTimeParts reference_parts(double max_load, int64_t stages, int64_t data_parallel, double first_stage_params,
                               const Cluster& cluster) {
  BatchTimeParts parts;
  parts.steady_state = max_load * static_cast<double>(ceil_div(cluster.micro_batches, data_parallel));
  parts.fill_drain = max_load * static_cast<double>(stages - 1);
  parts.data_parallel_sync = 4.0 * static_cast<double>(data_parallel - 1) * first_stage_params /
                             (cluster.bandwidth * static_cast<double>(data_parallel));
  return parts;
}

/// The terms charged once per iteration under the corrected terms (method.md D22, D3), for a plan whose
/// largest stage holds `max_params` bytes per device: the ring all-reduce of every stage runs at the same
/// time, then every device updates its parameters, so the largest stage sets both.
double corrected_sync(double max_params, int64_t data_parallel, const Cluster& cluster) {
  const CorrectedTerms& c = cluster.corrected;
  const double bandwidth = c.sync_bandwidth > 0 ? c.sync_bandwidth : cluster.bandwidth;
  return cost::all_reduce_seconds(max_params, data_parallel, bandwidth, c.ring_latency_s);
}

double corrected_optimizer(double max_params, const Cluster& cluster) {
  return max_params * cluster.corrected.optimizer_seconds_per_byte;
}

/// The corrected time per batch. The search and evaluate_plan both use this one expression, so a plan
/// reconstructed from the search re-evaluates to the same bits.
double corrected_time(double max_load, int64_t stages, int64_t data_parallel, double max_params,
                      const Cluster& cluster) {
  const int64_t slots = ceil_div(cluster.micro_batches, data_parallel) + stages - 1;
  return max_load * static_cast<double>(slots) +
         (corrected_sync(max_params, data_parallel, cluster) + corrected_optimizer(max_params, cluster));
}

BatchTimeParts corrected_parts(double max_load, int64_t stages, int64_t data_parallel, double max_params,
                               const Cluster& cluster) {
  BatchTimeParts parts;
  parts.steady_state = max_load * static_cast<double>(ceil_div(cluster.micro_batches, data_parallel));
  parts.fill_drain = max_load * static_cast<double>(stages - 1);
  parts.data_parallel_sync = corrected_sync(max_params, data_parallel, cluster);
  parts.optimizer_step = corrected_optimizer(max_params, cluster);
  return parts;
}

/// Re-evaluates the reconstructed plan independently; the dynamic program and the formula must agree.
/// Returns the re-evaluation (for its parts).
PlanCheck check_consistency(const StageCosts& costs, const Plan& plan, const Cluster& cluster) {
  PlanCheck check = evaluate_plan(costs, plan.stages, plan.data_parallel, cluster);
  const double tolerance = 1e-9 * std::max(1.0, std::abs(plan.time_per_batch));
  if (!check.feasible || std::abs(check.time_per_batch - plan.time_per_batch) > tolerance)
    throw std::logic_error(fmt::format("placement: reconstructed plan disagrees with the search ({} vs {}{})",
                                       check.time_per_batch, plan.time_per_batch,
                                       check.feasible ? "" : ", " + check.reason));
  return check;
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
  double max_load = 0, max_params = 0;
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
    max_params = std::max(max_params, costs.parameter_bytes(stage.first, stage.last));
  }
  if (devices * data_parallel > cluster.devices) {
    result.reason =
        fmt::format("the plan needs {} devices, {} are available", devices * data_parallel, cluster.devices);
    return result;
  }
  result.feasible = true;
  if (cluster.corrected.enabled) {
    result.time_per_batch = corrected_time(max_load, p, data_parallel, max_params, cluster);
    result.parts = corrected_parts(max_load, p, data_parallel, max_params, cluster);
  } else {
    const double first_params = costs.parameter_bytes(stages.front().first, stages.front().last);
    result.time_per_batch = batch_time(max_load, p, data_parallel, first_params, cluster);
    result.parts = reference_parts(max_load, p, data_parallel, first_params, cluster);
  }
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
  Plan plan;
  if (cluster.corrected.enabled) {
    plan = solve_corrected(chain, cluster);
  } else {
    plan = costs_.uniform_devices() ? solve_uniform(chain, cluster) : solve_mixed(chain, cluster);
  }
  if (plan.feasible) plan.parts = check_consistency(costs_, plan, cluster).parts;
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
  for (int64_t d = 1; d <= replicas; d = last_equivalent_degree(d, cluster.micro_batches, K) + 1) {
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
  for (int64_t d = 1; d <= replicas; d = last_equivalent_degree(d, cluster.micro_batches, K) + 1) {
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

void Planner::extend_frontier(std::vector<FrontPoint>& acc, const FrontPoint* rest, int rest_size, double load,
                              double params, int next) {
  // The extension of rest point k is the plan "stage [i, next), then rest plan k": its largest parameters
  // are max(params, rest_k.params), nondecreasing in k, its largest load max(load, rest_k.load),
  // nonincreasing in k.
  auto ext_params = [&](int k) { return std::max(params, rest[k].params); };
  auto ext_load = [&](int k) { return std::max(load, rest[k].load); };

  // Cheap exits, the usual cases. Nothing yet: the extension is the frontier. Otherwise acc may already be
  // at least as good at the extension's smallest cap, while the extension never goes below its last load.
  if (acc.empty()) {
    for (int k = 0; k < rest_size; ++k) {
      const FrontPoint point{ext_params(k), ext_load(k), next, k};
      if (!acc.empty() && point.params == acc.back().params) acc.pop_back();  // same cap, lower load
      if (acc.empty() || point.load < acc.back().load) acc.push_back(point);
      if (rest[k].load <= load) break;  // the new stage's own load is the floor from here on
    }
    return;
  }
  const double first_cap = ext_params(0);
  double acc_there = kInfinity;
  for (size_t k = 0; k < acc.size() && acc[k].params <= first_cap; ++k) acc_there = acc[k].load;
  if (acc_there <= ext_load(rest_size - 1)) return;

  // Lower envelope of two step functions of the cap (smallest largest load with every stage's parameters
  // at most the cap), emitting a point where the envelope drops. A point emitted is always the exact
  // (parameters, load) of the plan it names. Ties keep the incumbent.
  merged_.clear();
  size_t a = 0;
  int b = 0;
  double va = kInfinity, vb = kInfinity, envelope = kInfinity;
  int pick = -1;
  while (a < acc.size() || b < rest_size) {
    const double cap = std::min(a < acc.size() ? acc[a].params : kInfinity, b < rest_size ? ext_params(b) : kInfinity);
    if (a < acc.size() && acc[a].params <= cap) va = acc[a++].load;  // acc's caps are distinct
    while (b < rest_size && ext_params(b) <= cap) {                  // several rest points can map to one cap
      vb = ext_load(b);
      pick = b++;
      if (rest[pick].load <= load) b = rest_size;  // the new stage's own load is the floor from here on
    }
    if (std::min(va, vb) < envelope) {
      if (va <= vb) {
        merged_.push_back(acc[a - 1]);
      } else {
        merged_.push_back(FrontPoint{cap, vb, next, pick});
      }
      envelope = merged_.back().load;
    }
  }
  acc.swap(merged_);
}

Plan Planner::solve_corrected(const Chain& chain, const Cluster& cluster) {
  const int n = costs_.size();
  const int64_t t = chain.width, K = cluster.devices;
  Plan plan;
  plan.width = t;
  if (n == 0) return plan;
  // Uniform: every stage has `a` devices, so the stage count gives the devices. Mixed: also index c, the
  // stages on t devices (a plan of s stages needs s + c·(t − 1) devices), as solve_mixed does.
  const bool mixed = !costs_.uniform_devices();
  const int64_t a = costs_.devices(0, n);
  const int64_t cap = mixed ? std::min<int64_t>(K, n) : std::min<int64_t>(K / a, n);
  if (cap == 0) return plan;
  const size_t sdim = static_cast<size_t>(cap) + 1, cdim = mixed ? sdim : 1;
  auto cell = [sdim, cdim](int i, int64_t s, int64_t c) {
    return (static_cast<size_t>(i) * sdim + static_cast<size_t>(s)) * cdim + static_cast<size_t>(c);
  };
  front_begin_.assign(static_cast<size_t>(n + 1) * sdim * cdim, 0);
  front_size_.assign(front_begin_.size(), 0);
  pool_.clear();
  pool_.push_back(FrontPoint{0.0, 0.0, -1, -1});  // the empty suffix in 0 stages
  front_size_[cell(n, 0, 0)] = 1;
  if (row_.size() < cdim) row_.resize(cdim);
  closed_.resize(cdim);

  // Frontiers of the suffixes [i, n), i = n − 1 down to 0, in s stages, the first one [i, j). For one
  // (i, s) the first stage grows from the shortest whose rest can have s − 1 stages at all (lowest_), and
  // the scan stops
  // - when the stage no longer fits with s micro-batches in flight (max_stages(i, j) only falls as j grows:
  //   the stage only gets heavier);
  // - when the target frontier already holds a plan with at most the parameters of [i, j) and at most the
  //   smallest load of any stage [i, j') with j' ≥ j: every longer first stage gives plans no better in
  //   either, so the target is closed. In a uniform chain this ends the scan just past the balanced split.
  auto dominated = [](const std::vector<FrontPoint>& front, double params, double load) {
    double there = kInfinity;
    for (size_t k = 0; k < front.size() && front[k].params <= params; ++k) there = front[k].load;
    return there <= load;
  };
  lowest_.assign(sdim, n + 1);
  lowest_[0] = n;
  floor_.resize(2 * (static_cast<size_t>(n) + 1));
  for (int i = n - 1; i >= 0; --i) {
    // floor_[2j + r]: the smallest load of a stage [i, j') with j' ≥ j (r = 1: as a stage with later
    // stages), a bound on the load of every longer first stage.
    double plain_floor = kInfinity, later_floor = kInfinity;
    for (int j = n; j > i; --j) {
      plain_floor = std::min(plain_floor, costs_.load(i, j, 1));
      later_floor = std::min(later_floor, costs_.load(i, j, 2));
      floor_[2 * static_cast<size_t>(j)] = plain_floor;
      floor_[2 * static_cast<size_t>(j) + 1] = later_floor;
    }
    for (int64_t s = 1; s <= std::min<int64_t>(cap, n - i); ++s) {
      // Targets: wide-stage counts c ≤ s whose s + c·(t − 1) devices fit (uniform: the one target c = 0).
      size_t open = 0;  // targets not closed yet
      for (size_t c = 0; c < cdim; ++c) {
        row_[c].clear();
        const int64_t wide = static_cast<int64_t>(c);
        closed_[c] = wide > s || (mixed && s + wide * (t - 1) > K);
        open += closed_[c] ? 0 : 1;
      }
      for (int j = std::max(i + 1, lowest_[static_cast<size_t>(s - 1)]); j <= n - s + 1 && open > 0; ++j) {
        if (costs_.max_stages(i, j) < s) break;
        const double params = costs_.parameter_bytes(i, j);
        const double floor = floor_[2 * static_cast<size_t>(j) + (s > 1 ? 1 : 0)];
        const double load = costs_.load(i, j, s);
        const int64_t wide = mixed && costs_.devices(i, j) == t ? 1 : 0;
        for (int64_t c_rest = 0; c_rest < (mixed ? s : 1); ++c_rest) {
          const int64_t c = c_rest + wide;
          if (mixed && s + c * (t - 1) > K) break;  // more wide stages only need more devices
          if (closed_[static_cast<size_t>(c)]) continue;
          std::vector<FrontPoint>& target = row_[static_cast<size_t>(c)];
          if (dominated(target, params, floor)) {
            closed_[static_cast<size_t>(c)] = 1;
            --open;
            continue;
          }
          const size_t child = cell(j, s - 1, c_rest);
          if (front_size_[child] == 0) continue;
          extend_frontier(target, &pool_[front_begin_[child]], front_size_[child], load, params, j);
        }
      }
      for (size_t c = 0; c < cdim; ++c) {
        if (row_[c].empty()) continue;
        front_begin_[cell(i, s, static_cast<int64_t>(c))] = static_cast<int>(pool_.size());
        front_size_[cell(i, s, static_cast<int64_t>(c))] = static_cast<int>(row_[c].size());
        pool_.insert(pool_.end(), row_[c].begin(), row_[c].end());
        lowest_[static_cast<size_t>(s)] = i;
      }
    }
  }

  // Every plan of the whole chain in s stages (c of them wide) on every frontier point, for every d.
  double best_time = kInfinity;
  int64_t best_d = 0, best_s = 0, best_c = 0;
  int best_k = -1;
  const int64_t replicas = std::min(K, cluster.micro_batches);
  for (int64_t d = 1; d <= replicas; d = last_equivalent_degree(d, cluster.micro_batches, K) + 1) {
    const int64_t kd = K / d;
    const int64_t s_top = std::min(cap, mixed ? kd : kd / a);
    if (s_top < 1) break;  // K/d only shrinks
    for (int64_t s = 1; s <= s_top; ++s)
      for (int64_t c = 0; c < (mixed ? s + 1 : 1); ++c) {
        if (mixed && s + c * (t - 1) > kd) break;
        const size_t id = cell(0, s, c);
        const int size = front_size_[id];
        if (size == 0) continue;
        const FrontPoint* front = &pool_[front_begin_[id]];
        // No point of the frontier beats the smallest load with the smallest parameters.
        if (corrected_time(front[size - 1].load, s, d, front[0].params, cluster) >= best_time) continue;
        for (int k = 0; k < size; ++k) {
          const double time = corrected_time(front[k].load, s, d, front[k].params, cluster);
          if (time < best_time) {
            best_time = time;
            best_d = d;
            best_s = s;
            best_c = c;
            best_k = k;
          }
        }
      }
  }
  if (best_k < 0) return plan;

  plan.feasible = true;
  plan.data_parallel = best_d;
  plan.time_per_batch = best_time;
  int i = 0, k = best_k;
  for (int64_t s = best_s, c = best_c; s > 0; --s) {
    const FrontPoint& point = pool_[static_cast<size_t>(front_begin_[cell(i, s, c)] + k)];
    const int64_t devices = costs_.devices(i, point.next);
    plan.stages.push_back(Stage{i, point.next, devices});
    if (mixed && devices == t) --c;
    k = point.pick;
    i = point.next;
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
