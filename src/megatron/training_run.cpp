#include "megatron/training_run.h"

#include <cmath>

namespace phaze::megatron {

TrainingRun training_run(const StepPrediction& p, double tokens, std::optional<double> usd_per_gpu_hour) {
  TrainingRun r;
  r.tokens = tokens;
  r.tokens_per_iteration = static_cast<double>(p.plan.global_batch) * static_cast<double>(p.plan.seq);
  r.iterations = std::ceil(tokens / r.tokens_per_iteration);
  r.seconds = r.iterations * p.time.iteration_s;
  r.gpu_hours = r.seconds * static_cast<double>(p.plan.gpus()) / 3600;
  if (usd_per_gpu_hour) r.usd = r.gpu_hours * *usd_per_gpu_hour;
  return r;
}

}  // namespace phaze::megatron
