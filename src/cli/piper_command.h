#pragma once

#include <CLI/CLI.hpp>

namespace phaze::cli {

/// `phaze piper`: the exact plan of a Piper input file.
void add_piper_command(CLI::App& app);

}  // namespace phaze::cli
