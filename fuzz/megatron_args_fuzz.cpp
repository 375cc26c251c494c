// Megatron-LM's command line (phaze predict -- ARGS): split on white space, read, then predict on 8 H100s.
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "fuzz_input.h"
#include "hw/system.h"
#include "io/megatron_args.h"
#include "megatron/training_step.h"
#include "util/input_error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace phaze;
  std::istringstream in(fuzz::as_text(data, size));
  std::vector<std::string> args;
  for (std::string word; in >> word && args.size() < 256;) args.push_back(word);
  try {
    const io::MegatronRun run = io::parse_megatron_args(args, 8);
    try {
      const megatron::StepPrediction p = megatron::predict_step(run.spec, hw::dgx_h100_system(), run.plan);
      if (!std::isfinite(p.time.iteration_s) || p.time.iteration_s <= 0) std::abort();
    } catch (const InputError&) {
    }
  } catch (const InputError&) {
  }
  return 0;
}
