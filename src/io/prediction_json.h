#pragma once

// The JSON form of a predicted training iteration (`phaze predict --json`, `phaze plan --json`): times in
// seconds, memory in bytes, rates per second.

#include <nlohmann/json.hpp>

#include "megatron/training_run.h"
#include "megatron/training_step.h"

namespace phaze::io {

/// {"plan": {...}, "iteration_time_s", "breakdown": {forward_s, ...}, "tokens_per_s", "flop_per_s_per_gpu",
///  "mfu", "memory": {weights_bytes, ..., "peak_bytes", "capacity_bytes", "stage"}, "fits"}.
nlohmann::json to_json(const megatron::StepPrediction& prediction);
nlohmann::json to_json(const megatron::TrainingPlan& plan);
/// tokens, tokens_per_iteration, iterations, seconds, gpu_hours and usd (null without a price).
nlohmann::json to_json(const megatron::TrainingRun& run);

}  // namespace phaze::io
