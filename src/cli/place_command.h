#pragma once

#include <CLI/CLI.hpp>

namespace phaze::cli {

/// Registers `phaze place`: the placement step on a file in the PHAZE placement format.
void add_place_command(CLI::App& app);

}  // namespace phaze::cli
