#pragma once

// A system: its device and the network that joins the devices. The number of devices is not part of it:
// the same system describes a cluster of any size (the question says how many).

#include <optional>
#include <string>
#include <vector>

#include "hw/architecture.h"
#include "hw/network.h"

namespace phaze::hw {

struct System {
  std::string name;     ///< preset name or the file it came from
  Architecture device;  ///< the accelerator of every position
  Network network;
  bool operator==(const System&) const = default;
};

/// The TPUv4-like chip (presets.h) with one 4 GiB/s link joining every device: the system of the original
/// evaluation (method.md 5) and the default of every command.
System tpuv4_like_system();

/// Names of the built-in system presets, in a stable order.
const std::vector<std::string>& system_preset_names();
/// The system preset of that name (the alias "tpuv4" names "tpuv4-like"), or nothing.
std::optional<System> find_system_preset(const std::string& name);

}  // namespace phaze::hw
