#pragma once

// A GPU as phaze prices it (docs/gpu.md): the structure that decides a kernel's time (streaming
// multiprocessors and their tensor-core rate, HBM, L2, shared memory) and three figures of the software
// that runs on it (how close GEMM and fused-attention main loops and streaming kernels come to the peaks,
// the fixed cost of one output tile and of one kernel). The structural figures are NVIDIA's published ones;
// the software figures belong to a generation and are fitted on that generation's measurements
// (docs/gpu.md, "Calibration").

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace phaze::hw {

struct Gpu {
  std::string name;
  int64_t sms = 108;                           ///< streaming multiprocessors enabled on the part
  double tensor_flop_per_clock_per_sm = 2048;  ///< dense FP16/BF16 tensor-core FLOP per clock per SM
  double tensor_clock_hz = 1.41e9;             ///< clock at which the published dense tensor peak holds
  /// Dense FP8 tensor-core FLOP per clock per SM; 0 where the tensor cores have no FP8 (Ampere).
  double fp8_flop_per_clock_per_sm = 0;
  int64_t hbm_bytes = 40ll << 30;   ///< HBM capacity
  double hbm_bandwidth = 1.555e12;  ///< bytes/s
  int64_t l2_bytes = 40ll << 20;    ///< L2 cache
  int64_t shared_memory_per_sm_bytes = 164ll << 10;
  /// HBM a training process cannot use for tensors: what the driver keeps back from CUDA, the CUDA
  /// context, cuBLAS's and cuDNN's handles and workspaces (bytes; measured, docs/gpu.md "Memory").
  int64_t runtime_memory_bytes = 0;
  /// HBM of one NCCL communicator's buffers (bytes; one per parallel group of more than one GPU).
  int64_t communicator_memory_bytes = 0;
  /// The caching allocator's reserve beyond the bytes its tensors occupy at the peak, as a fraction of them.
  double allocator_overhead = 0;
  double tensor_efficiency = 1;  ///< fraction of the tensor rate a GEMM's main loop sustains, in (0, 1]
  /// Fraction of the FP8 tensor rate an FP8 GEMM's main loop sustains, in (0, 1].
  double fp8_tensor_efficiency = 1;
  /// Whether FP8 GEMMs read one operand layout only, so that every FP8 tensor needs a transposed copy too
  /// (Hopper); Blackwell's read both.
  bool fp8_needs_transpose = true;
  double memory_efficiency = 1;  ///< fraction of the HBM bandwidth a streaming kernel sustains, in (0, 1]
  double kernel_launch_s = 0;    ///< fixed seconds per kernel (launch, dispatch, tail), ≥ 0
  /// Fixed seconds each output tile of a GEMM or fused-attention kernel adds to its main loop (filling
  /// the operand pipeline, writing the tile), ≥ 0.
  double tile_overhead_s = 0;
  /// Fractions of the tensor rate the fused-attention kernels' main loops sustain, forward and backward,
  /// in (0, 1] (their softmax and rescaling share the SM with the products).
  double attention_forward_efficiency = 1;
  double attention_backward_efficiency = 1;
  /// The same for FlashAttention-2 (the flash-attn package, Megatron-LM's --attention-backend flash), where
  /// the figures above are the generation's own fused-attention library's (cuDNN on Hopper and Blackwell).
  double flash2_attention_forward_efficiency = 1;
  double flash2_attention_backward_efficiency = 1;
  /// Fraction of its benchmarked tensor-core rate a GPU holds through a training run (clocks under
  /// sustained power draw, kernels sharing the GPU with communication), in (0, 1]: every GEMM and
  /// fused-attention main loop of an iteration runs at this share of what the kernel figures above give.
  /// Fitted on whole iterations only (docs/gpu.md, "Calibration"); 1 where the figures above were.
  double sustained_clock_share = 1;
  std::string generation = "ampere";  ///< the architecture: ampere, hopper, ...; "" when a file does not say
  /// The generation whose measurements the software figures were fitted on; "" when a file gives them. A
  /// prediction says so when it is not the GPU's own generation.
  std::string software_fitted_on = "ampere";

  bool operator==(const Gpu&) const = default;
};

/// Dense FP16 tensor-core peak of the whole GPU in FLOP/s: sms · FLOP/clock/SM · clock.
double peak_tensor_flop_per_s(const Gpu& gpu);

/// The GPU as an iteration runs it: its GEMM and fused-attention efficiencies times its sustained clock
/// share. Kernels measured one at a time are priced on the GPU itself.
Gpu as_sustained(const Gpu& gpu);

/// The library that runs fused attention: the generation's own (cuDNN's fused attention, what Transformer
/// Engine picks on Hopper; Megatron-LM's --attention-backend fused or auto) or FlashAttention-2 (flash).
enum class AttentionLibrary { Fused, Flash2 };

/// The GPU with `library`'s attention efficiencies in attention_forward_efficiency and
/// attention_backward_efficiency, which is where every attention kernel's price reads them.
Gpu with_attention_library(const Gpu& gpu, AttentionLibrary library);

/// Dense FP8 tensor-core peak of the whole GPU in FLOP/s (0 without FP8 tensor cores).
double peak_fp8_flop_per_s(const Gpu& gpu);

/// The largest share of the dense 16-bit peak any prediction on the GPU can reach (docs/gpu.md, "Kernels"):
/// no kernel runs its FLOPs faster than its main loop's efficiency at the sustained clock, so neither a
/// run's MFU nor its TFLOP/s per GPU over the peak exceeds the largest of the GEMM and fused-attention
/// efficiencies times the sustained clock share; with `fp8`, nor the FP8 GEMMs' efficiency times the FP8
/// peak over the 16-bit one (times the share).
double mfu_ceiling(const Gpu& gpu, bool fp8 = false);

/// Largest accepted values of a GPU description (docs/limits.md).
namespace gpu_limits {
inline constexpr int64_t kSms = 1 << 16;
inline constexpr double kFlopPerClock = 1e9;  ///< per SM
inline constexpr double kClockHz = 1e12;      ///< 1 THz
inline constexpr int64_t kBytes = int64_t{1} << 50;
inline constexpr double kBandwidth = 1e18;  ///< bytes/s
inline constexpr double kLaunchS = 1;       ///< seconds per kernel, and per tile
}  // namespace gpu_limits

/// Checks a GPU (InputError naming `source` and the field): counts and rates positive and within gpu_limits,
/// efficiencies in (0, 1], launch and tile times in [0, kLaunchS].
void validate(const Gpu& gpu, const std::string& source);

/// NVIDIA A100-SXM4 with 40 or 80 GB, H100-SXM5 80 GB, H200-SXM 141 GB, B200 (DGX B200, 180 GB) and the
/// GB200 of the NVL72 rack (186 GB) (docs/gpu.md lists every figure with its source).
Gpu a100_40gb();
Gpu a100_80gb();
Gpu h100_sxm();
Gpu h200();
Gpu b200();
Gpu gb200();

/// Names of the built-in GPU presets, in a stable order.
const std::vector<std::string>& gpu_preset_names();
/// The GPU preset of that name, or nothing.
std::optional<Gpu> find_gpu_preset(const std::string& name);

}  // namespace phaze::hw
