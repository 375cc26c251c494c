#pragma once

#include "placement/chain.h"

namespace phaze::placement {

/// A lower bound of the time per batch (seconds) of every plan of `chain` on `cluster` that needs no search,
/// for PHAZE's time model (batch_time.h) with or without recomputation. Each replica runs its ⌈N/d⌉
/// micro-batches through its slowest stage, whose load is at least the sum of its layers' forward and
/// backward passes; p stages of at least a devices each, d times over, fit in K devices (p·d·a ≤ K), so the
/// time is at least N·a/K times the chain's summed passes. a is t when every layer is tensor-parallel at
/// width t > 1, else 1. The result is lowered by a relative 1e-9 to absorb rounding.
double time_floor_s(const Chain& chain, const Cluster& cluster);

}  // namespace phaze::placement
