// Solver-independent parts of the layer schedule (layer-schedule.md): choosing a solver, validating a
// problem, checking a schedule independently of the solver that produced it, and its outputs (section 5:
// greedy core assignment, energy, utilisation, peaks).

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "schedule/problem.h"
#include "util/dag.h"

namespace phaze::schedule {

namespace {

/// The kind a task behaves as: with comm_as_vector a collective is a single-core vector operator.
TaskKind effective_kind(const Problem& problem, const Task& task) {
  return task.kind == TaskKind::Comm && problem.comm_as_vector ? TaskKind::Vector : task.kind;
}

bool uses_tc(TaskKind kind) {
  return kind == TaskKind::Tensor || kind == TaskKind::Fused;
}
bool uses_vc(TaskKind kind) {
  return kind == TaskKind::Vector || kind == TaskKind::Fused;
}
bool is_compute(TaskKind kind) {
  return uses_tc(kind) || uses_vc(kind);
}

/// "task 'X'" for messages.
std::string name(const Problem& problem, size_t i) {
  return fmt::format("task '{}'", problem.tasks[i].id);
}

/// A task on a directed cycle of the edges (every task in `remaining` has a predecessor in it).
size_t task_on_cycle(const Problem& problem, const std::vector<bool>& remaining) {
  std::vector<int> predecessor(problem.tasks.size(), -1);
  for (const auto& [from, to] : problem.edges)
    if (remaining[from] && remaining[to]) predecessor[to] = from;
  size_t i = static_cast<size_t>(std::find(remaining.begin(), remaining.end(), true) - remaining.begin());
  // Walking back n steps from any remaining task ends on a cycle.
  for (size_t step = 0; step < problem.tasks.size(); ++step) i = static_cast<size_t>(predecessor[i]);
  return i;
}

/// A scale for relative time tolerances (rounding in solvers' start times): the largest finish time.
double time_scale(const Schedule& schedule) {
  double scale = 0;
  for (const TaskSlot& slot : schedule.tasks)
    if (std::isfinite(slot.finish_s)) scale = std::max(scale, std::abs(slot.finish_s));
  return scale;
}

/// Cores of each type a task occupies for utilisation and peaks (layer-schedule.md 5).
struct CoreUse {
  int64_t tensor = 0;
  int64_t vector = 0;
};

CoreUse core_use(const Problem& problem, const Task& task, const TaskSlot& slot) {
  const TaskKind kind = effective_kind(problem, task);
  if (!is_compute(kind)) return {};
  const bool parallel = slot.parallel && task.kind != TaskKind::Comm;
  if (!parallel) return {uses_tc(kind) ? 1 : 0, uses_vc(kind) ? 1 : 0};
  switch (kind) {
    case TaskKind::Tensor: return {problem.tensor_cores, 0};
    case TaskKind::Vector: return {0, problem.vector_cores};
    // Our choice (section 5): all tensor cores and the paired vector cores.
    case TaskKind::Fused: return {problem.tensor_cores, problem.pairs()};
    default: return {};
  }
}

}  // namespace

const char* to_string(TaskKind kind) {
  switch (kind) {
    case TaskKind::Tensor: return "tensor";
    case TaskKind::Vector: return "vector";
    case TaskKind::Fused: return "fused";
    case TaskKind::Comm: return "comm";
    case TaskKind::None: return "none";
  }
  return "none";
}

std::unique_ptr<Solver> make_solver(std::string_view name) {
  if (name == "exact") return make_exact_solver();
  if (name == "ilp") return make_milp_solver();
  if (name == "list") return make_list_solver();
  return nullptr;
}

bool has_finite_latencies(const Problem& problem) {
  return std::all_of(problem.tasks.begin(), problem.tasks.end(),
                     [](const Task& t) { return std::isfinite(t.single_s) && std::isfinite(t.parallel_s); });
}

std::string validate(const Problem& problem) {
  if (problem.tensor_cores < 1) return fmt::format("tensor_cores = {} must be at least 1", problem.tensor_cores);
  if (problem.vector_cores < 1) return fmt::format("vector_cores = {} must be at least 1", problem.vector_cores);
  const size_t n = problem.tasks.size();
  std::set<std::string> ids;
  for (size_t i = 0; i < n; ++i) {
    const Task& t = problem.tasks[i];
    if (t.id.empty()) return fmt::format("task {} has an empty id", i);
    if (!ids.insert(t.id).second) return fmt::format("task id '{}' appears twice", t.id);
    const bool compute = is_compute(t.kind);
    const struct {
      const char* what;
      double value;
      bool used;
    } numbers[] = {{"single-core latency", t.single_s, true},
                   {"all-cores latency", t.parallel_s, compute},
                   {"single-core energy", t.single_energy_j, true},
                   {"all-cores energy", t.parallel_energy_j, compute}};
    for (const auto& x : numbers) {
      if (!x.used) continue;
      if (!std::isfinite(x.value)) return fmt::format("{}: {} = {} is not finite", name(problem, i), x.what, x.value);
      if (x.value < 0) return fmt::format("{}: {} = {} is negative", name(problem, i), x.what, x.value);
    }
  }
  std::set<std::pair<int, int>> seen;
  for (size_t k = 0; k < problem.edges.size(); ++k) {
    const auto [from, to] = problem.edges[k];
    if (from < 0 || to < 0 || static_cast<size_t>(from) >= n || static_cast<size_t>(to) >= n)
      return fmt::format("edge {} ({} -> {}) names a task index outside [0, {})", k, from, to, n);
    if (from == to) return fmt::format("self-loop on {}", name(problem, from));
    if (!seen.insert({from, to}).second)
      return fmt::format("duplicate edge {} -> {}", name(problem, from), name(problem, to));
  }
  const std::vector<int> order = util::topological_order(static_cast<int>(n), problem.edges);
  if (order.size() != n) {
    std::vector<bool> remaining(n, true);
    for (int i : order) remaining[i] = false;
    return fmt::format("the edges form a cycle through {}", name(problem, task_on_cycle(problem, remaining)));
  }
  return "";
}

namespace {

/// The check of one task on its own: finite times, its duration in its mode, and its cores.
std::string check_task(const Problem& problem, const Schedule& schedule, size_t i, double tol) {
  const int64_t n_tc = problem.tensor_cores, n_vc = problem.vector_cores, n_p = problem.pairs();
  const Task& task = problem.tasks[i];
  const TaskSlot& slot = schedule.tasks[i];
  const TaskKind kind = effective_kind(problem, task);
  const std::string who = name(problem, i);
  if (!std::isfinite(slot.start_s) || !std::isfinite(slot.finish_s))
    return fmt::format("{}: start {} or finish {} is not finite", who, slot.start_s, slot.finish_s);
  if (slot.start_s < -tol) return fmt::format("{} starts at {} < 0", who, slot.start_s);
  if (task.kind == TaskKind::Comm && slot.parallel) return fmt::format("{}: a collective cannot run parallel", who);
  const bool parallel = slot.parallel && is_compute(kind);
  const double duration = task.kind == TaskKind::None ? 0.0 : parallel ? task.parallel_s : task.single_s;
  const double actual = slot.finish_s - slot.start_s;
  if (!(std::abs(actual - duration) <= tol))
    return fmt::format("{} ({}, {}) runs {} from {} to {}, but its duration is {}", who, to_string(task.kind),
                       parallel ? "parallel" : "single-core", actual, slot.start_s, slot.finish_s, duration);

  const int64_t tc = slot.tensor_core, vc = slot.vector_core;
  if (parallel || !is_compute(kind)) {
    if (tc != -1 || vc != -1)
      return fmt::format("{} ({}{}) must have no core index, has tensor core {} and vector core {}", who,
                         parallel ? "parallel " : "", to_string(task.kind), tc, vc);
    return "";
  }
  switch (kind) {
    case TaskKind::Tensor:
      if (tc < 0 || tc >= n_tc) return fmt::format("{}: tensor core {} is not in [0, {})", who, tc, n_tc);
      if (vc != -1) return fmt::format("{}: a tensor operator has vector core {}", who, vc);
      break;
    case TaskKind::Vector:
      if (vc < 0 || vc >= n_vc) return fmt::format("{}: vector core {} is not in [0, {})", who, vc, n_vc);
      if (tc != -1) return fmt::format("{}: a vector operator has tensor core {}", who, tc);
      break;
    case TaskKind::Fused:
      if (tc != vc)
        return fmt::format("{}: a fused operator runs on tensor core {} and vector core {}, not a pair", who, tc, vc);
      if (tc < 0 || tc >= n_p) return fmt::format("{}: pair {} is not in [0, {})", who, tc, n_p);
      break;
    default: break;
  }
  return "";
}

/// The check of the pairs of tasks: every edge's order, and no two operators at once on one core or on the
/// link (intervals are half-open; an empty one overlaps nothing).
std::string check_task_pairs(const Problem& problem, const Schedule& schedule, double tol) {
  const size_t n = problem.tasks.size();
  const auto overlap = [&](size_t i, size_t j) {
    const TaskSlot &a = schedule.tasks[i], &b = schedule.tasks[j];
    if (a.finish_s - a.start_s <= tol || b.finish_s - b.start_s <= tol) return false;
    return a.start_s < b.finish_s - tol && b.start_s < a.finish_s - tol;
  };
  const auto interval = [&](size_t i) {
    return fmt::format("[{}, {})", schedule.tasks[i].start_s, schedule.tasks[i].finish_s);
  };
  for (const auto& [from, to] : problem.edges) {
    const TaskSlot &a = schedule.tasks[from], &b = schedule.tasks[to];
    if (b.start_s < a.finish_s - tol)
      return fmt::format("{} starts at {} before its predecessor {} finishes at {}", name(problem, to), b.start_s,
                         name(problem, from), a.finish_s);
  }
  for (size_t i = 0; i < n; ++i) {
    const TaskKind ki = effective_kind(problem, problem.tasks[i]);
    const TaskSlot& si = schedule.tasks[i];
    const bool pi = si.parallel && is_compute(ki);
    for (size_t j = i + 1; j < n; ++j) {
      const TaskKind kj = effective_kind(problem, problem.tasks[j]);
      const TaskSlot& sj = schedule.tasks[j];
      const bool pj = sj.parallel && is_compute(kj);
      if (!overlap(i, j)) continue;
      const std::string both =
          fmt::format("{} {} and {} {}", name(problem, i), interval(i), name(problem, j), interval(j));
      if (ki == TaskKind::Comm && kj == TaskKind::Comm) return fmt::format("collectives overlap on the link: {}", both);
      if (!is_compute(ki) || !is_compute(kj)) continue;
      if (pi || pj) {
        const bool share = (uses_tc(ki) && uses_tc(kj)) || (uses_vc(ki) && uses_vc(kj));
        if (!problem.overlap_across_types || share)
          return fmt::format("a parallel operator overlaps another compute operator: {}", both);
        continue;
      }
      if (si.tensor_core >= 0 && si.tensor_core == sj.tensor_core)
        return fmt::format("tensor core {} runs two operators at once: {}", si.tensor_core, both);
      if (si.vector_core >= 0 && si.vector_core == sj.vector_core)
        return fmt::format("vector core {} runs two operators at once: {}", si.vector_core, both);
    }
  }
  return "";
}

}  // namespace

std::string check_schedule(const Problem& problem, const Schedule& schedule, double tolerance_s) {
  const double tol = std::max(tolerance_s, 0.0);
  const size_t n = problem.tasks.size();
  if (!schedule.feasible) return "the schedule is marked infeasible";
  if (schedule.tasks.size() != n)
    return fmt::format("the schedule has {} task slots for {} tasks", schedule.tasks.size(), n);
  double last_finish = 0;
  for (size_t i = 0; i < n; ++i) {
    if (std::string error = check_task(problem, schedule, i, tol); !error.empty()) return error;
    last_finish = std::max(last_finish, schedule.tasks[i].finish_s);
  }
  if (std::string error = check_task_pairs(problem, schedule, tol); !error.empty()) return error;
  if (!std::isfinite(schedule.makespan_s) || schedule.makespan_s < 0)
    return fmt::format("makespan {} is not a finite non-negative time", schedule.makespan_s);
  if (!(std::abs(schedule.makespan_s - last_finish) <= tol))
    return fmt::format("makespan {} differs from the last finish time {}", schedule.makespan_s, last_finish);
  return "";
}

double least_energy_j(const Problem& problem) {
  double energy = 0;
  for (const Task& task : problem.tasks) {
    if (task.kind == TaskKind::None) continue;
    energy += is_compute(task.kind) ? std::min(task.single_energy_j, task.parallel_energy_j) : task.single_energy_j;
  }
  return energy;
}

void summarize(const Problem& problem, Schedule& schedule) {
  const size_t n = std::min(problem.tasks.size(), schedule.tasks.size());
  double energy = 0, tensor_busy = 0, vector_busy = 0;
  struct Interval {
    double start, finish;
    CoreUse use;
  };
  std::vector<Interval> intervals;
  for (size_t i = 0; i < n; ++i) {
    const Task& task = problem.tasks[i];
    const TaskSlot& slot = schedule.tasks[i];
    if (task.kind == TaskKind::None) continue;  // layout only: no cost (V excludes NOPs)
    const bool parallel = slot.parallel && is_compute(task.kind);
    energy += parallel ? task.parallel_energy_j : task.single_energy_j;
    const CoreUse use = core_use(problem, task, slot);
    const double duration = slot.finish_s - slot.start_s;
    tensor_busy += static_cast<double>(use.tensor) * duration;
    vector_busy += static_cast<double>(use.vector) * duration;
    if (duration > 0 && (use.tensor > 0 || use.vector > 0)) intervals.push_back({slot.start_s, slot.finish_s, use});
  }
  // Peaks: the cores busy just after each start; a task finishing at (or, within rounding, just after) that
  // instant is no longer busy (finish events before start events).
  const double eps = 1e-9 * time_scale(schedule);
  int64_t peak_tc = 0, peak_vc = 0;
  for (const Interval& at : intervals) {
    int64_t tc = 0, vc = 0;
    for (const Interval& other : intervals) {
      if (other.start <= at.start && other.finish > at.start + eps) {
        tc += other.use.tensor;
        vc += other.use.vector;
      }
    }
    peak_tc = std::max(peak_tc, tc);
    peak_vc = std::max(peak_vc, vc);
  }
  const double t = schedule.makespan_s;
  schedule.energy_j = energy;
  schedule.tensor_utilisation = t > 0 ? tensor_busy / (static_cast<double>(problem.tensor_cores) * t) : 0;
  schedule.vector_utilisation = t > 0 ? vector_busy / (static_cast<double>(problem.vector_cores) * t) : 0;
  schedule.tensor_peak = static_cast<double>(peak_tc) / static_cast<double>(problem.tensor_cores);
  schedule.vector_peak = static_cast<double>(peak_vc) / static_cast<double>(problem.vector_cores);
}

bool assign_cores(const Problem& problem, Schedule& schedule) {
  const size_t n = std::min(problem.tasks.size(), schedule.tasks.size());
  const int64_t n_tc = problem.tensor_cores, n_vc = problem.vector_cores, n_p = problem.pairs();
  // Tasks that take cores, by start time; at one instant fused tasks first (they need a free pair).
  std::vector<size_t> order;
  for (size_t i = 0; i < n; ++i) {
    TaskSlot& slot = schedule.tasks[i];
    slot.tensor_core = slot.vector_core = -1;
    if (is_compute(effective_kind(problem, problem.tasks[i]))) order.push_back(i);
  }
  const auto fused_first = [&](size_t i) {
    return effective_kind(problem, problem.tasks[i]) == TaskKind::Fused ? 0 : 1;
  };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const double sa = schedule.tasks[a].start_s, sb = schedule.tasks[b].start_s;
    if (sa != sb) return sa < sb;
    return fused_first(a) < fused_first(b);
  });
  const double eps = 1e-9 * time_scale(schedule);
  // The task holding each core, or -1; a parallel task holds all cores of its types.
  std::vector<int64_t> tc_holder(static_cast<size_t>(n_tc), -1), vc_holder(static_cast<size_t>(n_vc), -1);
  const auto release_finished = [&](double now, std::vector<int64_t>& holders) {
    for (int64_t& h : holders)
      if (h >= 0 && schedule.tasks[static_cast<size_t>(h)].finish_s <= now + eps) h = -1;
  };
  const auto highest_free = [](const std::vector<int64_t>& holders) {
    for (int64_t c = static_cast<int64_t>(holders.size()) - 1; c >= 0; --c)
      if (holders[static_cast<size_t>(c)] < 0) return c;
    return int64_t{-1};
  };
  for (size_t i : order) {
    TaskSlot& slot = schedule.tasks[i];
    const TaskKind kind = effective_kind(problem, problem.tasks[i]);
    release_finished(slot.start_s, tc_holder);
    release_finished(slot.start_s, vc_holder);
    // An empty interval holds nothing after its instant.
    const int64_t holder = slot.finish_s > slot.start_s + eps ? static_cast<int64_t>(i) : -1;
    const bool parallel = slot.parallel && problem.tasks[i].kind != TaskKind::Comm;
    if (parallel) {
      const auto take_all = [&](std::vector<int64_t>& holders) {
        for (int64_t& h : holders)
          if (h >= 0) return false;
        for (int64_t& h : holders) h = holder;
        return true;
      };
      if (uses_tc(kind) && !take_all(tc_holder)) return false;
      if (uses_vc(kind) && !take_all(vc_holder)) return false;
      continue;
    }
    if (kind == TaskKind::Fused) {
      int64_t pair = -1;
      for (int64_t c = 0; c < n_p && pair < 0; ++c)
        if (tc_holder[static_cast<size_t>(c)] < 0 && vc_holder[static_cast<size_t>(c)] < 0) pair = c;
      if (pair < 0) return false;
      tc_holder[static_cast<size_t>(pair)] = vc_holder[static_cast<size_t>(pair)] = holder;
      slot.tensor_core = slot.vector_core = pair;
    } else if (kind == TaskKind::Tensor) {
      const int64_t c = highest_free(tc_holder);
      if (c < 0) return false;
      tc_holder[static_cast<size_t>(c)] = holder;
      slot.tensor_core = c;
    } else {
      const int64_t c = highest_free(vc_holder);
      if (c < 0) return false;
      vc_holder[static_cast<size_t>(c)] = holder;
      slot.vector_core = c;
    }
  }
  return true;
}

}  // namespace phaze::schedule
