#pragma once

// `phaze predict` on a system of accelerators of the template (a TPU v4 pod): one training configuration's
// iteration, its layers scheduled exactly on the chip, as the co-search does under Megatron-LM execution
// (megatron_execution.h), and the iteration priced by the one execution model that prices GPU clusters
// (megatron::predict_step) on the system's network sized for the plan's devices. GSPMD's sharding of a model
// axis and a fully sharded data axis is the plan's tensor-parallel width and ZeRO-3 data parallelism.

#include <string>

#include "hw/system.h"
#include "megatron/training_plan.h"
#include "megatron/training_step.h"
#include "model/model_spec.h"
#include "search/schedule_cache.h"

namespace phaze::search {

/// The layer costs of `plan` (validated first; InputError naming the option) on `system`, whose device must
/// be an accelerator of the template: each distinct layer's passes scheduled exactly on the chip, tensor-parallel
/// collectives inside the schedule on the network as the plan's devices use it. The attention core is one fused
/// kernel unless the plan says unfused. FP8, context parallelism and multi-token prediction are GPU features:
/// InputError.
megatron::LayerCosts accelerator_layer_costs(const model::ModelSpec& spec, const hw::System& system,
                                             const megatron::TrainingPlan& plan, ScheduleCache& cache);

/// The pricer of any system: a GPU's kernels (megatron::gpu_pricer) or an accelerator's exact schedules
/// (accelerator_layer_costs, accelerator_step_device), the schedules kept for the pricer's later plans.
megatron::DevicePricer system_pricer();

/// "assumptions: ..." of a prediction on an accelerator system, without a line break: how the layers are
/// timed, the precision and optimizer, the attention kernel, the overlap modelled, the torus slice the job takes
/// and what the memory leaves out.
std::string accelerator_assumptions(const megatron::TrainingPlan& plan, const hw::System& system);

}  // namespace phaze::search
