#pragma once

// The options `predict` and `plan` share: what a run does besides its layout (overlap, attention kernel,
// precision, memory reserve), written into one megatron::TrainingPlan. `plan` applies them to every
// configuration it tries, --tp-comm-overlap to those with sequence parallelism and --overlap-param-gather
// to those with the distributed optimizer.

#include <CLI/CLI.hpp>

#include "megatron/training_plan.h"

namespace phaze::cli {

/// Adds --overlap-grad-reduce (alias --overlap-dp), --overlap-param-gather, --tp-comm-overlap,
/// --overlap-moe-expert-parallel-comm, --moe-shared-expert-overlap,
/// --flash-attention / --no-flash-attention, --attention-backend, --cross-entropy-loss-fusion /
/// --no-cross-entropy-loss-fusion,
/// --bf16 / --fp16, --grad-reduce-in-bf16, --fp8, --fp8-recipe, --fp8-param-gather,
/// --cp-comm-type, --moe-token-dispatcher-type, --moe-expert-capacity-factor (alias --moe-capacity-factor),
/// --moe-pad-expert-input-to-capacity, --moe-load-imbalance, --mtp-num-layers, --zero-group and --memory-reserve-gib,
/// each writing `features`; its values when added are the defaults.
void add_feature_options(CLI::App* cmd, megatron::TrainingPlan& features);

}  // namespace phaze::cli
