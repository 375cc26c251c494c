#include "placement/stage_memory.h"

#include <cmath>

namespace phaze::placement {

namespace {

/// Held whatever the micro-batches in flight: weights and gradients (and Adam's state), one micro-batch.
double resident_bytes(const StageFootprint& stage, const Cluster& cluster) {
  const double optimizer_factor = cluster.optimizer == Optimizer::Adam ? 3.0 : 2.0;
  return optimizer_factor * stage.parameter_bytes + stage.activation_bytes;
}

/// Held for each further micro-batch in flight.
double stash_bytes(const StageFootprint& stage, const Cluster& cluster) {
  return cluster.recompute ? stage.boundary_bytes : stage.activation_bytes;
}

}  // namespace

double stage_memory_bytes(const StageFootprint& stage, int64_t in_flight, const Cluster& cluster) {
  return resident_bytes(stage, cluster) + static_cast<double>(in_flight - 1) * stash_bytes(stage, cluster);
}

int64_t max_in_flight(const StageFootprint& stage, const Cluster& cluster) {
  if (stage_memory_bytes(stage, cluster.devices, cluster) <= cluster.memory_bytes) return cluster.devices;
  const double resident = resident_bytes(stage, cluster);
  if (resident > cluster.memory_bytes) return 0;
  return 1 + static_cast<int64_t>(std::floor((cluster.memory_bytes - resident) / stash_bytes(stage, cluster)));
}

}  // namespace phaze::placement
