#pragma once

// What would fit when a configuration does not: the configurations one or two memory-saving steps from it
// on the same GPUs and global batch (more recomputation, a higher ZeRO stage, sequence parallelism, twice the
// tensor or pipeline width for half the replicas, half the micro-batch), those Megatron-LM can run and that
// fit, fastest first, each with the flags that make it.

#include <cstddef>
#include <string>
#include <vector>

#include "hw/system.h"
#include "megatron/training_step.h"
#include "model/model_spec.h"

namespace phaze::megatron {

struct FitSuggestion {
  std::string flags;  ///< the options that change, as `predict` takes them, e.g. "--recompute full --zero 1"
  StepPrediction prediction;
};

/// At most `most` configurations near `plan` that fit where `plan` does not, fastest first (ties: fewer
/// steps, then the order of the steps above); none when nothing near fits.
std::vector<FitSuggestion> fitting_neighbours(const model::ModelSpec& spec, const hw::System& system,
                                              const TrainingPlan& plan, size_t most = 3);

}  // namespace phaze::megatron
