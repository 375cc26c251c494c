#pragma once

// The exact TMPC choice of one stage (docs/piper.md of the repository, "TMPC choice"). At degree d a stage's
// time per sample is α/d + β, summed over its nodes' chosen TMPCs, and with y micro-batches in flight it
// needs A·y + B bytes per device. The non-dominated choices, with y_max = the most micro-batches in flight
// with which each fits, answer every (d, y) exactly: the fastest choice at (d, y) is the one of least
// α/d + β among those with y_max ≥ y. Piper's greedy swaps answer the same question approximately.

#include <cstdint>
#include <vector>

#include "piper/problem.h"

namespace phaze::piper {

inline constexpr int64_t kUnlimited = INT64_MAX;  ///< y_max of a choice whose memory does not grow with y

struct StageChoice {
  double alpha = 0;           ///< seconds per sample: Σ (cut bytes / B + p − 4·w/(N·B))
  double beta = 0;            ///< seconds per sample: Σ 4·w/(N·B)
  int64_t max_in_flight = 0;  ///< y_max, from 1 to min(N, K) (no stage has more in flight)
  double time_s(int64_t d) const { return alpha / static_cast<double>(d) + beta; }
};

struct StageChoices {
  std::vector<StageChoice> choices;    ///< non-dominated, by y_max descending
  std::vector<std::vector<int>> tmpc;  ///< per choice, per node of the stage (ascending), the TMPC index
};

namespace choice_detail {
/// A partial choice over the nodes (or groups of identical nodes) merged so far: its sums and how it was built.
struct Partial {
  double alpha = 0, beta = 0, a = 0, m1 = 0;
  int parent = -1;  ///< index in the previous level
  int combo = -1;   ///< index of the option (or the group's combination) added
};
struct Final {
  StageChoice choice;
  int index;  ///< in the last level
};
}  // namespace choice_detail

/// The choices of the stage of `nodes` (ascending indices; `in_stage[v]` true for them) at width index `w`.
/// Empty when a node has no TMPC at that width or no choice fits with one micro-batch in flight.
/// InputError when the stage has more than piper_limits::kStageChoices non-dominated choices. Without
/// `with_tmpcs`, `tmpc` stays empty (the choices are the same).
StageChoices stage_choices(const Problem& problem, const std::vector<int>& nodes, const std::vector<char>& in_stage,
                           int w, bool with_tmpcs = true);

/// Gives the TMPCs `tmpc` (per node of `nodes`, ascending; `in_stage` true for them) of nodes with the same
/// options in this stage in stage_choices' order: among such nodes only how many take each TMPC matters, and
/// stage_choices gives the lower TMPC indices to the lower nodes.
void order_identical_nodes(const Problem& problem, const std::vector<int>& nodes, const std::vector<char>& in_stage,
                           int w, std::vector<int>& tmpc);

/// Whether, at width index `w`, what a stage's cut costs is the same whatever its TMPC choice: every TMPC of a
/// node adds the same sync bytes to each of its edges (true of every published input). Then a stage's
/// choices are the choices of its nodes' own terms, shifted by the cut, and GrowingStage builds them.
bool cut_independent_of_tmpc(const Problem& problem, int w);

/// The choices of a stage that grows and shrinks by one node at a time at width index `w` (where
/// cut_independent_of_tmpc holds): adding a node extends the stage's partial choices by that node's
/// options instead of building them all again, and the cut is kept as a running sum. The choices are
/// stage_choices', up to the rounding of sums taken in another order (nodes added in the walk's order). The planner
/// walks the candidate stages of one outer downset so that each extends its neighbour by one node, and reads the
/// answer's TMPCs back from the same walk (choices_with_tmpcs), so that both see the same sums.
class GrowingStage {
 public:
  GrowingStage(const Problem& problem, int w);
  /// Adds node v, which is not in the stage.
  void push(int v);
  /// Removes the node added last.
  void pop();
  /// Appends the stage's choices to `out` (by y_max descending, as StageChoices::choices).
  void choices(std::vector<StageChoice>& out);
  /// The stage's choices, the same as choices() gives, each with its TMPC per node of the stage (nodes in
  /// ascending order, as stage_nodes lists them).
  StageChoices choices_with_tmpcs();

 private:
  /// A sum kept as an unevaluated pair hi + lo (each addition exact up to 2^-106 of the terms): the cut adds
  /// an edge's bytes and subtracts them again when its other end joins, and in plain doubles a small edge
  /// beside a large one would be lost.
  struct ExactishSum {
    double hi = 0, lo = 0;
    ExactishSum plus(double x) const;
    double value() const { return hi + lo; }
  };

  const Problem& problem_;
  std::vector<std::vector<choice_detail::Partial>> options_;  ///< per node, its undominated TMPCs' own terms
  std::vector<std::vector<int>> option_tmpc_;                 ///< per node and option, its TMPC's index
  std::vector<double> from_side_, to_side_;  ///< per edge, the bytes its cut costs charged at either end
  std::vector<char> in_stage_;
  std::vector<int> nodes_;                                   ///< in the order added
  std::vector<std::vector<choice_detail::Partial>> levels_;  ///< per node count, the partial choices
  std::vector<ExactishSum> cut_bytes_;                       ///< per node count, the stage's cut
  std::vector<choice_detail::Partial> next_;
  std::vector<size_t> run_starts_;
  std::vector<choice_detail::Final> finals_;
};

}  // namespace phaze::piper
