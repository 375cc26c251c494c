#pragma once

// Collectives and transfers on a tier wired as a 3D torus (hw::Torus; docs/tpu.md, "A torus"). A group of
// devices `stride` apart in the device order (x fastest) lies on the slice as a block: on each axis it takes
// `extent` positions `step` apart. Each axis the group spans is a ring of its members when the slice wraps
// and the group goes round the whole axis (both directions carry half: twice a link's bandwidth), else a line
// (one link's bandwidth); members `step` apart share each link with the step − 1 groups between them. A
// reduce-scatter over several axes splits the buffer into one part per axis, each part reduced axis after
// axis in its own order, starting at a different axis, so that every axis's links work at once; all-gather is
// the reverse and an all-reduce both.

#include <array>
#include <optional>

#include "cost/collective_time.h"
#include "hw/network.h"

namespace phaze::cost {

/// A group's place on one axis of the slice.
struct TorusAxisSpan {
  int64_t extent = 1;  ///< members along the axis
  int64_t step = 1;    ///< positions between consecutive members
  bool ring = false;   ///< the members go round a wrapped axis
};

/// The group's span on each axis of the tier's slice, the slice's axes taken in the order (x fastest) that
/// gives the group the fastest reduce-scatter, as a mesh is laid on a slice; nothing when the group is a
/// block of the slice in no order (it wraps from the end of one line into the next).
std::optional<std::array<TorusAxisSpan, 3>> torus_spans(const hw::NetworkTier& tier, DeviceGroup group);

/// Seconds of a reduce-scatter of a `bytes`-byte buffer over the group on the torus tier (the schedule
/// above), latency included: one per ring step of each axis.
double torus_reduce_scatter_s(const hw::NetworkTier& tier, DeviceGroup group, double bytes);

/// The link of a ring over the group that takes as long as torus_reduce_scatter_s: bandwidth (n−1)/n·bytes /
/// that time and the latency per step, so that the collectives of collective_time.h price the torus through it.
GroupLink torus_group_link(const hw::NetworkTier& tier, DeviceGroup group);

/// All-to-all of a `bytes`-byte buffer on every member over the group (routed axis after axis): each axis's
/// busiest link carries bytes · extent / 8 (ring) or bytes · extent / 4 (line) of every member's traffic; the
/// axes at once; one latency per hop of the longest path.
double torus_all_to_all_s(const hw::NetworkTier& tier, DeviceGroup group, double bytes);

/// The link of a transfer to the device `distance` further on while every device sends likewise: the shift
/// moves d positions along each axis, so each link of that axis carries d transfers (the shorter way round on
/// a ring); the axes at once; one latency per hop.
GroupLink torus_send_link(const hw::NetworkTier& tier, int64_t distance);

}  // namespace phaze::cost
