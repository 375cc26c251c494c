#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "megatron/training_step.h"

namespace phaze::cli {

/// `phaze predict`: one Megatron-LM iteration on a GPU system, with its breakdown and memory.
void add_predict_command(CLI::App& app);

/// The text report of one prediction (shared with `phaze plan`).
std::string prediction_text(const megatron::StepPrediction& prediction);

}  // namespace phaze::cli
