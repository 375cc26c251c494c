#pragma once

// The JSON form of a GPU, in a system file's `device` entry: an object with "kind": "gpu" and the keys
// name (string), sms, tensor_flop_per_clock_per_sm, tensor_clock_hz (Hz), hbm_bytes or hbm_gib,
// hbm_bandwidth (bytes/s), l2_bytes, shared_memory_per_sm_bytes, runtime_memory_bytes,
// communicator_memory_bytes, allocator_overhead, tensor_efficiency, memory_efficiency, kernel_launch_s
// (seconds), tile_overhead_s (seconds), attention_forward_efficiency, attention_backward_efficiency,
// generation, software_fitted_on. A key left out takes the value of the preset named by "base" (default
// "a100-80gb"), so a file may state only what differs. Unknown keys are refused.

#include <nlohmann/json.hpp>
#include <string>

#include "hw/gpu.h"

namespace phaze::hw {

/// True when a device object is a GPU ("kind": "gpu").
bool is_gpu_json(const nlohmann::json& j);
/// Reads a GPU object (validated); `source` names it in messages and is the default name.
Gpu gpu_from_json(const nlohmann::json& j, const std::string& source);
/// The GPU as an object readable back by gpu_from_json, with its peak tensor rate (derived, ignored on
/// reading).
nlohmann::json to_json(const Gpu& gpu);

}  // namespace phaze::hw
