// The greedy dives of the exact solver (list scheduling: the incumbent, and the list solver's answer), and
// a sequence of decisions turned into a schedule.
//
// Incumbent: the better of two greedy dives (free modes; every task parallel).

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "schedule/exact_search.h"
#include "util/dag.h"

namespace phaze::schedule::detail {

Schedule build_schedule(const Problem& p, const Prepared& q, const std::vector<Choice>& path) {
  Schedule out;
  out.feasible = true;
  out.tasks.assign(p.tasks.size(), TaskSlot{});
  const int64_t pairs = p.pairs();
  std::vector<double> tc_free(p.tensor_cores, 0), vc_free(p.vector_cores, 0);
  for (const Choice& c : path) {
    TaskSlot& slot = out.tasks[q.task[c.task]];
    slot.start_s = c.start;
    slot.finish_s = c.finish;
    slot.parallel = c.parallel;
    const uint8_t use = q.use[c.task];
    if (c.parallel) {
      if (use & kTc) std::fill(tc_free.begin(), tc_free.end(), c.finish);
      if (use & kVc) std::fill(vc_free.begin(), vc_free.end(), c.finish);
      continue;
    }
    if (q.comm[c.task]) continue;
    // A core in the state the search chose: free by the start on the used side(s), of the same kind,
    // with the same (clamped) free time on the unused side of a pair.
    int64_t core = -1;
    const bool paired = c.group_kind == (kTc | kVc);
    const int64_t first = paired ? 0 : pairs;
    const int64_t last = paired ? pairs : (use == kTc ? p.tensor_cores : p.vector_cores);
    for (int64_t k = first; k < last && core < 0; ++k) {
      if ((use & kTc) && tc_free[k] > c.start) continue;
      if ((use & kVc) && vc_free[k] > c.start) continue;
      if (paired && use == kTc && std::max(vc_free[k], c.start) != c.other_free) continue;
      if (paired && use == kVc && std::max(tc_free[k], c.start) != c.other_free) continue;
      core = k;
    }
    if (core < 0) return Schedule{};  // caller falls back to the greedy assignment
    if (use & kTc) {
      slot.tensor_core = core;
      tc_free[core] = c.finish;
    }
    if (use & kVc) {
      slot.vector_core = core;
      vc_free[core] = c.finish;
    }
  }
  return out;
}

void place_layout_tasks(const Problem& p, Schedule& s) {
  std::vector<std::vector<int>> in(p.tasks.size());
  for (const auto& [a, b] : p.edges) in[b].push_back(a);
  // Layout tasks take no time: they sit at the latest finish of their predecessors (in topological order).
  for (int i : util::topological_order(static_cast<int>(p.tasks.size()), p.edges)) {
    if (p.tasks[i].kind != TaskKind::None) continue;
    double t = 0;
    for (int a : in[i]) t = std::max(t, s.tasks[a].finish_s);
    s.tasks[i] = TaskSlot{t, t, false, -1, -1};
  }
  s.makespan_s = 0;
  for (const TaskSlot& slot : s.tasks) s.makespan_s = std::max(s.makespan_s, slot.finish_s);
}

Dive greedy_dive(const Problem& problem, const Prepared& q, bool parallel_only) {
  ExactSearch search(problem, q, std::numeric_limits<int64_t>::max(), true);
  if (parallel_only) search.set_parallel_only();
  search.run();
  return {search.best(), search.best_path()};
}

}  // namespace phaze::schedule::detail
