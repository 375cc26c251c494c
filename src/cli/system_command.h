#pragma once

#include <CLI/CLI.hpp>

namespace phaze::cli {

/// Registers `phaze system list` and `phaze system show`.
void add_system_command(CLI::App& app);

}  // namespace phaze::cli
