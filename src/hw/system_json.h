#pragma once

// System description files and the JSON form of a system.
//
// File format: one JSON object with the keys
//   name     a string (default: the file path);
//   device   a GPU or architecture preset name, a path to a device file (relative to this file), or a
//            device object: a GPU when it has "kind": "gpu" (gpu_json.h), an architecture otherwise
//            (architecture_json.h);
//   network  an array of tiers, innermost first, each an object with name (string), members (devices per
//            group; 0, on the outermost tier only, for every device), bandwidth (bytes/s per device),
//            latency_s (seconds per message, default 0) and efficiency (in (0, 1], default 1).
// Unknown keys are refused. Every error is an InputError naming the file, the item, the key and the value.

#include <nlohmann/json.hpp>
#include <string>

#include "hw/system.h"

namespace phaze::hw {

/// Reads a system description from parsed JSON; `source` names it in messages and is the default name.
System system_from_json(const nlohmann::json& j, const std::string& source);
/// Reads a system description file.
System read_system_file(const std::string& path);
/// A system preset name (see `phaze system list`) or a path to a system file (InputError for neither).
System load_system(const std::string& preset_or_path);

/// A network from the array of tiers of a system file (validated); `source` names it in messages.
Network network_from_json(const nlohmann::json& tiers, const std::string& source);

/// The network as the file's `network` array.
nlohmann::json to_json(const Network& network);
/// A torus tier's wiring as its "torus" entry: cube, pod and (once sized) slice.
nlohmann::json to_json(const Torus& torus);
/// The system: name, the device (an architecture with its area, or a GPU), the network. Readable back by
/// `system_from_json` (the device's derived keys are ignored by the architecture reader).
nlohmann::json to_json(const System& system);

}  // namespace phaze::hw
