#include "schedule/prepared.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "util/dag.h"

namespace phaze::schedule::detail {

namespace {

/// Appends task `t` as the next operator: the cores it uses and its single- and parallel-core latencies.
void add_operator(Prepared& q, const Problem& p, const Task& t) {
  const bool comm = t.kind == TaskKind::Comm && !p.comm_as_vector;
  const uint8_t use = t.kind == TaskKind::Tensor                                                     ? kTc
                      : t.kind == TaskKind::Vector || (t.kind == TaskKind::Comm && p.comm_as_vector) ? kVc
                      : t.kind == TaskKind::Fused                                                    ? (kTc | kVc)
                                                                                                     : kNone;
  q.use.push_back(use);
  q.comm.push_back(comm);
  // A parallel run no faster than the single-core one is dominated: it takes every core of its kind and
  // excludes everything else for at least as long, where one core would do (they are all free then).
  const bool parallel_ok = (t.kind == TaskKind::Tensor || t.kind == TaskKind::Vector || t.kind == TaskKind::Fused) &&
                           t.parallel_s < t.single_s;
  q.can_parallel.push_back(parallel_ok);
  q.single.push_back(t.single_s);
  q.parallel.push_back(parallel_ok ? t.parallel_s : std::numeric_limits<double>::infinity());
  q.fastest.push_back(parallel_ok ? std::min(t.single_s, t.parallel_s) : t.single_s);
}

/// Each operator's real predecessors, reached through chains of layout tasks (`in`: every task's
/// predecessors; `index`: a task's operator, or −1).
void set_predecessors(Prepared& q, const std::vector<std::vector<int>>& in, const std::vector<int>& index) {
  const int n = static_cast<int>(q.task.size());
  q.preds.assign(n, {});
  q.pred_mask.assign(n, 0);
  for (int s = 0; s < n; ++s) {
    std::vector<int> stack(in[q.task[s]].begin(), in[q.task[s]].end());
    std::vector<char> seen(in.size(), 0);
    while (!stack.empty()) {
      const int v = stack.back();
      stack.pop_back();
      if (seen[v]) continue;
      seen[v] = 1;
      if (index[v] >= 0) {
        if (!(q.pred_mask[s] >> index[v] & 1)) q.preds[s].push_back(index[v]);
        q.pred_mask[s] |= uint64_t{1} << index[v];
      } else {
        for (int u : in[v]) stack.push_back(u);
      }
    }
  }
}

/// Ancestor and descendant masks, the link tasks and the tasks that feed them.
void set_relatives(Prepared& q) {
  const int n = static_cast<int>(q.task.size());
  q.successor_mask.assign(n, 0);
  for (int s = 0; s < n; ++s)
    for (int pr : q.preds[s]) q.successor_mask[pr] |= uint64_t{1} << s;
  q.ancestors.assign(n, 0);
  for (int s = 0; s < n; ++s) {
    q.ancestors[s] = q.pred_mask[s];
    for (int pr : q.preds[s]) q.ancestors[s] |= q.ancestors[pr];
    if (q.comm[s]) q.link_tasks.push_back(s);
  }
  q.descendants.assign(n, 0);
  for (int s = 0; s < n; ++s)
    for (int a = 0; a < n; ++a)
      if (q.ancestors[s] >> a & 1) q.descendants[a] |= uint64_t{1} << s;
  q.feeds_comm.assign(n, 0);
  for (int s = 0; s < n; ++s)
    if (q.comm[s])
      for (int pr : q.preds[s]) q.feeds_comm[pr] = 1;
}

/// Twins: t and s run the same way on the same cores, and t's place in the DAG is no later than s's (its
/// ancestors are s's or fewer, s's descendants are t's or fewer). Exchanging the two in any schedule
/// keeps it feasible with the same makespan (t may take s's earlier slot since its ancestors have
/// finished by then, s then ends later only for tasks that wait for t too), so some optimal schedule
/// starts t no later than s; the search takes s only after t.
void set_twins(Prepared& q) {
  const int n = static_cast<int>(q.task.size());
  q.earlier_twins.assign(n, 0);
  for (int s = 0; s < n; ++s)
    for (int t = 0; t < s; ++t)
      if (q.use[t] == q.use[s] && q.comm[t] == q.comm[s] && q.can_parallel[t] == q.can_parallel[s] &&
          q.single[t] == q.single[s] && q.parallel[t] == q.parallel[s] && !(q.ancestors[s] >> t & 1) &&
          (q.ancestors[t] & ~q.ancestors[s]) == 0 && (q.descendants[s] & ~q.descendants[t]) == 0)
        q.earlier_twins[s] |= uint64_t{1} << t;
}

}  // namespace

Prepared prepare(const Problem& p) {
  const int n_all = static_cast<int>(p.tasks.size());
  std::vector<std::vector<int>> in(n_all);
  for (const auto& [a, b] : p.edges) in[b].push_back(a);
  Prepared q;
  std::vector<int> index(n_all, -1);
  for (int i : util::topological_order(n_all, p.edges)) {
    const Task& t = p.tasks[i];
    if (t.kind == TaskKind::None) continue;
    index[i] = static_cast<int>(q.task.size());
    q.task.push_back(i);
    add_operator(q, p, t);
  }
  const int n = static_cast<int>(q.task.size());
  if (n > kMaxTasks) throw std::length_error("exact scheduler: more than 64 operators in one layer");
  set_predecessors(q, in, index);
  set_relatives(q);
  set_twins(q);
  // tail[s] = fastest[s] + the largest tail of a successor; search indices are topological.
  q.tail.assign(n, 0);
  q.after.assign(n, 0);
  for (int s = n - 1; s >= 0; --s) {
    q.tail[s] = q.fastest[s] + q.after[s];
    for (int pr : q.preds[s]) q.after[pr] = std::max(q.after[pr], q.tail[s]);
  }
  return q;
}

}  // namespace phaze::schedule::detail
