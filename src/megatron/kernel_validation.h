#pragma once

// cost/gpu_kernel.h against measured kernels, and the fit of a GPU generation's software figures on them
// (docs/gpu.md, "Calibration"). Rows fall into five classes, each summarised on its own: BF16 GEMMs,
// fused attention forward and backward (of one library, `attention_backend`), streaming kernels, and FP8
// GEMMs on a GPU with FP8 tensor cores. Rows phaze does not price (other attention libraries, launch
// probes, FP8 GEMMs on a GPU without FP8) are counted and left out.

#include <optional>
#include <string>
#include <vector>

#include "hw/gpu.h"
#include "megatron/kernel_measurement.h"

namespace phaze::megatron {

struct KernelRowCheck {
  double predicted_s = 0;
  double error = 0;  ///< (predicted − measured) / measured
};

struct KernelClassSummary {
  std::string name;  ///< "gemm bf16", "attention forward", "attention backward", "stream", "gemm fp8"
  size_t count = 0;
  double mean_abs_error = 0;
  double max_abs_error = 0;
  double mean_error = 0;  ///< signed: > 0 when phaze is slower than measured on average
  size_t worst = 0;       ///< index (into the measurements) of the row with the largest |error|
};

struct KernelValidation {
  std::vector<std::optional<KernelRowCheck>> rows;  ///< in input order; nothing for rows left out
  std::vector<KernelClassSummary> classes;          ///< the classes present, in the order above
  size_t left_out = 0;
  /// What the fit minimises: the sum of the 16-bit classes' mean absolute errors (each class weighs the same).
  double objective() const;
  /// The FP8 GEMMs' mean absolute error (0 without them): what the FP8 efficiency is fitted on.
  double fp8_objective() const;
};

/// Prices every row phaze can on `gpu` (attention rows of `attention_backend` only).
KernelValidation check_kernels(const std::vector<KernelMeasurement>& kernels, const hw::Gpu& gpu,
                               const std::string& attention_backend);

/// The GPU with its six software figures (tensor, memory and both attention efficiencies in steps of 0.01
/// in [0.3, 1]; launch time in steps of 0.5 µs in [0, 200 µs]; tile overhead in steps of 0.1 µs in
/// [0, 20 µs]) fitted to the objective by grid_fit.h, from the GPU's own figures; then, on a GPU with FP8
/// tensor cores, its FP8 efficiency (steps of 0.01 in [0.3, 1]) on the FP8 GEMMs alone, the others held.
hw::Gpu fit_gpu_kernels(const std::vector<KernelMeasurement>& kernels, const hw::Gpu& gpu,
                        const std::string& attention_backend);

}  // namespace phaze::megatron
