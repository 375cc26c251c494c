#pragma once

// The candidate stages of Piper's problem (docs/piper.md of the repository, "Stages"): a downset is a node
// set closed under successors (what runs after a cut); a stage is D \ D' for downsets D' ⊊ D, which runs
// before every stage of D'. A plan is a chain V = D_0 ⊋ D_1 ⊋ … ⊋ D_p = ∅, its i-th stage D_{i−1} \ D_i.

#include <cstdint>
#include <utility>
#include <vector>

#include "piper/problem.h"

namespace phaze::piper {

struct Downsets {
  std::vector<std::vector<uint64_t>> sets;  ///< bitsets over the node indices; ∅ first, by size then bits
  std::vector<int> sizes;                   ///< nodes in each
  std::vector<std::vector<int>> below;      ///< per downset D, every downset D' ⊊ D (indices, ascending)
  /// Per downset D, each node v whose removal leaves a downset (no predecessor of v in D), with the index of
  /// D \ {v}, by v ascending. Every D' ⊊ D is reached from D by such removals, one node at a time.
  std::vector<std::vector<std::pair<int, int>>> removals;
  int64_t pairs = 0;             ///< Σ |below|
  int64_t stage_node_count = 0;  ///< Σ over the pairs of the nodes of D \ D'
  int full = 0;                  ///< the index of V
};

/// Every downset of the problem's DAG and every pair D' ⊊ D. InputError when there are more than
/// piper_limits::kDownsets downsets or kStagePairs pairs (a graph too wide to cut exhaustively).
Downsets enumerate_downsets(const Problem& problem);

/// The node indices of D \ D', ascending.
std::vector<int> stage_nodes(const Downsets& downsets, int outer, int inner);

}  // namespace phaze::piper
