#pragma once

// Architecture description files and the JSON form of a design.
//
// File format: one JSON object. Required keys: num_tc, tc_width, tc_depth, num_vc, vc_width (positive
// integers, at most 65,536; powers of two are not required) and the global buffer as glb_bytes (positive
// integer) or glb_mib (positive number of MiB, a whole number of bytes). Optional keys, defaults of the
// tpuv4-like preset: tc_sram_bytes, vc_sram_bytes (per-core SRAMs; absent or 0 = derived as in
// accelerator.md 1.1), hbm_bytes or hbm_gib (32 GiB), hbm_bandwidth (bytes/s, 1.2e12), clock_hz (1.05e9),
// name (a string; default: the file path). Unknown keys are ignored, except link_bandwidth: the links between
// devices are a system's network (system_json.h), and a link given here would otherwise be ignored silently.
// Every error is an InputError naming the file, the key and the value.

#include <nlohmann/json.hpp>
#include <string>

#include "hw/architecture.h"

namespace phaze::hw {

/// Reads an architecture description file.
Architecture read_architecture_file(const std::string& path);
/// Same from JSON text; `source` names it in error messages (and is the default name).
Architecture parse_architecture(const std::string& text, const std::string& source);
/// Same from a parsed JSON value.
Architecture architecture_from_json(const nlohmann::json& j, const std::string& source);

/// A preset name (see `phaze arch list`) or a path to an architecture file (InputError for neither).
Architecture load_architecture(const std::string& preset_or_path);

/// The design in the form of an architecture file: its name and every key the file takes, the per-core SRAMs
/// as set (0: derived). `architecture_from_json` reads it back to the same design.
nlohmann::ordered_json architecture_file_json(const Architecture& arch);

/// The design with its derived per-core SRAM sizes (tc_sram_bytes, vc_sram_bytes are the effective sizes),
/// area in µm² with its breakdown (area_breakdown_um2) and peak MAC rates. Readable back by
/// `architecture_from_json` (the extra keys are ignored) and gives the same area.
nlohmann::json to_json(const Architecture& arch);

}  // namespace phaze::hw
