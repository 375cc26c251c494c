#pragma once

// A plan of Piper's problem and its time per sample (docs/piper.md of the repository, "Objective"): the
// one evaluation that the planner's answers, the brute force of the tests and the reader of plans share.

#include <cstdint>
#include <string>
#include <vector>

#include "piper/problem.h"

namespace phaze::piper {

/// One pipeline stage: its nodes (indices, ascending), its data-parallel degree d and width t, and each
/// node's TMPC (an index into the node's options at width t, in the order of `nodes`).
struct StagePlan {
  std::vector<int> nodes;
  int64_t data_parallel = 1;
  int64_t width = 1;
  std::vector<int> tmpc;
  bool operator==(const StagePlan&) const = default;
};

struct PlanEvaluation {
  bool valid = false;
  std::string reason;            ///< why not, when not valid
  double time_per_sample_s = 0;  ///< the largest stage time per sample
  std::vector<double> stage_s;   ///< per stage, first to last
};

/// Checks `stages` (first to last) against the problem and evaluates them. Valid when the stages partition
/// the nodes, every edge goes forward (to the same or a later stage), every stage's width is supported by
/// all its nodes and its TMPC indices exist, every d divides N, Σ d·t ≤ K, Σ d ≤ N, and each stage fits in
/// memory with y = ⌈σ/d⌉ micro-batches in flight, σ the sum of d over it and the later stages:
/// Σ (a·y + b) ≤ M. A stage's time per sample is Σ over its nodes of
///
///     (E/d + 4·(d − 1)·w / (d·N)) / B + p/d,
///
/// E = Σ over its cut edges of 2·(edge bytes + the TMPC's sync bytes of that edge).
PlanEvaluation evaluate_plan(const Problem& problem, const std::vector<StagePlan>& stages);

/// Bytes per micro-batch that `node` with TMPC `c` moves across its stage's boundary (`in_stage[v]` true for
/// the stage's nodes): 2·(edge bytes + the TMPC's sync bytes of that edge) over each edge that leaves the
/// stage, forward activation and backward gradient. E of evaluate_plan's formula.
double cut_bytes(const Problem& problem, const Node& node, const Tmpc& c, const std::vector<char>& in_stage);

/// The index of width t in problem.widths, or -1.
int width_index(const Problem& problem, int64_t t);

}  // namespace phaze::piper
