#include "megatron/validation.h"

#include <algorithm>
#include <cmath>
#include <variant>

#include "megatron/training_step.h"

namespace phaze::megatron {

ValidationSummary check_runs(const std::vector<MeasuredRun>& runs, const hw::System& system) {
  ValidationSummary out;
  out.runs.reserve(runs.size());
  double sum = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    const StepPrediction p = predict_step(runs[i].spec, system, runs[i].plan);
    const double error = (p.time.iteration_s - runs[i].iteration_s) / runs[i].iteration_s;
    out.runs.push_back(RunCheck{p.time.iteration_s, error});
    sum += std::abs(error);
    if (std::abs(error) > out.max_abs_error) {
      out.max_abs_error = std::abs(error);
      out.worst = i;
    }
  }
  out.mean_abs_error = runs.empty() ? 0 : sum / static_cast<double>(runs.size());
  return out;
}

namespace {

/// Grid index ↔ value of one fitted figure.
struct Axis {
  double hw::Gpu::*field;
  double step;
  int low, high;  ///< grid indices
};

}  // namespace

hw::System fit_gpu_software(const std::vector<MeasuredRun>& runs, const hw::System& system) {
  hw::System best = system;
  hw::Gpu& gpu = std::get<hw::Gpu>(best.device);
  const Axis axes[] = {{&hw::Gpu::tensor_efficiency, 0.01, 30, 100},
                       {&hw::Gpu::memory_efficiency, 0.01, 30, 100},
                       {&hw::Gpu::kernel_launch_s, 0.5e-6, 0, 400}};
  for (const Axis& a : axes)  // start on the grid
    gpu.*a.field = std::clamp(std::round(gpu.*a.field / a.step), double(a.low), double(a.high)) * a.step;
  double best_error = check_runs(runs, best).mean_abs_error;
  for (bool improved = true; improved;) {
    improved = false;
    for (const Axis& a : axes) {
      // Walk each way from the current point while the error falls.
      for (int direction : {-1, 1}) {
        for (;;) {
          const int index = static_cast<int>(std::round(gpu.*a.field / a.step)) + direction;
          if (index < a.low || index > a.high) break;
          const double kept = gpu.*a.field;
          gpu.*a.field = index * a.step;
          const double error = check_runs(runs, best).mean_abs_error;
          if (error < best_error) {
            best_error = error;
            improved = true;
          } else {
            gpu.*a.field = kept;
            break;
          }
        }
      }
    }
  }
  return best;
}

}  // namespace phaze::megatron
