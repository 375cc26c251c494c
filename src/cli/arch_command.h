#pragma once

#include <CLI/CLI.hpp>

namespace phaze::cli {

/// Registers `phaze arch list`, `phaze arch show` and `phaze arch enumerate`.
void add_arch_command(CLI::App& app);

}  // namespace phaze::cli
