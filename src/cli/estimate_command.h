#pragma once

#include <CLI/CLI.hpp>

namespace phaze::cli {

/// Registers `phaze estimate`: per-operator latency and energy of a layer on a design.
void add_estimate_command(CLI::App& app);

}  // namespace phaze::cli
