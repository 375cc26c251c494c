#pragma once

#include <CLI/CLI.hpp>

namespace phaze::cli {

/// `phaze plan`: the fastest Megatron-LM configurations that fit, found exhaustively.
void add_plan_command(CLI::App& app);

}  // namespace phaze::cli
