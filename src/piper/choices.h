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

/// The choices of the stage of `nodes` (ascending indices; `in_stage[v]` true for them) at width index `w`.
/// Empty when a node has no TMPC at that width or no choice fits with one micro-batch in flight.
/// InputError when the stage has more than piper_limits::kStageChoices non-dominated choices. Without
/// `with_tmpcs`, `tmpc` stays empty (the choices are the same).
StageChoices stage_choices(const Problem& problem, const std::vector<int>& nodes, const std::vector<char>& in_stage,
                           int w, bool with_tmpcs = true);

}  // namespace phaze::piper
