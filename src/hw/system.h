#pragma once

// A system: its device and the network that joins the devices. The number of devices is not part of it:
// the same system describes a cluster of any size (the question says how many). The device is one of two
// kinds: an accelerator of phaze's template (architecture.h), which the co-search designs, or a GPU
// (gpu.h), which `phaze predict` and `phaze plan` price.

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "hw/architecture.h"
#include "hw/gpu.h"
#include "hw/network.h"

namespace phaze::hw {

using Device = std::variant<Architecture, Gpu>;

struct System {
  std::string name;  ///< preset name or the file it came from
  Device device;     ///< the device of every position
  Network network;
  bool operator==(const System&) const = default;
};

/// The device's name (preset name or file).
const std::string& device_name(const Device& device);
/// The system's accelerator; InputError naming the system when its device is a GPU.
const Architecture& accelerator_of(const System& system);
/// The system's GPU; InputError naming the system when its device is an accelerator of the template.
const Gpu& gpu_of(const System& system);

/// The TPUv4-like chip (presets.h) with one 4 GiB/s link joining every device: the system of the original
/// evaluation (method.md 5) and the default of every command.
System tpuv4_like_system();

/// TPU v4 as published (the tpuv4-published chip: 32 GiB of HBM at 1,200 GB/s) in pods of 4,096 joined by a
/// 3D-torus inter-chip interconnect, the pods by the data-centre network (docs/tpu.md).
System tpuv4_pod_system();

/// GPU clusters of any size (docs/gpu.md): 8 GPUs per node on NVSwitch, one InfiniBand NIC per GPU across
/// nodes (DGX A100 with 40 or 80 GB, DGX H100), and the A100 cluster of the vTrain measurements.
System dgx_a100_system(bool eighty_gb);
System dgx_h100_system();
System dgx_h200_system();
/// DGX B200 (8 B200 per NVLink 5 node) and GB200 NVL72 (72 GB200 in one NVLink domain), one 400 Gb/s NIC
/// per GPU beyond.
System dgx_b200_system();
System gb200_nvl72_system();
System vtrain_a100_system();

/// Names of the built-in system presets, in a stable order.
const std::vector<std::string>& system_preset_names();
/// The system preset of that name (the alias "tpuv4" names "tpuv4-like"), or nothing.
std::optional<System> find_system_preset(const std::string& name);

}  // namespace phaze::hw
