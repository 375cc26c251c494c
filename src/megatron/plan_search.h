#pragma once

// `phaze plan`: the fastest Megatron-LM configurations of a model on a number of GPUs that fit in memory,
// found by trying every one (docs/gpu.md, "Planning").

#include <cstdint>
#include <vector>

#include "hw/system.h"
#include "megatron/training_step.h"
#include "model/model_spec.h"

namespace phaze::megatron {

struct GpuPlanQuestion {
  int64_t gpus = 8;
  int64_t global_batch = 1;  ///< sequences per iteration
  int64_t seq = 0;           ///< tokens per sequence
  TrainingPlan features;     ///< what every configuration shares (PlanSpace::features)
  size_t top = 5;            ///< configurations to return
};

struct GpuPlanAnswer {
  std::vector<megatron::StepPrediction> best;  ///< fastest first; ties in the order of the enumeration
  int64_t evaluated = 0;                       ///< configurations predicted
  int64_t fitting = 0;                         ///< of those, the ones that fit in memory
};

/// Every t dividing the GPUs and the heads, p dividing the rest and the layers, d the remainder; every
/// micro-batch b with b · d dividing the global batch; v = 1 and every v > 1 with p · v dividing the layers
/// and p dividing the micro-batch count; sequence parallelism off and (t > 1) on; recomputation none,
/// selective and full; distributed optimizer off and (d > 1) on.
GpuPlanAnswer search_gpu_plans(const model::ModelSpec& spec, const hw::System& system, const GpuPlanQuestion& q);

}  // namespace phaze::megatron
