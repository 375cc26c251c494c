#pragma once

// A lower bound of the stagewise planner's time per batch that needs no plan (docs/piper.md 5, "Bounds").
// Stage k of a plan runs ⌈N/d_k⌉ micro-batches at a load L_k of at least Σ (forward + backward) of its
// positions in its chain, and T ≥ (N/d_k)·L_k for every k. Stage k has a_k devices per replica (its width
// when it holds a tensor-parallel layer, else 1: placement.md, "Stage load"), at least a_v = t or 1 of each
// of its positions v; weighting each stage by its a_k·d_k devices, of which there are at most K, gives
// K·T ≥ N·Σ_k a_k·L_k ≥ N·Σ_v min over the chains of a_v·(f_v + b_v).

#include <vector>

#include "placement/chain.h"

namespace phaze::placement {

/// N micro-batches times Σ over the positions of the least a·(forward + backward) over the chains (a = the
/// chain's width at a tensor-parallel layer, else 1), over the K devices of `cluster`, lowered by a part in 10^9
/// against rounding: at most the time per batch of every stagewise plan of `chains` (one per width, of equal length) on
/// `cluster`, whatever its stages, degrees and recomputation. 0 without chains.
double stagewise_work_bound_s(const std::vector<Chain>& chains, const Cluster& cluster);

}  // namespace phaze::placement
