// A CSV of measured runs (phaze validate FILE): parse, then predict the first runs on the vTrain cluster.
#include <cmath>
#include <cstdlib>

#include "fuzz_input.h"
#include "hw/system.h"
#include "io/measured_runs.h"
#include "megatron/training_step.h"
#include "util/input_error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace phaze;
  try {
    const auto runs = io::parse_measured_runs(fuzz::as_text(data, size), "runs.csv");
    if (runs.empty()) std::abort();  // no runs is an error, not an empty answer
    const hw::System system = hw::vtrain_a100_system();
    for (size_t i = 0; i < runs.size() && i < 2; ++i) {
      if (!(runs[i].iteration_s > 0)) std::abort();
      try {
        const megatron::StepPrediction p = megatron::predict_step(runs[i].spec, system, runs[i].plan);
        if (!std::isfinite(p.time.iteration_s) || p.time.iteration_s <= 0) std::abort();
      } catch (const InputError&) {
      }
    }
  } catch (const InputError&) {
  }
  return 0;
}
