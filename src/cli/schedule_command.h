#pragma once

#include <CLI/CLI.hpp>

namespace phaze::cli {

/// Registers `phaze schedule`: the minimum-makespan operator schedule of one layer pass on the chip's
/// tensor and vector cores (layer-schedule.md), from a JSON question or from a model's layer on a design.
void add_schedule_command(CLI::App& app);

}  // namespace phaze::cli
