#include "megatron/kernel_validation.h"

#include <array>
#include <cmath>

#include "cost/gpu_kernel.h"
#include "megatron/grid_fit.h"

namespace phaze::megatron {

namespace {

constexpr std::array<const char*, 5> kClasses = {"gemm bf16", "attention forward", "attention backward", "stream",
                                                 "gemm fp8"};
constexpr size_t kFp8Class = 4;
constexpr int64_t kBf16Bytes = 2;
/// The attention rows of FlashAttention-2 (the flash-attn package); the others are the GPU's own library's.
constexpr const char* kFlash2 = "flash2";

bool is_fp8(const std::string& dtype) {
  return dtype == "e4m3xe4m3" || dtype == "e5m2xe4m3" || dtype == "e4m3xe5m2";
}

/// The class of a row, or -1 when phaze does not price it (FP8 GEMMs on a GPU without FP8 tensor cores).
int class_of(const KernelMeasurement& k, const hw::Gpu& gpu, const std::string& attention_backend) {
  switch (k.kind) {
    case KernelKind::Gemm:
      if (k.dtype == "bf16") return 0;
      return is_fp8(k.dtype) && gpu.fp8_flop_per_clock_per_sm > 0 ? static_cast<int>(kFp8Class) : -1;
    case KernelKind::Attention:
      if (k.dtype != "bf16" || k.backend != attention_backend) return -1;
      return k.direction == model::Direction::Forward ? 1 : 2;
    case KernelKind::Stream: return 3;
    case KernelKind::Launch: return -1;
  }
  return -1;
}

double predicted_s(const KernelMeasurement& k, const hw::Gpu& gpu) {
  switch (k.kind) {
    case KernelKind::Gemm:
      return is_fp8(k.dtype) ? cost::gpu_fp8_gemm_s(gpu, k.gemm) : cost::gpu_gemm_s(gpu, k.gemm, kBf16Bytes);
    case KernelKind::Attention:
      return cost::gpu_flash_attention_s(gpu, k.batch_heads, k.seq, k.head_dim, kBf16Bytes, k.direction, k.causal);
    case KernelKind::Stream: return cost::gpu_stream_s(gpu, k.bytes);
    case KernelKind::Launch: break;
  }
  return 0;
}

/// The iteration fit's three figures (in the order Hopper's figures were fitted: tensor efficiency, then
/// the tile overhead, launch time, attention efficiencies and memory efficiency) and the kernel-level three.
std::vector<FitAxis> kernel_fit_axes() {
  const std::vector<FitAxis>& run = iteration_fit_axes();
  return {run[0],
          {&hw::Gpu::tile_overhead_s, 0.1e-6, 0, 200},
          run[2],
          {&hw::Gpu::attention_forward_efficiency, 0.01, 30, 100},
          {&hw::Gpu::attention_backward_efficiency, 0.01, 30, 100},
          run[1]};
}

}  // namespace

double KernelValidation::objective() const {
  double sum = 0;
  for (const KernelClassSummary& c : classes)
    if (c.name != kClasses[kFp8Class]) sum += c.mean_abs_error;
  return sum;
}

double KernelValidation::fp8_objective() const {
  for (const KernelClassSummary& c : classes)
    if (c.name == kClasses[kFp8Class]) return c.mean_abs_error;
  return 0;
}

KernelValidation check_kernels(const std::vector<KernelMeasurement>& kernels, const hw::Gpu& device,
                               const std::string& attention_backend) {
  const hw::Gpu gpu = hw::with_attention_library(
      device, attention_backend == kFlash2 ? hw::AttentionLibrary::Flash2 : hw::AttentionLibrary::Fused);
  KernelValidation out;
  out.rows.resize(kernels.size());
  std::array<KernelClassSummary, kClasses.size()> classes;
  for (size_t i = 0; i < kernels.size(); ++i) {
    const int c = class_of(kernels[i], gpu, attention_backend);
    if (c < 0) {
      ++out.left_out;
      continue;
    }
    const double p = predicted_s(kernels[i], gpu);
    const double error = (p - kernels[i].seconds) / kernels[i].seconds;
    out.rows[i] = KernelRowCheck{p, error};
    KernelClassSummary& s = classes[static_cast<size_t>(c)];
    ++s.count;
    s.mean_abs_error += std::abs(error);
    s.mean_error += error;
    if (std::abs(error) > s.max_abs_error || s.count == 1) {
      s.max_abs_error = std::abs(error);
      s.worst = i;
    }
  }
  for (size_t c = 0; c < classes.size(); ++c) {
    KernelClassSummary& s = classes[c];
    if (s.count == 0) continue;
    s.name = kClasses[c];
    s.mean_abs_error /= static_cast<double>(s.count);
    s.mean_error /= static_cast<double>(s.count);
    out.classes.push_back(s);
  }
  return out;
}

hw::Gpu fit_gpu_kernels(const std::vector<KernelMeasurement>& kernels, const hw::Gpu& gpu,
                        const std::string& attention_backend) {
  hw::Gpu fitted = gpu;
  if (attention_backend == kFlash2) {
    // A second attention library adds its own two figures; the GEMMs, streams and launches keep the fit
    // on the generation's own library.
    fit_on_grid(fitted,
                {{&hw::Gpu::flash2_attention_forward_efficiency, 0.01, 10, 100},
                 {&hw::Gpu::flash2_attention_backward_efficiency, 0.01, 10, 100}},
                [&](const hw::Gpu& trial) { return check_kernels(kernels, trial, attention_backend).objective(); });
    return fitted;
  }
  fit_on_grid(fitted, kernel_fit_axes(),
              [&](const hw::Gpu& trial) { return check_kernels(kernels, trial, attention_backend).objective(); });
  // The FP8 GEMMs share the tile overhead and launch time just fitted; only their efficiency is their own.
  if (fitted.fp8_flop_per_clock_per_sm > 0)
    fit_on_grid(fitted, {{&hw::Gpu::fp8_tensor_efficiency, 0.01, 30, 100}},
                [&](const hw::Gpu& trial) { return check_kernels(kernels, trial, attention_backend).fp8_objective(); });
  return fitted;
}

}  // namespace phaze::megatron
