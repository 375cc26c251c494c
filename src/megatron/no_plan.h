#pragma once

// Why `phaze plan` has no configuration to offer, and what would give one (docs/gpu.md, "Planning"): the
// constraint that failed (the heads, the layers or the batch do not divide; memory; the pinned settings),
// the configuration nearest to fitting, the least GPU count that fits and the nearest global batch that
// divides.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hw/system.h"
#include "megatron/plan_search.h"
#include "model/model_spec.h"

namespace phaze::megatron {

struct NoPlanReason {
  /// One sentence per constraint that failed, in the enumeration's order (widths, stages, batch, memory).
  std::vector<std::string> constraints;
  /// The least GPU count above the question's at which some configuration fits, its other settings (pins
  /// included) unchanged, of the multiples of 8 and the powers of two up to 64 times the question's; nothing
  /// when none of those does.
  std::optional<int64_t> least_gpus;
  /// When no data-parallel degree divides the global batch: the nearest global batch that one divides
  /// (the smaller of equals).
  std::optional<int64_t> nearest_global_batch;
  /// The pinned settings (--tp, --pp, --dp, --mbs, --vp, --recompute, --zero, --cp) exclude every
  /// configuration that fits: without them, this one is the fastest.
  std::optional<StepPrediction> without_pins;
};

/// Why `answer` (of search_gpu_plans with `q`) holds no fitting configuration. Runs the search again for
/// other GPU counts, and without the pins.
NoPlanReason explain_no_plan(const model::ModelSpec& spec, const hw::System& system, const GpuPlanQuestion& q,
                             const GpuPlanAnswer& answer, const DevicePricer& pricer = gpu_pricer());

/// The question with no setting pinned: every width, stage count, degree, micro-batch, chunk count,
/// recomputation, ZeRO stage and context-parallel width (FP8 as asked).
GpuPlanQuestion unpinned(const GpuPlanQuestion& q);

/// "t 2 · c 1 · p 4 · d 8, micro-batch 1, recompute none, ZeRO-1": a configuration in one line.
std::string plan_line(const TrainingPlan& plan);

}  // namespace phaze::megatron
