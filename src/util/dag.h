#pragma once

// Topological order of a directed graph of n nodes 0..n-1, the one order every DAG reader of the tree
// uses, so that answers that depend on it (search indices, tie-breaking) are the same everywhere.

#include <utility>
#include <vector>

namespace phaze::util {

/// Kahn's algorithm, first in first out: the sources by index, then each node as its last predecessor is
/// taken, a node's successors in the order of their list. On a cycle the order holds only the nodes with no
/// cycle before them (the same set in any Kahn order), so it is shorter than n: callers test its size.
/// `successors[i]`: the nodes that wait for i, each in [0, n) (a self-loop is a cycle).
std::vector<int> topological_order(const std::vector<std::vector<int>>& successors);

/// The same for `edges` (from, to), `to` waiting for `from`, both in [0, n): successors in edge order.
std::vector<int> topological_order(int n, const std::vector<std::pair<int, int>>& edges);

/// Successor lists of n nodes from `edges` (from, to), each list in edge order.
std::vector<std::vector<int>> successor_lists(int n, const std::vector<std::pair<int, int>>& edges);

}  // namespace phaze::util
