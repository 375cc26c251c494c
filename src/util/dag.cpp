#include "util/dag.h"

#include <cstddef>

namespace phaze::util {

std::vector<int> topological_order(const std::vector<std::vector<int>>& successors) {
  const std::size_t n = successors.size();
  std::vector<int> indegree(n, 0);
  for (const std::vector<int>& out : successors)
    for (int b : out) ++indegree[b];
  std::vector<int> order;
  order.reserve(n);
  for (std::size_t i = 0; i < n; ++i)
    if (indegree[i] == 0) order.push_back(static_cast<int>(i));
  for (std::size_t head = 0; head < order.size(); ++head)
    for (int b : successors[order[head]])
      if (--indegree[b] == 0) order.push_back(b);
  return order;
}

std::vector<int> topological_order(int n, const std::vector<std::pair<int, int>>& edges) {
  return topological_order(successor_lists(n, edges));
}

std::vector<std::vector<int>> successor_lists(int n, const std::vector<std::pair<int, int>>& edges) {
  std::vector<std::vector<int>> successors(n);
  for (const auto& [from, to] : edges) successors[from].push_back(to);
  return successors;
}

}  // namespace phaze::util
