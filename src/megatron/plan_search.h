#pragma once

// `phaze plan`: the fastest Megatron-LM configurations of a model on a number of GPUs that fit in memory,
// found by trying every one (docs/gpu.md, "Planning").

#include <cstdint>
#include <optional>
#include <vector>

#include "hw/system.h"
#include "megatron/training_step.h"
#include "model/model_spec.h"

namespace phaze::megatron {

struct GpuPlanQuestion {
  int64_t gpus = 8;
  int64_t global_batch = 1;                      ///< sequences per iteration
  int64_t seq = 0;                               ///< tokens per sequence
  TrainingPlan features;                         ///< what every configuration shares (PlanSpace::features)
  std::vector<int64_t> zero_stages{0, 1, 2, 3};  ///< PlanSpace::zero_stages
  /// PlanSpace::context_widths; empty: 1 and every power of two c up to 64 with c dividing the GPUs (1 alone on
  /// an accelerator system).
  std::vector<int64_t> context_widths;
  /// PlanSpace::expert_widths; empty: every width dividing the experts and d · c (a mixture of experts).
  std::vector<int64_t> expert_widths;
  std::vector<int64_t> expert_tensor_widths;  ///< PlanSpace::expert_tensor_widths
  /// Settings pinned to the values given (PlanSpace's lists; empty: every value).
  std::vector<int64_t> widths, pipelines, replicas, micro_batches, chunks;
  /// Recomputation tried (empty: none, selective and full).
  std::vector<Recompute> recomputes;
  /// Count the fitting configurations strictly faster than this iteration time (GpuPlanAnswer::faster).
  std::optional<double> faster_than_s;
  bool try_fp8 = false;              ///< PlanSpace::try_fp8
  bool try_split_accounting = true;  ///< PlanSpace::try_split_accounting
  size_t top = 5;                    ///< configurations to return
  /// The list holds the fastest variant of each layout only (degrees, experts, micro-batch, chunks): no two
  /// configurations that differ only in recomputation, ZeRO stage, sequence parallelism, precision or split.
  bool distinct = true;
};

struct GpuPlanAnswer {
  std::vector<megatron::StepPrediction> best;  ///< fastest first; ties in the order of the enumeration
  int64_t evaluated = 0;                       ///< configurations predicted
  int64_t fitting = 0;                         ///< of those, the ones that fit in memory
  /// Whether, c = 1 tried, only configurations with context parallelism (c > 1) fit: the sequence needs it.
  bool fits_only_with_context_parallelism = false;
  /// When configurations were predicted and none fits: the one that needs least memory (the nearest to
  /// fitting), first of equals in the enumeration's order.
  std::optional<megatron::StepPrediction> least_memory;
  int64_t faster = 0;  ///< fitting configurations faster than GpuPlanQuestion::faster_than_s, when given
};

/// Every configuration of for_each_megatron_plan (plan_space.h) over the question's GPUs, batch, sequence,
/// ZeRO stages, context-parallel widths and FP8 choice; recomputation none, selective and full.
/// The system's device is priced by `pricer` (a GPU's kernels by default).
GpuPlanAnswer search_gpu_plans(const model::ModelSpec& spec, const hw::System& system, const GpuPlanQuestion& q,
                               const DevicePricer& pricer = gpu_pricer());

}  // namespace phaze::megatron
