#pragma once

#include <CLI/CLI.hpp>

namespace phaze::cli {

/// `phaze report`: the HTML page of a search, predict or plan answer.
void add_report_command(CLI::App& app);

}  // namespace phaze::cli
