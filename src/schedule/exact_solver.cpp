// Exact per-layer scheduling by branch and bound (and list scheduling as its greedy dive): the solvers,
// which try the dynamic program over segments (segment_dp.cpp) first, then the search (exact_search.h).

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "schedule/exact_search.h"
#include "schedule/prepared.h"
#include "schedule/problem.h"
#include "schedule/segment_dp.h"
#include "schedule/usable_cores.h"

namespace phaze::schedule {

namespace {

using detail::build_schedule;
using detail::Choice;
using detail::Dive;
using detail::ExactSearch;
using detail::greedy_dive;
using detail::kBoundTolerance;
using detail::kInf;
using detail::place_layout_tasks;
using detail::prepare;
using detail::Prepared;

/// Search nodes before the exact solver returns its best schedule unproven (a few seconds), by default.
constexpr int64_t kNodeBudget = 4'000'000;

/// Parts of a layer that the search's bounds schedule exactly: at most this many operators, each within this
/// many nodes of its own (not counted in the budget; each part is solved once per search). A search that
/// has not proven its layer within kExactPartsAfter nodes starts again with them: most layers are proven
/// sooner, and for those the parts cost more than they save. Larger parts cost more than their tighter
/// bounds save on the Llama-2-7B passes that took longest.
constexpr int64_t kExactPartsAfter = 50'000;
constexpr int kExactPartTasks = 10;
constexpr int64_t kExactPartNodes = 5'000;

/// The step of the probes' targets after the first search, relative to the bound they start from, and the
/// most probes that go without finding a schedule before the target reaches the incumbent.
constexpr double kProbeStep = 0.02;
constexpr int kMostProbes = 64;

// The shortest single-core schedule of a segment below `cutoff` (segment_dp.h), from the budget's nodes.
detail::SegmentSchedule solve_segment(const Problem& segment, double cutoff, int64_t& budget) {
  const Prepared q = prepare(segment);
  ExactSearch search(segment, q, std::max<int64_t>(budget, 0), false);
  detail::SegmentSchedule out;
  // Most segments asked about have no schedule below the cutoff, which the bounds often show at once.
  search.set_incumbent(cutoff);
  if (cutoff < kInf && search.root_bound() >= cutoff * (1 - kBoundTolerance)) {
    out.proven = true;
    return out;
  }
  // Earliest finish first, and (the "parallel-only" dive: no task here may run parallel) earliest start
  // then longest remaining chain first, which packs long operators early.
  Dive dive = greedy_dive(segment, q, false);
  Dive by_chain = greedy_dive(segment, q, true);
  if (by_chain.makespan < dive.makespan) dive = std::move(by_chain);
  search.set_incumbent(std::min(dive.makespan, cutoff));
  search.run();
  budget -= search.nodes();
  out.proven = search.complete();
  const std::vector<Choice>* path = nullptr;
  if (!search.best_path().empty() && search.best() < std::min(dive.makespan, cutoff))
    path = &search.best_path();
  else if (dive.makespan < cutoff)
    path = &dive.path;
  if (!path) return out;
  out.found = true;
  out.schedule = build_schedule(segment, q, *path);
  if (!out.schedule.feasible) {
    out.schedule.feasible = true;
    out.schedule.tasks.assign(segment.tasks.size(), TaskSlot{});
    for (const Choice& c : *path) out.schedule.tasks[q.task[c.task]] = TaskSlot{c.start, c.finish, false, -1, -1};
    assign_cores(segment, out.schedule);
  }
  place_layout_tasks(segment, out.schedule);
  return out;
}

}  // namespace

bool detail::probe_search(const Problem& problem, const Prepared& q, int64_t node_budget, Dive& incumbent,
                          double& root_bound) {
  // Each probe looks only for a schedule shorter than its target: the root bound raised by a step each time
  // a probe proves there is none, until a probe finds one (its search then goes on to the optimum) or the
  // target reaches the incumbent (a search as the first one). A target well below the optimum prunes most
  // of the tree, so probes prove their "none" fast; and the probe that finds a schedule finds it early, as
  // subtrees bounded above its target are never entered.
  detail::SetTable<double> parts;  // the parts' optima, the same for every probe
  int64_t left = node_budget;
  double floor = -1, least_step = 0;
  while (left > 0) {
    ExactSearch probe(problem, q, left, false);
    probe.set_exact_parts(kExactPartTasks, kExactPartNodes);
    probe.share_exact_parts(parts);
    if (floor < 0) {
      floor = probe.root_bound();
      root_bound = std::max(root_bound, floor);
      // A step of at least this much reaches the incumbent within kMostProbes probes, however small the bound.
      least_step = (incumbent.makespan - floor) / kMostProbes;
    }
    const double target = std::min(incumbent.makespan, std::max(floor * (1 + kProbeStep), floor + least_step));
    probe.set_incumbent(target);
    probe.run();
    left -= probe.nodes();
    // A schedule shorter than the target is shorter than the incumbent (target ≤ incumbent).
    if (!probe.best_path().empty() && probe.best() < target) {
      incumbent = Dive{probe.best(), probe.best_path()};
      return probe.complete();
    }
    if (!probe.complete()) return false;
    if (target >= incumbent.makespan) return true;
    floor = target;
  }
  return false;
}

namespace {

// The problem with only the cores its schedules can use (usable_cores.h): the same schedules, tighter bounds.
// `kept` holds the copy when a count shrinks.
const Problem& with_usable_cores(const Problem& problem, Problem& kept) {
  const CoreCounts usable = usable_cores(problem);
  if (usable.tensor_cores == problem.tensor_cores && usable.vector_cores == problem.vector_cores) return problem;
  kept = problem;
  kept.tensor_cores = usable.tensor_cores;
  kept.vector_cores = usable.vector_cores;
  return kept;
}

Schedule run(const Problem& asked, bool greedy, int64_t node_limit, bool segments = true, bool parts = true) {
  if (!validate(asked).empty()) return Schedule{};
  // Solved with the cores it can use; the schedule is then one of the problem as asked, summarised on it.
  Problem kept;
  const Problem& problem = with_usable_cores(asked, kept);
  const Prepared q = prepare(problem);
  if (!greedy && segments && detail::segments_apply(problem)) {
    // Exact by segments between parallel runs (segment_dp.cpp), when the DAG allows it, with a quarter of
    // the budget for its single-core segment schedules; else (or when that runs out) the search.
    const int64_t granted = std::max<int64_t>(node_limit / 4, 1);
    int64_t budget = granted;
    std::optional<Schedule> by_segments = detail::solve_by_segments(
        problem, q, [&](const Problem& segment, double cutoff) { return solve_segment(segment, cutoff, budget); });
    // The search below gets what is left, so that the budget bounds the whole solve.
    node_limit = std::max<int64_t>(node_limit - (granted - budget), 1);
    if (by_segments) {
      Schedule s = std::move(*by_segments);
      place_layout_tasks(problem, s);
      s.proven_optimal = true;
      s.lower_bound_s = s.makespan_s;
      summarize(asked, s);
      return s;
    }
  }
  // Two greedy dives, the better one is the incumbent: free choice of modes, and all tasks parallel
  // (often optimal when parallel runs are efficient and collectives leave room for the rest).
  // The dives go straight down (a node per task), so the budget is for the search below.
  Dive incumbent = greedy_dive(problem, q, false);
  Dive parallel = greedy_dive(problem, q, true);
  if (parallel.makespan < incumbent.makespan) incumbent = std::move(parallel);
  std::vector<Choice> path = incumbent.path;
  bool optimal = false;
  double root_bound = 0;
  if (!greedy) {
    // The first search keeps its schedule only when strictly better than the incumbent (so that the
    // incumbent's schedule is kept when nothing better exists).
    const int64_t first_limit = parts ? std::min(node_limit, kExactPartsAfter) : node_limit;
    ExactSearch search(problem, q, first_limit, false);
    root_bound = search.root_bound();
    search.set_incumbent(incumbent.makespan);
    search.run();
    if (!search.best_path().empty() && search.best() < incumbent.makespan)
      incumbent = Dive{search.best(), search.best_path()};
    optimal = search.complete();
    // Not proven within the first nodes: again from the start with the exact parts in the bounds, on what is
    // left of the budget.
    if (!optimal && first_limit < node_limit)
      optimal = detail::probe_search(problem, q, node_limit - first_limit, incumbent, root_bound);
    path = incumbent.path;
  }
  Schedule s = build_schedule(problem, q, path);
  if (!s.feasible) {
    // Replay without indices and let the greedy interval rule give cores.
    s.feasible = true;
    s.tasks.assign(problem.tasks.size(), TaskSlot{});
    for (const Choice& c : path) s.tasks[q.task[c.task]] = TaskSlot{c.start, c.finish, c.parallel, -1, -1};
    assign_cores(problem, s);
  }
  place_layout_tasks(problem, s);
  s.proven_optimal = optimal;
  s.lower_bound_s = optimal ? s.makespan_s : std::min(root_bound, s.makespan_s);
  summarize(asked, s);
  return s;
}

class ExactSolver : public Solver {
 public:
  explicit ExactSolver(int64_t node_budget) : node_budget_(node_budget) {}
  Schedule solve(const Problem& problem) override { return run(problem, false, node_budget_); }
  std::string_view name() const override { return "exact"; }

 private:
  int64_t node_budget_;
};

class ListSolver : public Solver {
 public:
  Schedule solve(const Problem& problem) override { return run(problem, true, std::numeric_limits<int64_t>::max()); }
  std::string_view name() const override { return "list"; }
};

}  // namespace

std::unique_ptr<Solver> make_exact_solver() {
  return std::make_unique<ExactSolver>(kNodeBudget);
}
std::unique_ptr<Solver> make_exact_solver(int64_t node_budget) {
  return std::make_unique<ExactSolver>(std::max<int64_t>(node_budget, 1));
}
Schedule detail::solve_by_search(const Problem& problem, int64_t node_budget) {
  return run(problem, false, std::max<int64_t>(node_budget, 1), false);
}

Schedule detail::solve_part(const Problem& problem, int64_t node_budget) {
  return run(problem, false, std::max<int64_t>(node_budget, 1), false, false);
}

double exact_lower_bound(const Problem& asked) {
  if (!validate(asked).empty()) return 0;
  Problem kept;
  const Problem& problem = with_usable_cores(asked, kept);
  const Prepared q = prepare(problem);
  return ExactSearch(problem, q, 0, false).root_bound();
}

bool exact_proves_at_least(const Problem& asked, double target_s, int64_t node_budget) {
  if (!validate(asked).empty() || !(target_s > 0)) return false;
  Problem kept;
  const Problem& problem = with_usable_cores(asked, kept);
  const Prepared q = prepare(problem);
  // One probe of probe_search: only schedules shorter than the target are looked for, with the exact parts in
  // the bounds; a search that ends without one has shown that there is none.
  ExactSearch probe(problem, q, std::max<int64_t>(node_budget, 1), false);
  probe.set_exact_parts(kExactPartTasks, kExactPartNodes);
  if (probe.root_bound() >= target_s) return true;
  probe.set_incumbent(target_s);
  probe.set_first_only();
  probe.run();
  return probe.complete() && probe.best_path().empty();
}

std::unique_ptr<Solver> make_list_solver() {
  return std::make_unique<ListSolver>();
}

}  // namespace phaze::schedule
