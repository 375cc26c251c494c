#pragma once

// A whole training run from one iteration's prediction: how many iterations a token budget takes, how long,
// how many GPU-hours and at what price. The last iteration runs whole (Megatron-LM trains whole global
// batches), so a budget that is not a multiple of the tokens per iteration rounds up.

#include <cstdint>
#include <optional>

#include "megatron/training_step.h"

namespace phaze::megatron {

/// Largest accepted token budget and hourly price (docs/limits.md).
inline constexpr double kMaxTrainTokens = 1e18;
inline constexpr double kMaxUsdPerDeviceHour = 1e6;

struct TrainingRun {
  double tokens = 0;                ///< the budget asked for
  double tokens_per_iteration = 0;  ///< global batch · sequence
  double iterations = 0;            ///< ⌈tokens / tokens per iteration⌉
  double seconds = 0;               ///< iterations · iteration time
  double gpu_hours = 0;             ///< seconds · GPUs / 3,600
  std::optional<double> usd;        ///< gpu_hours · the hourly price, when one is given
};

/// The run that trains `tokens` tokens (> 0) at `prediction`'s iteration, priced at `usd_per_gpu_hour` when
/// given.
TrainingRun training_run(const StepPrediction& prediction, double tokens,
                         std::optional<double> usd_per_gpu_hour = std::nullopt);

}  // namespace phaze::megatron
