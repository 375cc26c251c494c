#pragma once

// The one line every GPU prediction starts with: what the model assumes of the run and leaves out, so that a
// reader never mistakes a figure for more than it is (docs/gpu.md, "What the model leaves out").

#include <string>

#include "hw/gpu.h"
#include "megatron/training_plan.h"
#include "model/model_spec.h"

namespace phaze::megatron {

/// "assumptions: ..." for `plan` on `gpu`, without a line break: the precision and optimizer, the attention
/// kernel, which overlap is modelled, what the memory leaves out, and, when the GPU's software figures were
/// fitted on another generation's runs (or on none), that too; for a mixture of experts, how its experts are
/// placed and routed.
std::string assumptions_line(const TrainingPlan& plan, const hw::Gpu& gpu, const model::ModelSpec& spec);

}  // namespace phaze::megatron
