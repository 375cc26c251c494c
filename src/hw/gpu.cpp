// The GPU presets. Structural figures: NVIDIA's A100, H100 and H200 whitepapers and datasheets (docs/gpu.md
// has each with its source). Software figures, one set per generation (docs/gpu.md, "Calibration"): Ampere's
// fitted on the single-node calibration file of measured iterations, Hopper's on kernels measured on an H100
// (bench/gpu/).

#include "hw/gpu.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "util/input_error.h"

namespace phaze::hw {

namespace {

/// Memory a training process holds besides its tensors, measured on an H100 SXM5 with PyTorch 2.11, CUDA
/// 13.0 and cuDNN 9.19 (bench/gpu/results/h100-sxm/memory.json): the CUDA context with cuBLAS's and
/// cuDNN's handles and workspaces (701 MiB), one NCCL communicator (564 MiB), and the caching allocator's
/// reserve beyond its tensors at a training step's peak (5.6–5.9 % in three of four steps, 15.5 % in one).
constexpr int64_t kContextAndLibrariesBytes = 734'855'168;
constexpr int64_t kCommunicatorBytes = 591'396'864;
constexpr double kAllocatorOverhead = 0.06;

/// The memory figures above, with `driver_reserve_bytes` of HBM that the driver keeps from CUDA.
Gpu with_runtime_memory(Gpu g, int64_t driver_reserve_bytes) {
  g.runtime_memory_bytes = driver_reserve_bytes + kContextAndLibrariesBytes;
  g.communicator_memory_bytes = kCommunicatorBytes;
  g.allocator_overhead = kAllocatorOverhead;
  return g;
}

/// Ampere's software figures (`phaze validate --fit` on tests/data/vtrain/ground_truth_single.csv). The
/// fit priced fused attention at the GEMM rate and knew no per-tile cost, so those stay as it had them.
Gpu with_ampere_software(Gpu g) {
  g.tensor_efficiency = 0.84;
  g.memory_efficiency = 0.67;
  g.kernel_launch_s = 63.5e-6;
  g.tile_overhead_s = 0;
  g.attention_forward_efficiency = g.tensor_efficiency;
  g.attention_backward_efficiency = g.tensor_efficiency;
  // FlashAttention-2 is the fused attention Ampere's runs used.
  g.flash2_attention_forward_efficiency = g.attention_forward_efficiency;
  g.flash2_attention_backward_efficiency = g.attention_backward_efficiency;
  g.software_fitted_on = "ampere";
  return g;
}

/// Hopper's software figures: the kernel figures by `phaze validate --kernels --fit` on
/// bench/gpu/results/h100-sxm/kernels.csv (BF16 and FP8 GEMMs of the seed models' layers, cuDNN fused
/// attention, streaming kernels, on one H100 SXM5), then the sustained clock share by `phaze validate --fit`
/// on tests/data/calibration/nemo_bridge_h100.json (NeMo's and Megatron-Bridge's published H100 runs).
/// FlashAttention-2's two figures by `phaze validate --kernels --fit --attention-backend flash2` on the same
/// file's flash-attn rows, the other figures held.
Gpu with_hopper_software(Gpu g) {
  g.tensor_efficiency = 0.8;
  g.memory_efficiency = 0.9;
  g.kernel_launch_s = 13e-6;
  g.tile_overhead_s = 3.9e-6;
  g.attention_forward_efficiency = 0.7;
  g.attention_backward_efficiency = 0.59;
  g.flash2_attention_forward_efficiency = 0.34;
  g.flash2_attention_backward_efficiency = 0.3;
  g.fp8_tensor_efficiency = 0.77;
  g.sustained_clock_share = 0.84;  // fitted on FP8 runs only: it also absorbs FP8's unmodelled costs
  g.software_fitted_on = "hopper";
  return g;
}

/// Blackwell's software figures. No Blackwell kernel has been measured, and none of another generation's
/// figures is borrowed: the kernels are ideal (every main loop at its tensor or FP8 rate, streams at the HBM
/// bandwidth, no tile or launch cost) and one end-to-end figure, the sustained clock share, is fitted by
/// `phaze validate --fit` on Megatron-Bridge's published runs of the GPU's own system
/// (tests/data/calibration/bridge_b200.json, bridge_gb200.json).
Gpu with_blackwell_software(Gpu g, double sustained_clock_share) {
  g.tensor_efficiency = 1;
  g.fp8_tensor_efficiency = 1;
  g.memory_efficiency = 1;
  g.kernel_launch_s = 0;
  g.tile_overhead_s = 0;
  g.attention_forward_efficiency = 1;
  g.attention_backward_efficiency = 1;
  g.flash2_attention_forward_efficiency = 1;
  g.flash2_attention_backward_efficiency = 1;
  g.sustained_clock_share = sustained_clock_share;
  g.fp8_needs_transpose = false;  // Blackwell's FP8 GEMMs read row- and column-wise operands
  g.software_fitted_on = "blackwell";
  return g;
}

void check_positive(double value, double limit, const std::string& source, const char* field) {
  if (!std::isfinite(value) || value <= 0 || value > limit)
    throw InputError(fmt::format("{}: {} = {} must be a number in (0, {:g}]", source, field, value, limit));
}

}  // namespace

double peak_tensor_flop_per_s(const Gpu& g) {
  return static_cast<double>(g.sms) * g.tensor_flop_per_clock_per_sm * g.tensor_clock_hz;
}

Gpu as_sustained(const Gpu& g) {
  Gpu out = g;
  for (double Gpu::*f : {&Gpu::tensor_efficiency, &Gpu::fp8_tensor_efficiency, &Gpu::attention_forward_efficiency,
                         &Gpu::attention_backward_efficiency, &Gpu::flash2_attention_forward_efficiency,
                         &Gpu::flash2_attention_backward_efficiency})
    out.*f *= g.sustained_clock_share;
  return out;
}

Gpu with_attention_library(const Gpu& g, AttentionLibrary library) {
  Gpu out = g;
  if (library == AttentionLibrary::Flash2) {
    out.attention_forward_efficiency = g.flash2_attention_forward_efficiency;
    out.attention_backward_efficiency = g.flash2_attention_backward_efficiency;
  }
  return out;
}

double peak_fp8_flop_per_s(const Gpu& g) {
  return static_cast<double>(g.sms) * g.fp8_flop_per_clock_per_sm * g.tensor_clock_hz;
}

double mfu_ceiling(const Gpu& g, bool fp8) {
  const double sixteen_bit =
      std::max({g.tensor_efficiency, g.attention_forward_efficiency, g.attention_backward_efficiency,
                g.flash2_attention_forward_efficiency, g.flash2_attention_backward_efficiency});
  const double ceiling =
      fp8 ? std::max(sixteen_bit, g.fp8_tensor_efficiency * peak_fp8_flop_per_s(g) / peak_tensor_flop_per_s(g))
          : sixteen_bit;
  return ceiling * g.sustained_clock_share;
}

void validate(const Gpu& g, const std::string& source) {
  if (g.sms < 1 || g.sms > gpu_limits::kSms)
    throw InputError(fmt::format("{}: sms = {} must be in [1, {}]", source, g.sms, gpu_limits::kSms));
  check_positive(g.tensor_flop_per_clock_per_sm, gpu_limits::kFlopPerClock, source, "tensor_flop_per_clock_per_sm");
  check_positive(g.tensor_clock_hz, gpu_limits::kClockHz, source, "tensor_clock_hz");
  check_positive(g.hbm_bandwidth, gpu_limits::kBandwidth, source, "hbm_bandwidth");
  for (auto [value, field] : {std::pair{g.hbm_bytes, "hbm_bytes"}, std::pair{g.l2_bytes, "l2_bytes"},
                              std::pair{g.shared_memory_per_sm_bytes, "shared_memory_per_sm_bytes"}})
    if (value < 1 || value > gpu_limits::kBytes)
      throw InputError(fmt::format("{}: {} = {} must be in [1, {}]", source, field, value, gpu_limits::kBytes));
  if (!std::isfinite(g.fp8_flop_per_clock_per_sm) || g.fp8_flop_per_clock_per_sm < 0 ||
      g.fp8_flop_per_clock_per_sm > gpu_limits::kFlopPerClock)
    throw InputError(fmt::format("{}: fp8_flop_per_clock_per_sm = {} must be in [0, {:g}]", source,
                                 g.fp8_flop_per_clock_per_sm, gpu_limits::kFlopPerClock));
  check_positive(g.tensor_efficiency, 1, source, "tensor_efficiency");
  check_positive(g.fp8_tensor_efficiency, 1, source, "fp8_tensor_efficiency");
  check_positive(g.sustained_clock_share, 1, source, "sustained_clock_share");
  check_positive(g.memory_efficiency, 1, source, "memory_efficiency");
  check_positive(g.attention_forward_efficiency, 1, source, "attention_forward_efficiency");
  check_positive(g.attention_backward_efficiency, 1, source, "attention_backward_efficiency");
  check_positive(g.flash2_attention_forward_efficiency, 1, source, "flash2_attention_forward_efficiency");
  check_positive(g.flash2_attention_backward_efficiency, 1, source, "flash2_attention_backward_efficiency");
  for (auto [value, field] : {std::pair{g.runtime_memory_bytes, "runtime_memory_bytes"},
                              std::pair{g.communicator_memory_bytes, "communicator_memory_bytes"}})
    if (value < 0 || value > gpu_limits::kBytes)
      throw InputError(fmt::format("{}: {} = {} must be in [0, {}]", source, field, value, gpu_limits::kBytes));
  if (!std::isfinite(g.allocator_overhead) || g.allocator_overhead < 0 || g.allocator_overhead > 1)
    throw InputError(fmt::format("{}: allocator_overhead = {} must be in [0, 1]", source, g.allocator_overhead));
  for (auto [value, field] :
       {std::pair{g.kernel_launch_s, "kernel_launch_s"}, std::pair{g.tile_overhead_s, "tile_overhead_s"}})
    if (!std::isfinite(value) || value < 0 || value > gpu_limits::kLaunchS)
      throw InputError(fmt::format("{}: {} = {} must be in [0, {:g}]", source, field, value, gpu_limits::kLaunchS));
}

Gpu a100_40gb() {
  Gpu g;
  g.name = "a100-40gb";
  g.sms = 108;                            // of 128 on the die
  g.tensor_flop_per_clock_per_sm = 2048;  // 4 tensor cores × 256 FP16 FMA
  g.tensor_clock_hz = 1.41e9;             // 108 × 2048 × 1.41 GHz = 312 TFLOP/s dense
  g.hbm_bytes = 40ll << 30;
  g.hbm_bandwidth = 1.555e12;
  g.l2_bytes = 40ll << 20;
  g.shared_memory_per_sm_bytes = 164ll << 10;
  g = with_runtime_memory(g, 0);  // the A100's driver reserve is not measured
  return with_ampere_software(g);
}

Gpu a100_80gb() {
  Gpu g = a100_40gb();
  g.name = "a100-80gb";
  g.hbm_bytes = 80ll << 30;
  g.hbm_bandwidth = 2.039e12;
  return g;
}

Gpu h100_sxm() {
  Gpu g;
  g.name = "h100-sxm";
  g.sms = 132;                            // of 144 on the die
  g.tensor_flop_per_clock_per_sm = 4096;  // 4 tensor cores × 512 FP16 FMA
  g.fp8_flop_per_clock_per_sm = 8192;     // twice the FP16 rate: 1,979 TFLOP/s dense
  g.tensor_clock_hz = 1.83e9;             // 132 × 4096 × 1.83 GHz = 989.4 TFLOP/s dense
  g.hbm_bytes = 80ll << 30;
  g.hbm_bandwidth = 3.35e12;
  g.l2_bytes = 50ll << 20;
  g.shared_memory_per_sm_bytes = 228ll << 10;
  g.generation = "hopper";
  g = with_runtime_memory(g, (80ll << 30) - 85'017'493'504);  // CUDA sees 85,017,493,504 bytes
  return with_hopper_software(g);
}

Gpu h200() {
  Gpu g = h100_sxm();  // the same GH100 die, clocks and power
  g.name = "h200";
  g.hbm_bytes = 141ll << 30;  // 141 GB HBM3e (the device reports 139.8 GiB free of the driver's share)
  g.hbm_bandwidth = 4.8e12;
  g.l2_bytes = 60ll << 20;  // as the device reports it (bench/gpu/results/h200/env.json)
  return with_runtime_memory(g, (141ll << 30) - 150'109'880'320);  // CUDA sees 150,109,880,320 bytes
}

Gpu b200() {
  Gpu g;
  g.name = "b200";
  g.sms = 148;                            // 2 dies × 74 enabled
  g.tensor_flop_per_clock_per_sm = 8192;  // twice Hopper's per SM
  g.fp8_flop_per_clock_per_sm = 16384;
  g.tensor_clock_hz = 1.8557e9;  // 148 × 8192 × 1.8557 GHz = 2,250 TFLOP/s dense BF16 (4,500 FP8)
  g.hbm_bytes = 180ll << 30;     // 180 GB of HBM3e a GPU (DGX B200: 1,440 GB), taken in GiB as the other presets
  g.hbm_bandwidth = 8e12;
  g.l2_bytes = 126ll << 20;
  g.shared_memory_per_sm_bytes = 228ll << 10;
  g.generation = "blackwell";
  g = with_runtime_memory(g, 0);  // the B200's driver reserve is not measured
  return with_blackwell_software(g, 0.49);
}

Gpu gb200() {
  Gpu g = b200();  // the same dies at 1,200 W
  g.name = "gb200";
  g.tensor_clock_hz = 2.0624e9;  // 2,500 TFLOP/s dense BF16 (5,000 FP8)
  g.hbm_bytes = 186ll << 30;
  return with_blackwell_software(g, 0.53);
}

const std::vector<std::string>& gpu_preset_names() {
  static const std::vector<std::string> names = {"a100-40gb", "a100-80gb", "h100-sxm", "h200", "b200", "gb200"};
  return names;
}

std::optional<Gpu> find_gpu_preset(const std::string& name) {
  if (name == "a100-40gb") return a100_40gb();
  if (name == "a100-80gb") return a100_80gb();
  if (name == "h100-sxm") return h100_sxm();
  if (name == "h200") return h200();
  if (name == "b200") return b200();
  if (name == "gb200") return gb200();
  return std::nullopt;
}

}  // namespace phaze::hw
