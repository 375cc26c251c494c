#pragma once

#include <CLI/CLI.hpp>

namespace phaze::cli {

/// Registers `phaze model list` and `phaze model show`.
void add_model_command(CLI::App& app);

}  // namespace phaze::cli
