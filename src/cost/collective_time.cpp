#include "cost/collective_time.h"

#include <algorithm>

#include "cost/vector_cost.h"
#include "util/checked_int.h"

namespace phaze::cost {

GroupLink group_link_on_tiers(const hw::Network& network, DeviceGroup group) {
  const int64_t span = CheckedInt(group.size - 1) * group.stride + 1;
  const auto& tiers = network.tiers;
  size_t level = 0;
  while (level + 1 < tiers.size() && tiers[level].members < span) ++level;
  const hw::NetworkTier& tier = tiers[level];
  if (level == 0) return GroupLink{tier.effective_bandwidth(), tier.latency_s};
  const hw::NetworkTier& inner = tiers[level - 1];
  const int64_t per_inner = std::clamp<int64_t>(inner.members / group.stride, 1, group.size);
  const double bandwidth =
      std::min(static_cast<double>(per_inner) * tier.effective_bandwidth(), inner.effective_bandwidth());
  return GroupLink{bandwidth, tier.latency_s};
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
  const int64_t span = CheckedInt(group.size - 1) * group.stride + 1;
  const auto& tiers = network.tiers;
  size_t level = 0;
  while (level + 1 < tiers.size() && tiers[level].members < span) ++level;
  const hw::NetworkTier& tier = tiers[level];
  if (level == 0) return (n - 1) / n * bytes / tier.effective_bandwidth() + tier.latency_s;
  const hw::NetworkTier& inner = tiers[level - 1];
  // The members sharing a device's inner group (itself included) and the bytes that stay in it.
  const double near = static_cast<double>(std::clamp<int64_t>(inner.members / group.stride, 1, group.size));
  const double inside_s = (near - 1) / n * bytes / inner.effective_bandwidth();
  const double outside_s = (n - near) / n * bytes / tier.effective_bandwidth();
  return std::max(inside_s, outside_s) + tier.latency_s;
}

GroupLink send_link(const hw::Network& network, int64_t distance) {
  const hw::NetworkTier& tier = hw::tier_spanning(network, CheckedInt(std::max<int64_t>(distance, 1)) + 1);
  return GroupLink{tier.effective_bandwidth(), tier.latency_s};
}

double send_s(const hw::Network& network, int64_t distance, double bytes) {
  if (distance <= 0 || bytes <= 0) return 0;
  return transfer_s(send_link(network, distance), bytes);
}

}  // namespace phaze::cost
