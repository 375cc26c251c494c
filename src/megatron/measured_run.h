#pragma once

// A measured training run: the model, the plan it ran with and its measured iteration time. What
// `phaze validate` compares predictions against and what the calibration fits on.

#include <cstdint>
#include <string>

#include "megatron/training_plan.h"
#include "model/model_spec.h"

namespace phaze::megatron {

struct MeasuredRun {
  int64_t line = 0;   ///< line of the file it came from (1 = header)
  std::string label;  ///< the file's model label, e.g. "3.6" (billions of parameters), or empty
  model::ModelSpec spec;
  TrainingPlan plan;
  double iteration_s = 0;  ///< measured seconds per iteration
};

}  // namespace phaze::megatron
