#pragma once

// Seconds of the collectives and transfers of a training step on a network of tiers (docs/gpu.md 4,
// "Execution"). Devices are numbered in the order the network's groups follow (devices 0-7 form the
// first node of an 8-GPU-per-node system). A group of devices `stride` apart runs on the innermost tier whose
// groups hold all of it. Inside the innermost tier a device reaches that tier's bandwidth. On an outer tier,
// the group's members that share one inner group pass their traffic through that inner group's share of
// the outer tier, which is one outer-tier bandwidth per device of the inner group: the `k` members of an
// inner group together reach k times the per-device bandwidth (NCCL's rings over several NICs), at most
// the inner tier's bandwidth.

#include <algorithm>
#include <cstdint>

#include "hw/network.h"

namespace phaze::cost {

/// `size` devices, `stride` apart in the device order (a tensor-parallel group: stride 1; a data-parallel
/// group under tensor parallelism t: stride t).
struct DeviceGroup {
  int64_t size = 1;
  int64_t stride = 1;
};

/// What one member of a group reaches: bytes/s (effective, one direction) and seconds per ring step.
struct GroupLink {
  double bandwidth = 0;
  double latency_s = 0;
};

/// The link a group's ring runs on: on a network of one link, that link (the planners' innermost loops ask
/// it), else group_link_on_tiers.
GroupLink group_link_on_tiers(const hw::Network& network, DeviceGroup group);
inline GroupLink group_link(const hw::Network& network, DeviceGroup group) {
  if (network.tiers.size() == 1) return GroupLink{network.tiers[0].effective_bandwidth(), network.tiers[0].latency_s};
  return group_link_on_tiers(network, group);
}
/// The link of a point-to-point transfer to the device `distance` positions further on (distance ≥ 1), while
/// every device sends likewise: the tier spanning both, at its per-device bandwidth.
GroupLink send_link(const hw::Network& network, int64_t distance);
/// Seconds of one transfer of `bytes` bytes on `link`: bytes / bandwidth + latency.
inline double transfer_s(const GroupLink& link, double bytes) {
  return bytes / link.bandwidth + link.latency_s;
}

/// Seconds of a collective of `collective_s` seconds left on the critical path when it runs beside
/// `overlapped_s` seconds of other work: what that work cannot hide, and never less than `least_s`, the part
/// no overlap hides (a first or last chunk, bucket, layer or ring step). The one rule of every overlap.
inline double exposed_s(double collective_s, double overlapped_s, double least_s) {
  return std::max(least_s, collective_s - overlapped_s);
}

/// Ring all-reduce of `bytes` bytes on every member on the group's link: 2(n−1)/n · bytes / bandwidth +
/// 2(n−1) · latency (all_reduce_seconds, accelerator.md 7).
double all_reduce_s(const hw::Network& network, DeviceGroup group, double bytes);
/// Ring reduce-scatter (or all-gather) of a `bytes`-byte buffer: (n−1)/n · bytes / bandwidth + (n−1) · latency.
double reduce_scatter_s(const hw::Network& network, DeviceGroup group, double bytes);
/// All-to-all of a `bytes`-byte buffer on every member, split evenly over the n members (NCCL's all-to-all,
/// every pair at once): a member keeps 1/n, sends what goes to members of its own innermost group on that tier
/// and the rest through its own share of the outer tier (one device's bandwidth), the two at once; one
/// latency. 0 for a group of one.
double all_to_all_s(const hw::Network& network, DeviceGroup group, double bytes);
/// Nodes (groups of the tier below the one the group spans) that the group's members sit in: 1 when the
/// group lies in one node.
int64_t nodes_spanned(const hw::Network& network, DeviceGroup group);
/// An all-to-all whose copies bound for one node cross the outer tier once and fan out inside it (DeepEP's
/// dispatch, and its combine in reverse): of `bytes` (every copy a device sends, k per token), bytes ·
/// remote_nodes / k cross the outer tier, remote_nodes the nodes other than its own that a token reaches on
/// average, while bytes · (m − 1)/m move inside the node (the copies for its m − 1 node-mates and those it
/// forwards for the other nodes), the two at once; one latency. all_to_all_s within one node.
double deduplicated_all_to_all_s(const hw::Network& network, DeviceGroup group, double bytes, double copies,
                                 double remote_nodes);
/// A point-to-point transfer of `bytes` bytes to the device `distance` positions further on, while every
/// device sends likewise (pipeline stages): transfer_s on send_link.
double send_s(const hw::Network& network, int64_t distance, double bytes);

}  // namespace phaze::cost
