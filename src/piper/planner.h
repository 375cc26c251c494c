#pragma once

// The exact planner of Piper's problem (docs/piper.md of the repository, "Planner"): the least time per
// sample over every chain of downsets, every width and degree per stage and every TMPC per node, under the
// device, degree and memory limits. No tolerance enters it: the answer does not depend on the unit of time.

#include <cstdint>
#include <string>
#include <vector>

#include "piper/plan.h"
#include "piper/problem.h"

namespace phaze::piper {

struct PiperAnswer {
  bool feasible = false;
  std::vector<StagePlan> stages;  ///< first to last
  double time_per_sample_s = 0;   ///< evaluate_plan's value of `stages`
  std::string reason;             ///< when not feasible
  // How much work it took (not part of the answer).
  int64_t downsets = 0;
  int64_t stage_pairs = 0;
  int64_t checks = 0;  ///< threshold tests of the search on the time per sample
};

/// Plans `problem` (validated by its reader), building the candidate stages' choices on `threads` ≥ 1
/// threads; the answer is the same whatever their number. InputError when the graph or a stage's choices
/// exceed piper_limits.
PiperAnswer plan_piper(const Problem& problem, int threads = 1);

}  // namespace phaze::piper
