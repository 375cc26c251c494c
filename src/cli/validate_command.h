#pragma once

#include <CLI/CLI.hpp>

namespace phaze::cli {

/// `phaze validate FILE.csv`: predicted against measured iteration times.
void add_validate_command(CLI::App& app);

}  // namespace phaze::cli
