// A placement question (phaze place FILE): parse and validate; when it is small, plan it and check the
// plan against the independent evaluation of the same stages and against the hand-set strategy, which
// lies inside the planner's search space.
#include <cmath>
#include <cstdlib>

#include "fuzz_input.h"
#include "io/placement_json.h"
#include "placement/planner.h"
#include "util/input_error.h"

namespace {

// Keeps one run well under a second: the planner's work grows with nodes² · stages per width.
constexpr size_t kMaxPlannedNodes = 48;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace phaze;
  try {
    const io::PlacementInput input = io::parse_placement_input(fuzz::as_text(data, size), "placement.json");
    size_t nodes = 0;
    for (const placement::Chain& chain : input.chains) nodes += chain.nodes.size();
    if (nodes > kMaxPlannedNodes || input.cluster.devices > 256) return 0;
    const placement::Plan plan = placement::make_planner(input.cluster)->solve(input.chains, input.cluster);
    if (plan.feasible && (!std::isfinite(plan.time_per_batch) || plan.time_per_batch < 0)) std::abort();
    if (input.hand_set) {
      const placement::PlanCheck hand =
          placement::evaluate_hand_set(input.chains, input.cluster, *input.hand_set, input.hand_set_layers);
      if (hand.feasible && !plan.feasible) std::abort();
      if (hand.feasible && plan.time_per_batch > hand.time_per_batch * (1 + 1e-9)) std::abort();
    }
    (void)io::placement_output_json(input, plan, placement::PlanCheck{}).dump();
  } catch (const InputError&) {
  }
  return 0;
}
