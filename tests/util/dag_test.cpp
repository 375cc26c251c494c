// The topological order against brute force on random graphs: on a DAG it is a permutation in which every
// edge goes forward; with cycles it holds exactly the nodes that no cycle reaches (from a reachability
// closure). Its tie order (sources by index, then first in first out, successors in edge order) on a small
// graph worked out by hand: the exact solver's search indices, and so its answers, depend on that order.

#include "util/dag.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <utility>
#include <vector>

namespace {

using phaze::util::successor_lists;
using phaze::util::topological_order;
using Edges = std::vector<std::pair<int, int>>;

/// Random edges between n nodes, none a self-loop; forward only (i < j) unless `cycles`.
Edges random_edges(std::mt19937& rng, int n, bool cycles) {
  Edges edges;
  std::uniform_real_distribution<double> coin(0, 1);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (i != j && (cycles || i < j) && coin(rng) < 0.3) edges.emplace_back(i, j);
  std::shuffle(edges.begin(), edges.end(), rng);
  // Relabel the nodes, so that index order is no topological order.
  std::vector<int> label(n);
  for (int i = 0; i < n; ++i) label[i] = i;
  std::shuffle(label.begin(), label.end(), rng);
  for (auto& [a, b] : edges) a = label[a], b = label[b];
  return edges;
}

/// reach[a][b]: a path of at least one edge runs from a to b (Floyd-Warshall closure).
std::vector<std::vector<bool>> reachability(int n, const Edges& edges) {
  std::vector<std::vector<bool>> reach(n, std::vector<bool>(n, false));
  for (const auto& [a, b] : edges) reach[a][b] = true;
  for (int k = 0; k < n; ++k)
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b)
        if (reach[a][k] && reach[k][b]) reach[a][b] = true;
  return reach;
}

TEST(TopologicalOrder, EveryEdgeGoesForwardOnRandomDags) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 1 + trial % 12;
    const Edges edges = random_edges(rng, n, false);
    const std::vector<int> order = topological_order(n, edges);
    ASSERT_EQ(order.size(), static_cast<size_t>(n));
    std::vector<int> position(n, -1);
    for (int k = 0; k < n; ++k) {
      ASSERT_GE(order[k], 0);
      ASSERT_LT(order[k], n);
      ASSERT_EQ(position[order[k]], -1) << "node " << order[k] << " twice";
      position[order[k]] = k;
    }
    for (const auto& [a, b] : edges) EXPECT_LT(position[a], position[b]) << a << " -> " << b;
  }
}

TEST(TopologicalOrder, OnCyclesHoldsExactlyTheNodesNoCycleReaches) {
  std::mt19937 rng(11);
  int with_cycle = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 1 + trial % 10;
    const Edges edges = random_edges(rng, n, true);
    const auto reach = reachability(n, edges);
    std::vector<bool> blocked(n, false);  // on a cycle, or after one
    for (int c = 0; c < n; ++c)
      if (reach[c][c])
        for (int v = 0; v < n; ++v) blocked[v] = blocked[v] || v == c || reach[c][v];
    const std::vector<int> order = topological_order(n, edges);
    std::vector<bool> listed(n, false);
    for (int v : order) listed[v] = true;
    for (int v = 0; v < n; ++v) EXPECT_EQ(listed[v], !blocked[v]) << "node " << v << " of trial " << trial;
    if (std::count(blocked.begin(), blocked.end(), true) > 0) ++with_cycle;
  }
  EXPECT_GT(with_cycle, 100);  // the random graphs do exercise cycles
}

TEST(TopologicalOrder, TiesGoSourcesByIndexThenFirstInFirstOut) {
  // Sources 0 and 3 by index; 0 releases 4 then 2 (edge order); 3 does not release 1 yet, 2 does.
  const Edges edges{{3, 1}, {0, 4}, {0, 2}, {2, 1}};
  EXPECT_EQ(topological_order(5, edges), (std::vector<int>{0, 3, 4, 2, 1}));
  EXPECT_EQ(topological_order(successor_lists(5, edges)), (std::vector<int>{0, 3, 4, 2, 1}));
  EXPECT_EQ(successor_lists(5, edges), (std::vector<std::vector<int>>{{4, 2}, {}, {1}, {1}, {}}));
}

TEST(TopologicalOrder, SelfLoopAndEmptyGraph) {
  EXPECT_TRUE(topological_order(0, {}).empty());
  EXPECT_EQ(topological_order(3, {{1, 1}}), (std::vector<int>{0, 2}));
}

}  // namespace
