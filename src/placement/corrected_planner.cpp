#include "placement/corrected_planner.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "placement/batch_time.h"
#include "placement/degree_classes.h"
#include "placement/plan_check.h"

namespace phaze::placement {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

/// The time per batch of a plan whose largest stage holds `max_params` bytes per device.
double corrected_time(const BatchTimeModel& time, double max_load, int64_t stages, double max_params) {
  return time.batch_time(PipelineShape{max_load, stages, 0, max_params}).total;
}

}  // namespace

Plan CorrectedPlanner::solve(const std::vector<Chain>& chains, const Cluster& cluster) {
  return best_over_widths(chains, [&](const Chain& chain) { return solve(chain, cluster); });
}

Plan CorrectedPlanner::solve(const Chain& chain, const Cluster& cluster) {
  if (!cluster.corrected.enabled)
    throw std::invalid_argument("placement: the corrected planner is exact only with the corrected terms");
  costs_.compute(chain, cluster);
  Plan plan = solve_frontiers(chain, cluster);
  if (plan.feasible) plan.parts = recheck_plan(costs_, plan, cluster).parts;
  return plan;
}

void CorrectedPlanner::add_point(std::vector<FrontPoint>& acc, const FrontPoint& point) {
  // The merge of extend_frontier for one point, without its set-up: acc dominates the point (a point with
  // at most its parameters and load), or the point replaces acc's points from its parameters on until one
  // has a lower load. Ties keep the incumbent.
  // The size is read once: in the loops' conditions it was computed again (a division by the point's size)
  // at every step. With the same in extend_frontier and the scan, about 5 % of a planner call's instructions.
  const size_t size = acc.size();
  size_t first = 0;  // acc's first point with at least the point's parameters
  while (first < size && acc[first].params < point.params) ++first;
  if (first < size && acc[first].params == point.params ? acc[first].load <= point.load
                                                        : first > 0 && acc[first - 1].load <= point.load)
    return;
  size_t last = first;  // acc's first point past it that stays: more parameters and a lower load
  while (last < size && (acc[last].params == point.params || acc[last].load >= point.load)) ++last;
  if (first == size) {
    acc.push_back(point);
  } else if (last == first) {
    acc.insert(acc.begin() + static_cast<std::ptrdiff_t>(first), point);
  } else {
    acc[first] = point;
    acc.erase(acc.begin() + static_cast<std::ptrdiff_t>(first) + 1, acc.begin() + static_cast<std::ptrdiff_t>(last));
  }
}

void CorrectedPlanner::extend_frontier(std::vector<FrontPoint>& acc, const FrontPoint* rest, int rest_size, double load,
                                       double params, int next) {
  // The extension of rest point k is the plan "stage [i, next), then rest plan k": its largest parameters
  // are max(params, rest_k.params), nondecreasing in k, its largest load max(load, rest_k.load),
  // nonincreasing in k.
  auto ext_params = [&](int k) { return std::max(params, rest[k].params); };
  auto ext_load = [&](int k) { return std::max(load, rest[k].load); };

  if (rest_size == 1) {
    add_point(acc, FrontPoint{ext_params(0), ext_load(0), next, 0});
    return;
  }

  // Cheap exits. Nothing yet: the extension is the frontier. Otherwise acc may already be at least as good
  // at the extension's smallest cap, while the extension never goes below its last load.
  if (acc.empty()) {
    for (int k = 0; k < rest_size; ++k) {
      const FrontPoint point{ext_params(k), ext_load(k), next, k};
      if (!acc.empty() && point.params == acc.back().params) acc.pop_back();  // same cap, lower load
      if (acc.empty() || point.load < acc.back().load) acc.push_back(point);
      if (rest[k].load <= load) break;  // the new stage's own load is the floor from here on
    }
    return;
  }
  const size_t acc_size = acc.size();
  const double first_cap = ext_params(0);
  double acc_there = kInfinity;
  for (size_t k = 0; k < acc_size && acc[k].params <= first_cap; ++k) acc_there = acc[k].load;
  if (acc_there <= ext_load(rest_size - 1)) return;

  // Lower envelope of two step functions of the cap (smallest largest load with every stage's parameters
  // at most the cap), emitting a point where the envelope drops. A point emitted is always the exact
  // (parameters, load) of the plan it names. Ties keep the incumbent.
  merged_.clear();
  size_t a = 0;
  int b = 0;
  double va = kInfinity, vb = kInfinity, envelope = kInfinity;
  int pick = -1;
  while (a < acc_size || b < rest_size) {
    const double cap = std::min(a < acc_size ? acc[a].params : kInfinity, b < rest_size ? ext_params(b) : kInfinity);
    if (a < acc_size && acc[a].params <= cap) va = acc[a++].load;  // acc's caps are distinct
    while (b < rest_size && ext_params(b) <= cap) {                // several rest points can map to one cap
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

bool CorrectedPlanner::set_up(const Chain& chain, const Cluster& cluster) {
  FrontierShape& f = shape_;
  f.n = costs_.size();
  f.t = chain.width;
  f.K = cluster.devices;
  if (f.n == 0) return false;
  // Uniform: every stage has `a` devices, so the stage count gives the devices. Mixed: also index e, the
  // stages on one device (a plan of s stages needs s + (s − e)·(t − 1) devices), as ReferencePlanner::solve_mixed
  // does with the stages on t devices. Such a stage holds only layers that are not split, so e is at most
  // their number u: a chain whose few unsplit layers are the embedding and the head has two or three
  // values of e, where the t-device count would take every value up to s.
  f.mixed = !costs_.uniform_devices();
  f.a = costs_.devices(0, f.n);
  f.cap = f.mixed ? std::min<int64_t>(f.K, f.n) : std::min<int64_t>(f.K / f.a, f.n);
  if (f.cap == 0) return false;
  int64_t unsplit = 0;
  if (f.mixed)
    for (const ChainNode& node : chain.nodes) unsplit += node.tensor_parallel ? 0 : 1;
  f.e_top = std::min(f.cap, unsplit);
  f.sdim = static_cast<size_t>(f.cap) + 1;
  f.edim = static_cast<size_t>(f.e_top) + 1;
  // Not cleared: every cell read is written first, those of 0 stages here and the others as their suffix
  // is done (an empty frontier too). At 98 positions clearing was a twentieth of a call.
  front_begin_.resize(static_cast<size_t>(f.n + 1) * f.sdim * f.edim);
  front_size_.resize(front_begin_.size());
  for (int j = 0; j <= f.n; ++j)
    for (size_t e = 0; e < f.edim; ++e) front_size_[f.cell(j, 0, static_cast<int64_t>(e))] = 0;
  pool_.clear();
  pool_.push_back(FrontPoint{0.0, 0.0, -1, -1});  // the empty suffix in 0 stages
  front_begin_[f.cell(f.n, 0, 0)] = 0;
  front_size_[f.cell(f.n, 0, 0)] = 1;
  if (row_.size() < f.edim) row_.resize(f.edim);
  closed_.resize(f.edim);
  lowest_.assign(f.sdim, f.n + 1);
  lowest_[0] = f.n;
  floor_.resize(2 * (static_cast<size_t>(f.n) + 1));
  return true;
}

void CorrectedPlanner::set_floors(int i) {
  // floor_[2j + r]: the smallest load of a stage [i, j') with j' ≥ j (r = 1: as a stage with later
  // stages), a bound on the load of every longer first stage.
  double plain_floor = kInfinity, later_floor = kInfinity;
  const double *plain_row = costs_.load_row(i, 1), *later_row = costs_.load_row(i, 2);
  for (int j = shape_.n; j > i; --j) {
    plain_floor = std::min(plain_floor, plain_row[j]);
    later_floor = std::min(later_floor, later_row[j]);
    floor_[2 * static_cast<size_t>(j)] = plain_floor;
    floor_[2 * static_cast<size_t>(j) + 1] = later_floor;
  }
}

bool CorrectedPlanner::dominated(const std::vector<FrontPoint>& front, double params, double load) {
  double there = kInfinity;
  for (const FrontPoint *p = front.data(), *end = p + front.size(); p != end && p->params <= params; ++p)
    there = p->load;
  return there <= load;
}

void CorrectedPlanner::uniform_frontiers(int i) {
  // Uniform devices (every GPT-style chain: all layers split or none): one target per (i, s), the scan
  // of mixed_frontiers without the one-device stage counts, reading the cost tables by row. About a
  // sixth fewer instructions per planner call than the general loop.
  const FrontierShape f = shape_;  // a copy: the stores to the tables below cannot alias it
  const int n = f.n;
  const double* params_row = costs_.parameter_row(i);
  const int64_t* in_flight_row = costs_.max_in_flight_row(i);
  std::vector<FrontPoint>& target = row_[0];
  const int64_t s_most = std::min<int64_t>(f.cap, n - i);
  for (int64_t s = 1; s <= s_most; ++s) {
    if (in_flight_row[i + 1] < s) {
      // Not even the shortest stage from i fits with s micro-batches in flight, nor with more, and
      // longer stages hold more: no plan from i has s stages or more.
      for (; s <= s_most; ++s) front_size_[f.cell(i, s, 0)] = 0;
      break;
    }
    target.clear();
    const double* load_row = costs_.load_row(i, s);
    const double* floors = &floor_[s > 1 ? 1 : 0];
    const int j_last = n - static_cast<int>(s) + 1;
    for (int j = std::max(i + 1, lowest_[static_cast<size_t>(s - 1)]); j <= j_last; ++j) {
      if (in_flight_row[j] < s) break;
      const double params = params_row[j];
      if (dominated(target, params, floors[2 * static_cast<size_t>(j)])) break;
      const size_t child = f.cell(j, s - 1, 0);
      const int child_size = front_size_[child];
      if (child_size == 0) continue;
      extend_frontier(target, &pool_[static_cast<size_t>(front_begin_[child])], child_size, load_row[j], params, j);
    }
    const size_t id = f.cell(i, s, 0);
    front_begin_[id] = static_cast<int>(pool_.size());
    front_size_[id] = static_cast<int>(target.size());
    if (target.empty()) continue;
    pool_.insert(pool_.end(), target.begin(), target.end());
    lowest_[static_cast<size_t>(s)] = i;
  }
}

void CorrectedPlanner::mixed_frontiers(int i) {
  const FrontierShape f = shape_;  // a copy: the stores to the tables below cannot alias it
  const int n = f.n;
  for (int64_t s = 1; s <= std::min<int64_t>(f.cap, n - i); ++s) {
    // Targets: one-device stage counts e ≤ s whose devices fit.
    const int64_t e_most = std::min(s, f.e_top);
    size_t open = 0;  // targets not closed yet
    for (int64_t e = 0; e <= e_most; ++e) {
      row_[static_cast<size_t>(e)].clear();
      closed_[static_cast<size_t>(e)] = f.devices_of(s, e) > f.K;
      open += closed_[static_cast<size_t>(e)] ? 0 : 1;
    }
    for (int j = std::max(i + 1, lowest_[static_cast<size_t>(s - 1)]); j <= n - s + 1 && open > 0; ++j) {
      if (costs_.max_in_flight(i, j) < s) break;
      const double params = costs_.parameter_bytes(i, j);
      const double floor = floor_[2 * static_cast<size_t>(j) + (s > 1 ? 1 : 0)];
      const double load = costs_.load(i, j, s);
      const int64_t narrow = costs_.devices(i, j) == 1 ? 1 : 0;
      for (int64_t e_rest = 0; e_rest + narrow <= e_most && e_rest < s; ++e_rest) {
        const auto e = static_cast<size_t>(e_rest + narrow);
        if (closed_[e]) continue;
        std::vector<FrontPoint>& target = row_[e];
        if (dominated(target, params, floor)) {
          closed_[e] = 1;
          --open;
          continue;
        }
        const size_t child = f.cell(j, s - 1, e_rest);
        if (front_size_[child] == 0) continue;
        extend_frontier(target, &pool_[front_begin_[child]], front_size_[child], load, params, j);
      }
    }
    for (int64_t e = 0; e <= e_most; ++e) {
      const std::vector<FrontPoint>& row = row_[static_cast<size_t>(e)];
      front_begin_[f.cell(i, s, e)] = static_cast<int>(pool_.size());
      front_size_[f.cell(i, s, e)] = static_cast<int>(row.size());
      if (row.empty()) continue;
      pool_.insert(pool_.end(), row.begin(), row.end());
      lowest_[static_cast<size_t>(s)] = i;
    }
  }
}

Plan CorrectedPlanner::best_plan(const Cluster& cluster) const {
  const FrontierShape f = shape_;  // a copy: the stores to the tables below cannot alias it
  Plan plan;
  plan.width = f.t;
  // Every plan of the whole chain in s stages (e of them on one device) on every frontier point, for every d.
  // The stages on t devices go from fewest to most (e from most to fewest), the order of the ties' rule.
  double best_time = kInfinity;
  int64_t best_d = 0, best_s = 0, best_e = 0;
  int best_k = -1;
  const int64_t replicas = std::min(f.K, cluster.micro_batches);
  for (int64_t d = 1; d <= replicas; d = last_equivalent_degree(d, cluster.micro_batches, f.K) + 1) {
    const int64_t kd = f.K / d;
    const int64_t s_top = std::min(f.cap, f.mixed ? kd : kd / f.a);
    if (s_top < 1) break;  // K/d only shrinks
    for (int64_t s = 1; s <= s_top; ++s)
      for (int64_t e = std::min(s, f.e_top); e >= 0; --e) {
        const int64_t replica_devices = f.mixed ? f.devices_of(s, e) : f.a * s;
        if (f.mixed && replica_devices > kd) break;  // fewer one-device stages only need more devices
        const size_t id = f.cell(0, s, e);
        const int size = front_size_[id];
        if (size == 0) continue;
        // One data-parallel link for every plan of the cell (placement/links.h): the time is monotone in
        // the frontier's two figures.
        const BatchTimeModel time(cluster, d, ring_link(cluster, d, replica_devices));
        const FrontPoint* front = &pool_[front_begin_[id]];
        // No point of the frontier beats the smallest load with the smallest parameters.
        if (corrected_time(time, front[size - 1].load, s, front[0].params) >= best_time) continue;
        for (int k = 0; k < size; ++k) {
          const double plan_time = corrected_time(time, front[k].load, s, front[k].params);
          if (plan_time < best_time) {
            best_time = plan_time;
            best_d = d;
            best_s = s;
            best_e = e;
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
  for (int64_t s = best_s, e = best_e; s > 0; --s) {
    const FrontPoint& point = pool_[static_cast<size_t>(front_begin_[f.cell(i, s, e)] + k)];
    const int64_t devices = costs_.devices(i, point.next);
    plan.stages.push_back(Stage{i, point.next, devices});
    if (f.mixed && devices == 1) --e;
    k = point.pick;
    i = point.next;
  }
  return plan;
}

Plan CorrectedPlanner::solve_frontiers(const Chain& chain, const Cluster& cluster) {
  if (!set_up(chain, cluster)) {
    Plan plan;
    plan.width = chain.width;
    return plan;
  }
  // Frontiers of the suffixes [i, n), i = n − 1 down to 0, in s stages, the first one [i, j). For one
  // (i, s) the first stage grows from the shortest whose rest can have s − 1 stages at all (lowest_), and
  // the scan stops
  // - when the stage no longer fits with s micro-batches in flight (max_stages(i, j) only falls as j grows:
  //   the stage only gets heavier);
  // - when the target frontier already holds a plan with at most the parameters of [i, j) and at most the
  //   smallest load of any stage [i, j') with j' ≥ j: every longer first stage gives plans no better in
  //   either, so the target is closed. In a uniform chain this ends the scan just past the balanced split.
  for (int i = shape_.n - 1; i >= 0; --i) {
    set_floors(i);
    if (shape_.mixed)
      mixed_frontiers(i);
    else
      uniform_frontiers(i);
  }
  return best_plan(cluster);
}

}  // namespace phaze::placement
