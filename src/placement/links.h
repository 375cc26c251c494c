#pragma once

// Where PHAZE's plans put their devices, and so the link each of their transfers runs on. Every transfer is
// priced by cost/collective_time.h's one family (group_link, send_link), the rule Megatron-LM execution uses
// too, so a ring over the same devices of the same network costs the same whoever asks.
//
// A plan of one data-parallel degree d (ReferencePlanner, CorrectedPlanner, hand-set plans) puts each
// pipeline replica on R consecutive devices (R: the devices of all its stages), its stages in order, each
// stage's tensor-parallel group innermost. So the d copies of a device of a stage are R apart: every stage's
// ring is a group of d devices at stride R, one link for the whole plan, and the corrected terms stay one
// monotone function of the largest stage's parameters for each (d, R), which keeps the planners exact.
// The stagewise planner gives each stage its own degree d_k: stage k's d_k copies of its w_k devices sit side
// by side, so its ring is d_k devices at stride w_k.
//
// Consecutive stages of t devices are t apart, so pipeline sends run on the link of a transfer t devices
// on (t: the chain's tensor-parallel width). A one-device stage of a mixed plan sends 1 device on, on the
// same or an inner tier: charging it the t-device link overstates such a send only when t reaches past
// the innermost tier's groups (docs/execution-models.md).

#include <cstdint>

#include "cost/collective_time.h"
#include "placement/chain.h"

namespace phaze::placement {

/// The link of a data-parallel ring of `data_parallel` copies of a stage's devices, `stride` devices apart:
/// R, the devices of one replica, in a plan of one degree; the stage's own devices in a stagewise plan.
inline cost::GroupLink ring_link(const Cluster& cluster, int64_t data_parallel, int64_t stride) {
  return cost::group_link(cluster.data_parallel_network, cost::DeviceGroup{data_parallel, stride});
}

/// The link of the sends between the stages of a chain of tensor-parallel width `width`.
inline cost::GroupLink pipeline_link(const Cluster& cluster, int64_t width) {
  return cost::send_link(cluster.pipeline_network, width);
}

/// The link placement.md's reference formula reads as its one `bandwidth`: a ring over all K devices (on a
/// one-link network, that link).
inline cost::GroupLink reference_link(const Cluster& cluster) {
  return cost::group_link(cluster.data_parallel_network, cost::DeviceGroup{cluster.devices, 1});
}

}  // namespace phaze::placement
