#pragma once

// The co-search under Megatron-LM's execution (SearchQuestion::execution, docs/gpu.md "The co-search"): a
// point's layers are scheduled exactly on the design, as under PHAZE's execution, and its iteration is
// priced by the execution model that `phaze predict` validates on GPU clusters (megatron/training_step.h),
// trying every Megatron-LM configuration at the point's micro-batch, HBM size and recomputation setting.

#include <cstdint>
#include <optional>
#include <vector>

#include "hw/architecture.h"
#include "megatron/training_step.h"
#include "model/layer_graph.h"
#include "search/layer_scheduling.h"
#include "search/point.h"
#include "search/question.h"

namespace phaze::search {

/// What the iteration needs of a synthesized accelerator besides its layer times: its HBM, its peak tensor
/// FLOP/s (2 per MAC), its HBM bandwidth for the optimizer step, and no dispatch floor (the chip runs each
/// layer's schedule as one program).
megatron::StepDevice accelerator_step_device(const hw::Architecture& design);

/// The recomputation settings a point's flag stands for: off is none; on is selective or full, whichever
/// the plan search finds faster.
std::vector<megatron::Recompute> megatron_recomputes(bool recompute);

/// The ZeRO stages the co-search tries under Megatron-LM execution: every one, so that a question whose
/// memory is tight (a long sequence) can shard gradients and parameters too.
inline const std::vector<int64_t> kMegatronZeroStages{0, 1, 2, 3};

/// The configurations of one model at one micro-batch that fit in `hbm_bytes` on every design (memory does
/// not depend on the design), in the enumeration's order (megatron/plan_space.h): widths of the model, the
/// question's devices and global batch, `recompute`'s settings. `graphs` are the model's layer graphs at that
/// micro-batch, one per width of the model.
std::vector<megatron::TrainingPlan> fitting_megatron_plans(const SearchQuestion& question, const ModelCase& model,
                                                           const std::vector<model::LayerGraph>& graphs,
                                                           int64_t hbm_bytes, bool recompute);

/// One width of one model at one micro-batch on a design: the exact schedules of its layers, without and
/// (t > 1, t dividing s, or h under GSPMD's sharding) with sequence parallelism, and the layer costs built from them. A
/// pass takes its schedule's makespan, tensor-parallel collectives included (the schedule runs them on the link); the
/// attention core that selective recomputation re-runs takes the exact schedule of its operators alone.
struct MegatronWidth {
  LayerSchedules schedules;
  std::optional<LayerSchedules> sequence_parallel_schedules;
  PassSummary attention_core;
  megatron::LayerCosts costs;
  std::optional<megatron::LayerCosts> sequence_parallel_costs;
};
/// Nothing when some operator has no finite estimate on the design.
std::optional<MegatronWidth> megatron_width(const model::LayerGraph& graph, const hw::Architecture& design,
                                            Scheduling& scheduling);

/// An iteration's time as the search reports it: the busiest stage's micro-batches (steady state, every
/// kernel, tensor-parallel collective and pipeline send of them), the pipeline bubble (fill and drain), the
/// exposed gradient reduction and the optimizer step.
placement::BatchTimeParts megatron_parts(const megatron::StepTime& time);

/// The fastest of `fitting` (the first among equal times) on `design` with its HBM size, priced with the
/// widths' costs (`widths[i]` for the model's i-th width; a plan whose width has none is skipped); infeasible
/// with the reason when none is left.
ModelOutcome megatron_outcome(const SearchQuestion& question, const ModelCase& model,
                              const std::vector<std::optional<MegatronWidth>>& widths,
                              const std::vector<megatron::TrainingPlan>& fitting, const hw::Architecture& design);

}  // namespace phaze::search
