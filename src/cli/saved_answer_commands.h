#pragma once

#include <CLI/CLI.hpp>

namespace phaze::cli {

/// `phaze show ANSWER.json`: a saved search, predict or plan answer as text.
void add_show_command(CLI::App& app);
/// `phaze compare A.json B.json`: two saved answers of one kind side by side.
void add_compare_command(CLI::App& app);

}  // namespace phaze::cli
