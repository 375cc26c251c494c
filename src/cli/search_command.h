#pragma once

#include <CLI/CLI.hpp>

namespace phaze::cli {

void add_search_command(CLI::App& app);
/// phaze evaluate: the search's pricing of one chip given whole (--arch).
void add_evaluate_command(CLI::App& app);

}  // namespace phaze::cli
