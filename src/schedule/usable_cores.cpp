#include "schedule/usable_cores.h"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "schedule/prepared.h"

namespace phaze::schedule {

namespace {

/// The largest set of pairwise unordered tasks among `members` (search indices): by Dilworth's theorem,
/// the members less a maximum matching of "u precedes v" pairs (a minimum cover by chains).
int largest_antichain(const detail::Prepared& q, uint64_t members) {
  const int n = static_cast<int>(q.task.size());
  std::vector<int> matched_to(n, -1);  // right side: the task that precedes it in its chain
  auto augment = [&](auto&& self, int u, uint64_t& visited) -> bool {
    for (uint64_t m = q.descendants[u] & members & ~visited; m; m &= m - 1) {
      const int v = std::countr_zero(m);
      if (visited >> v & 1) continue;
      visited |= uint64_t{1} << v;
      if (matched_to[v] < 0 || self(self, matched_to[v], visited)) {
        matched_to[v] = u;
        return true;
      }
    }
    return false;
  };
  int matching = 0;
  for (uint64_t m = members; m; m &= m - 1) {
    uint64_t visited = 0;
    if (augment(augment, std::countr_zero(m), visited)) ++matching;
  }
  return std::popcount(members) - matching;
}

/// The widest sets of tensor-only and of vector-only operators of a DAG, which depend on its shape alone
/// (kinds, edges, the collectives' rule), not on latencies or cores. A search asks for the same few layer
/// shapes over and over, so each thread keeps the last few it worked out.
struct Widths {
  Problem shape;  // the kinds, edges and collectives' rule; ids of its own, no latencies
  int tensor = 0, vector = 0;
};

bool same_shape(const Problem& shape, const Problem& p) {
  if (shape.comm_as_vector != p.comm_as_vector || shape.tasks.size() != p.tasks.size() || shape.edges != p.edges)
    return false;
  for (size_t i = 0; i < p.tasks.size(); ++i)
    if (shape.tasks[i].kind != p.tasks[i].kind) return false;
  return true;
}

constexpr size_t kKeptShapes = 16;

// The widths of the problem's shape; nullptr when the shape is not a valid DAG (indices, self-loops,
// duplicate edges, cycles), whatever the latencies.
const Widths* widths_of(const Problem& problem) {
  thread_local std::vector<Widths> kept;
  thread_local size_t next = 0;
  for (const Widths& w : kept)
    if (same_shape(w.shape, problem)) return &w;
  Widths w;
  w.shape.edges = problem.edges;
  w.shape.comm_as_vector = problem.comm_as_vector;
  for (const Task& t : problem.tasks)  // ids of its own: only the DAG is checked
    w.shape.tasks.push_back(Task{std::to_string(w.shape.tasks.size()), t.kind, 0, 0, 0, 0});
  if (!validate(w.shape).empty()) return nullptr;
  const detail::Prepared q = detail::prepare(w.shape);
  uint64_t tensor = 0, vector = 0;
  for (size_t s = 0; s < q.task.size(); ++s) {
    if (q.use[s] == detail::kTc) tensor |= uint64_t{1} << s;
    if (q.use[s] == detail::kVc) vector |= uint64_t{1} << s;
  }
  w.tensor = largest_antichain(q, tensor);
  w.vector = largest_antichain(q, vector);
  if (kept.size() < kKeptShapes) {
    kept.push_back(std::move(w));
    return &kept.back();
  }
  Widths& slot = kept[next];
  next = (next + 1) % kKeptShapes;
  slot = std::move(w);
  return &slot;
}

}  // namespace

CoreCounts usable_cores(const Problem& problem) {
  CoreCounts counts{problem.tensor_cores, problem.vector_cores};
  if (problem.tensor_cores == problem.vector_cores) return counts;
  const Widths* widths = widths_of(problem);
  if (!widths) return counts;
  // Only the type with unpaired cores can shrink, down to the pairs plus its widest set of operators.
  const int64_t pairs = problem.pairs();
  if (problem.tensor_cores > pairs)
    counts.tensor_cores = std::min(counts.tensor_cores, std::max<int64_t>(pairs + widths->tensor, 1));
  else
    counts.vector_cores = std::min(counts.vector_cores, std::max<int64_t>(pairs + widths->vector, 1));
  return counts;
}

}  // namespace phaze::schedule
