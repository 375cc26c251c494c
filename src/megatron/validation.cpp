#include "megatron/validation.h"

#include <algorithm>
#include <cmath>
#include <variant>

#include "megatron/grid_fit.h"
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

hw::System fit_gpu_software(const std::vector<MeasuredRun>& runs, const hw::System& system) {
  hw::System best = system;
  hw::Gpu& gpu = std::get<hw::Gpu>(best.device);
  fit_on_grid(gpu, iteration_fit_axes(), [&](const hw::Gpu& trial) {
    hw::System s = system;
    s.device = trial;
    return check_runs(runs, s).mean_abs_error;
  });
  return best;
}

}  // namespace phaze::megatron
