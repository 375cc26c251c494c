#include "cost/collective_time.h"

#include <algorithm>

#include "cost/torus_links.h"
#include "cost/vector_cost.h"
#include "util/checked_int.h"

namespace phaze::cost {

namespace {

/// Where a group sits on the tiers: the innermost tier whose groups hold all of it, the tier inside that
/// (none when it is the innermost) and how many of the group's members share one group of that inner tier.
struct GroupTiers {
  const hw::NetworkTier* tier = nullptr;
  const hw::NetworkTier* inner = nullptr;
  int64_t per_inner = 1;
};

GroupTiers group_tiers(const hw::Network& network, DeviceGroup group) {
  const int64_t span = CheckedInt(group.size - 1) * group.stride + 1;
  const auto& tiers = network.tiers;
  size_t level = 0;
  while (level + 1 < tiers.size() && tiers[level].members < span) ++level;
  GroupTiers out{&tiers[level]};
  if (level == 0) return out;
  out.inner = &tiers[level - 1];
  out.per_inner = std::clamp<int64_t>(out.inner->members / group.stride, 1, group.size);
  return out;
}

/// Bytes/s one device reaches on a tier in all (a torus: a link each way on each of its three axes), the most
/// it can pass on to an outer tier.
double device_share(const hw::NetworkTier& tier) {
  return tier.torus ? 6 * tier.effective_bandwidth() : tier.effective_bandwidth();
}

}  // namespace

GroupLink group_link_on_tiers(const hw::Network& network, DeviceGroup group) {
  const GroupTiers g = group_tiers(network, group);
  if (g.inner == nullptr)
    return g.tier->torus ? torus_group_link(*g.tier, group)
                         : GroupLink{g.tier->effective_bandwidth(), g.tier->latency_s};
  // The members in one inner group pass their traffic on at most at what their own ring there reaches (on a
  // torus, the ring of those members as they lie on it).
  const double inner = g.inner->torus ? torus_group_link(*g.inner, DeviceGroup{g.per_inner, group.stride}).bandwidth
                                      : g.inner->effective_bandwidth();
  const double bandwidth = std::min(static_cast<double>(g.per_inner) * g.tier->effective_bandwidth(), inner);
  return GroupLink{bandwidth, g.tier->latency_s};
}

double all_reduce_s(const hw::Network& network, DeviceGroup group, double bytes) {
  if (group.size <= 1 || bytes <= 0) return 0;
  const GroupLink link = group_link(network, group);
  return all_reduce_seconds(bytes, group.size, link.bandwidth, link.latency_s);
}

double reduce_scatter_s(const hw::Network& network, DeviceGroup group, double bytes) {
  // Half of a ring all-reduce: one pass around the ring instead of two.
  return all_reduce_s(network, group, bytes) / 2;
}

double all_to_all_s(const hw::Network& network, DeviceGroup group, double bytes) {
  if (group.size <= 1 || bytes <= 0) return 0;
  const double n = static_cast<double>(group.size);
  const GroupTiers g = group_tiers(network, group);
  if (g.inner == nullptr) {
    if (g.tier->torus) return torus_all_to_all_s(*g.tier, group, bytes);
    return (n - 1) / n * bytes / g.tier->effective_bandwidth() + g.tier->latency_s;
  }
  // The members sharing a device's inner group (itself included) and the bytes that stay in it.
  const double near = static_cast<double>(g.per_inner);
  const double inside_s = (near - 1) / n * bytes / device_share(*g.inner);
  const double outside_s = (n - near) / n * bytes / g.tier->effective_bandwidth();
  return std::max(inside_s, outside_s) + g.tier->latency_s;
}

int64_t nodes_spanned(const hw::Network& network, DeviceGroup group) {
  if (group.size <= 1) return 1;
  const GroupTiers g = group_tiers(network, group);
  if (g.inner == nullptr) return 1;
  return (group.size + g.per_inner - 1) / g.per_inner;
}

double deduplicated_all_to_all_s(const hw::Network& network, DeviceGroup group, double bytes, double copies,
                                 double remote_nodes) {
  if (group.size <= 1 || bytes <= 0) return 0;
  const GroupTiers g = group_tiers(network, group);
  if (g.inner == nullptr) return all_to_all_s(network, group, bytes);
  const double near = static_cast<double>(g.per_inner);
  const double inside_s = (near - 1) / near * bytes / device_share(*g.inner);
  const double outside_s = remote_nodes / copies * bytes / g.tier->effective_bandwidth();
  return std::max(inside_s, outside_s) + g.tier->latency_s;
}

GroupLink send_link(const hw::Network& network, int64_t distance) {
  const hw::NetworkTier& tier = hw::tier_spanning(network, CheckedInt(std::max<int64_t>(distance, 1)) + 1);
  if (tier.torus) return torus_send_link(tier, distance);
  return GroupLink{tier.effective_bandwidth(), tier.latency_s};
}

double send_s(const hw::Network& network, int64_t distance, double bytes) {
  if (distance <= 0 || bytes <= 0) return 0;
  return transfer_s(send_link(network, distance), bytes);
}

}  // namespace phaze::cost
