#pragma once

// Predictions against measured runs, and the fit of a GPU's three software figures (docs/gpu.md,
// "Calibration").

#include <cstdint>
#include <vector>

#include "hw/system.h"
#include "megatron/measured_run.h"

namespace phaze::megatron {

struct RunCheck {
  double predicted_s = 0;
  double error = 0;  ///< (predicted − measured) / measured
};

struct ValidationSummary {
  std::vector<RunCheck> runs;  ///< in the order of the input
  double mean_abs_error = 0;   ///< mean of |error|
  double max_abs_error = 0;
  size_t worst = 0;  ///< index of the run with the largest |error|
};

/// Predicts every run on `system` (whose device must be a GPU).
ValidationSummary check_runs(const std::vector<MeasuredRun>& runs, const hw::System& system);

/// The GPU software figures (tensor_efficiency, memory_efficiency, kernel_launch_s) that minimise the mean
/// absolute error on `runs`: coordinate descent on a grid (efficiencies in steps of 0.01 in [0.3, 1], launch
/// time in steps of 0.5 µs in [0, 200 µs]) from the system's own figures, until a full round improves nothing.
/// Returns the system with the fitted GPU.
hw::System fit_gpu_software(const std::vector<MeasuredRun>& runs, const hw::System& system);

}  // namespace phaze::megatron
