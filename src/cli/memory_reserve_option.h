#pragma once

// --memory-reserve-gib of `predict` and `plan`: HBM a plan must leave free beyond its modelled peak
// (docs/gpu.md, "Memory").

#include <CLI/CLI.hpp>
#include <cstdint>

namespace phaze::cli {

/// Largest reserve accepted, in GiB.
inline constexpr double kMaxMemoryReserveGib = 1 << 20;

/// Adds --memory-reserve-gib (a number of GiB in [0, kMaxMemoryReserveGib], fractions allowed) writing
/// whole bytes to `target`; `target`'s value when added is the default.
CLI::Option* add_memory_reserve_option(CLI::App* cmd, int64_t& target);

}  // namespace phaze::cli
