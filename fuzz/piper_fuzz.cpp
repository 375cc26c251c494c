// A Piper input (phaze piper FILE): parse; when it is small, plan it, check the plan with the independent
// evaluation, and check that no single-stage plan of the all-fastest TMPCs beats it (that plan lies inside
// the planner's space).
#include <cmath>
#include <cstdlib>

#include "fuzz_input.h"
#include "io/piper_json.h"
#include "piper/planner.h"
#include "util/input_error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace phaze;
  try {
    const piper::Problem p = io::read_piper_problem(fuzz::as_text(data, size), "piper.json");
    if (p.nodes.size() > 12 || p.micro_batches > 4096) return 0;  // keeps one run well under a second
    const piper::PiperAnswer a = piper::plan_piper(p);
    if (a.feasible) {
      const piper::PlanEvaluation e = piper::evaluate_plan(p, a.stages);
      if (!e.valid || e.time_per_sample_s != a.time_per_sample_s || !std::isfinite(a.time_per_sample_s)) std::abort();
    }
    // One stage of every node at t = widths[0], d = 1, each node's first TMPC, if all have that width.
    piper::StagePlan one;
    one.width = p.widths.front();
    bool all = true;
    for (size_t v = 0; v < p.nodes.size(); ++v) {
      all = all && !p.nodes[v].tmpcs[0].empty();
      one.nodes.push_back(static_cast<int>(v));
      one.tmpc.push_back(0);
    }
    if (all) {
      // With a little less memory, so that a sum's rounding at the boundary cannot decide it.
      piper::Problem tighter = p;
      tighter.memory_per_device_bytes *= 1 - 1e-9;
      const piper::PlanEvaluation e = piper::evaluate_plan(tighter, {one});
      if (e.valid && (!a.feasible || a.time_per_sample_s > e.time_per_sample_s * (1 + 1e-12))) std::abort();
    }
    (void)io::piper_answer_json(p, a).dump();
  } catch (const InputError&) {
  }
  return 0;
}
