#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "megatron/training_run.h"
#include "megatron/training_step.h"

namespace phaze::cli {

/// `phaze predict`: one Megatron-LM iteration on a GPU system, with its breakdown and memory.
void add_predict_command(CLI::App& app);

/// The text report of one prediction (shared with `phaze plan`).
/// The prediction's lines; `device` names one device of the run ("GPU", "device").
std::string prediction_text(const megatron::StepPrediction& prediction, const std::string& device = "GPU");

/// The whole run a token budget asks for (shared with `phaze plan`).
struct TrainingRunOptions {
  double tokens = 0;               ///< --train-tokens (0: not asked)
  double usd_per_device_hour = 0;  ///< --usd-per-device-hour (0: no price)
};
/// Adds --train-tokens and --usd-per-device-hour (which needs the first).
void add_training_run_options(CLI::App* cmd, TrainingRunOptions& o);
/// The run of `prediction` that `o` asks for; nothing without --train-tokens.
std::optional<megatron::TrainingRun> asked_training_run(const TrainingRunOptions& o,
                                                        const megatron::StepPrediction& prediction);
/// The run's line of the text reports.
std::string training_run_text(const megatron::TrainingRun& run);

}  // namespace phaze::cli
