#pragma once

#include <CLI/CLI.hpp>

namespace phaze::cli {

void add_search_command(CLI::App& app);

}  // namespace phaze::cli
