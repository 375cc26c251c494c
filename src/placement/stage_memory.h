#pragma once

#include <cstdint>

#include "placement/chain.h"

namespace phaze::placement {

/// Bytes one device of a stage holds, from its layers at the chain's width (ChainNode's figures are per
/// device already, so the width is in them).
struct StageFootprint {
  double parameter_bytes = 0;   ///< the stage's weights
  double activation_bytes = 0;  ///< stashed for one micro-batch
  double boundary_bytes = 0;    ///< entering the stage from earlier stages, per micro-batch
};

/// Bytes one device of the stage holds with `in_flight` micro-batches begun and not finished (placement.md,
/// "Memory"): the weights with their gradients (SGD, ×2) or also the optimizer state (Adam, ×3), one
/// micro-batch's activations, and for each further micro-batch in flight its activations, or only the bytes
/// that entered the stage when recomputing (the rest is rebuilt in the backward pass).
double stage_memory_bytes(const StageFootprint& stage, int64_t in_flight, const Cluster& cluster);

/// The most micro-batches in flight, at most K = Cluster::devices (no plan has more stages), with which
/// the stage fits in Cluster::memory_bytes; 0 when not even one does. Under 1F1B a stage holds one
/// micro-batch per stage from it to the last, so this is also the most stages from it to the end.
int64_t max_in_flight(const StageFootprint& stage, const Cluster& cluster);

}  // namespace phaze::placement
