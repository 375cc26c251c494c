#pragma once

#include "placement/chain.h"

namespace phaze::placement {

/// A lower bound of the time per batch (seconds) of every plan of `chain` on `cluster` that needs no search,
/// for PHAZE's time model (batch_time.h) with or without recomputation. A plan of p stages of at least a
/// devices each, d times over, fits in K devices (p·d·a ≤ K), so each replica runs ⌈N/d⌉ ≥ N·a·p/K
/// micro-batches through its slowest stage, plus p − 1 slots of fill and drain. That stage's load is at
/// least the chain's summed forward and backward passes over p, and at least the longest layer's; both
/// bounds grow with p, so the fewest stages that can hold the parameters' resident copies in the memory per
/// device give the floor. With the corrected terms on, the optimizer step of the largest stage (at least
/// the parameters over the most stages) is added. a is t when every layer is tensor-parallel at width
/// t > 1, else 1. The result is lowered by a relative 1e-9 to absorb rounding.
double time_floor_s(const Chain& chain, const Cluster& cluster);

}  // namespace phaze::placement
