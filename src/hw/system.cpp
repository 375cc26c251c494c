#include "hw/system.h"

#include <fmt/format.h>

#include "hw/presets.h"
#include "util/input_error.h"

namespace phaze::hw {

namespace {

/// NVSwitch inside a node of 8: the one-direction NVLink bandwidth per GPU (A100 300 GB/s, H100 450 GB/s).
/// Efficiency and per-step latency from the ring all-reduces measured on 2 to 8 A100s of one node
/// (nccl-tests, 1 MiB to 1 GiB, published with vTrain; docs/gpu.md): 2(n−1)/n · bytes / (0.74 · 300 GB/s) +
/// 2(n−1) · 7 µs is within 5 % of them on average.
NetworkTier nvswitch_tier(double bandwidth, int64_t members = 8) {
  return NetworkTier{"nvswitch", members, bandwidth, 7e-6, 0.74};
}

/// InfiniBand across nodes: bytes/s per GPU (its share of the node's NICs), at 0.9 of the line rate (the
/// efficiency other models give it); per-step latency taken equal to NVSwitch's, for lack of a measurement.
NetworkTier infiniband_tier(double bandwidth_per_gpu) {
  return NetworkTier{"infiniband", 0, bandwidth_per_gpu, 7e-6, 0.9};
}

}  // namespace

const std::string& device_name(const Device& device) {
  return std::visit([](const auto& d) -> const std::string& { return d.name; }, device);
}

const Architecture& accelerator_of(const System& system) {
  if (const auto* a = std::get_if<Architecture>(&system.device)) return *a;
  throw InputError(
      fmt::format("system '{}': its device '{}' is a GPU; this command needs an accelerator of the "
                  "template (see 'phaze arch list')",
                  system.name, device_name(system.device)));
}

const Gpu& gpu_of(const System& system) {
  if (const auto* g = std::get_if<Gpu>(&system.device)) return *g;
  throw InputError(
      fmt::format("system '{}': its device '{}' is not a GPU (GPU systems: dgx-a100-40gb, "
                  "dgx-a100-80gb, dgx-h100, dgx-h200, dgx-b200, gb200-nvl72, vtrain-a100; see 'phaze system list')",
                  system.name, device_name(system.device)));
}

System tpuv4_like_system() {
  return System{"tpuv4-like", tpuv4_like(), one_tier_network(4294967296.0)};
}

System tpuv4_pod_system() {
  // Inter-chip interconnect: a 3D torus of 4 × 4 × 4 cubes, 16 × 16 × 16 in a pod of 4,096 chips, each chip
  // joined to its six neighbours by links of 45 GB/s each way; slices of whole cubes wrap round every axis.
  // No published per-hop latency: 1 µs is assumed. Between pods, the data-centre network gives each chip
  // about 6.25 GB/s (its host's 200 Gb/s over 4 chips); its latency, 10 µs, is assumed too (docs/tpu.md).
  NetworkTier ici{"ici", 4096, 45e9, 1e-6, 1.0, Torus{{4, 4, 4}, {16, 16, 16}, {}}};
  NetworkTier dcn{"dcn", 0, 6.25e9, 10e-6, 1.0};
  return System{"tpuv4-pod", tpuv4_published(), Network{{ici, dcn}}};
}

System dgx_a100_system(bool eighty_gb) {
  // 8 × 200 Gb/s HDR ConnectX-6 per node, one per GPU: 25 GB/s per GPU.
  return System{eighty_gb ? "dgx-a100-80gb" : "dgx-a100-40gb", eighty_gb ? a100_80gb() : a100_40gb(),
                Network{{nvswitch_tier(300e9), infiniband_tier(25e9)}}};
}

System dgx_h100_system() {
  // 8 × 400 Gb/s NDR ConnectX-7 per node, one per GPU: 50 GB/s per GPU.
  return System{"dgx-h100", h100_sxm(), Network{{nvswitch_tier(450e9), infiniband_tier(50e9)}}};
}

System dgx_h200_system() {
  // The DGX H100's fabric and NICs with the H200 (DGX BasePOD reference architecture).
  return System{"dgx-h200", h200(), Network{{nvswitch_tier(450e9), infiniband_tier(50e9)}}};
}

System dgx_b200_system() {
  // NVLink 5 (900 GB/s a direction per GPU) inside the node of 8, one 400 Gb/s NIC per GPU across nodes.
  return System{"dgx-b200", b200(), Network{{nvswitch_tier(900e9), infiniband_tier(50e9)}}};
}

System gb200_nvl72_system() {
  // 72 GPUs in one NVLink 5 domain (18 trays of 4 and 9 NVLink switch trays), one 400 Gb/s NIC per GPU
  // between racks (DGX GB200 user guide).
  return System{"gb200-nvl72", gb200(), Network{{nvswitch_tier(900e9, 72), infiniband_tier(50e9)}}};
}

System vtrain_a100_system() {
  // 800 Gb/s (100 GB/s) per node of 8 between nodes: 12.5 GB/s per GPU. The A100's memory size is not
  // stated by the source; 80 GB is taken (docs/gpu.md).
  return System{"vtrain-a100", a100_80gb(), Network{{nvswitch_tier(300e9), infiniband_tier(12.5e9)}}};
}

const std::vector<std::string>& system_preset_names() {
  static const std::vector<std::string> names = {"tpuv4-like",    "tpuv4-pod",   "dgx-a100-40gb",
                                                 "dgx-a100-80gb", "dgx-h100",    "dgx-h200",
                                                 "dgx-b200",      "gb200-nvl72", "vtrain-a100"};
  return names;
}

std::optional<System> find_system_preset(const std::string& name) {
  if (name == "tpuv4-like" || name == "tpuv4") return tpuv4_like_system();
  if (name == "tpuv4-pod") return tpuv4_pod_system();
  if (name == "dgx-a100-40gb") return dgx_a100_system(false);
  if (name == "dgx-a100-80gb") return dgx_a100_system(true);
  if (name == "dgx-h100") return dgx_h100_system();
  if (name == "dgx-h200") return dgx_h200_system();
  if (name == "dgx-b200") return dgx_b200_system();
  if (name == "gb200-nvl72") return gb200_nvl72_system();
  if (name == "vtrain-a100") return vtrain_a100_system();
  return std::nullopt;
}

}  // namespace phaze::hw
