#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "hw/system.h"

namespace phaze::cli {

/// --arch and --system of the commands that estimate or schedule one layer: the system gives the network
/// (and the device when --arch is not given), --arch the device.
struct SystemOptions {
  std::string arch = "tpuv4-like";
  std::string system = "tpuv4-like";
};

/// Adds --arch and --system to `cmd`; returns the --arch option.
CLI::Option* add_system_options(CLI::App* cmd, SystemOptions& options, const std::string& when);

/// The system asked for, its device replaced by --arch's when `arch_given` (it was on the command line).
hw::System resolve_system(const SystemOptions& options, bool arch_given);

}  // namespace phaze::cli
