#include "hw/network.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "util/input_error.h"

namespace phaze::hw {

Network one_tier_network(double bandwidth, double latency_s) {
  return Network{{NetworkTier{"link", 0, bandwidth, latency_s, 1.0}}};
}

std::optional<double> single_link_bandwidth(const Network& network) {
  if (network.tiers.size() != 1) return std::nullopt;
  const NetworkTier& t = network.tiers.front();
  if (t.latency_s != 0 || t.efficiency != 1) return std::nullopt;
  return t.bandwidth;
}

const NetworkTier& tier_spanning(const Network& network, int64_t span_devices) {
  if (network.tiers.empty()) throw std::logic_error("tier_spanning: a network without tiers");
  for (const NetworkTier& tier : network.tiers)
    if (tier.members == 0 || tier.members >= span_devices) return tier;
  return network.tiers.back();
}

void validate(const Network& network, const std::string& source) {
  const auto& tiers = network.tiers;
  if (tiers.empty() || static_cast<int64_t>(tiers.size()) > network_limits::kTiers)
    throw InputError(
        fmt::format("{}: a network has 1 to {} tiers, got {}", source, network_limits::kTiers, tiers.size()));
  for (size_t k = 0; k < tiers.size(); ++k) {
    const NetworkTier& t = tiers[k];
    const std::string where = fmt::format("{}: tier {} ('{}')", source, k + 1, t.name);
    if (t.name.empty()) throw InputError(fmt::format("{}: tier {} has no name", source, k + 1));
    for (size_t i = 0; i < k; ++i)
      if (tiers[i].name == t.name) throw InputError(fmt::format("{}: tier name given twice", where));
    const bool last = k + 1 == tiers.size();
    if (last && t.members != 0)
      throw InputError(
          fmt::format("{}: members = {} must be 0 on the outermost tier (it joins every device)", where, t.members));
    if (!last) {
      if (t.members < 1 || t.members > network_limits::kMembers)
        throw InputError(
            fmt::format("{}: members = {} must be in [1, {}]", where, t.members, network_limits::kMembers));
      if (k > 0 && (t.members <= tiers[k - 1].members || t.members % tiers[k - 1].members != 0))
        throw InputError(fmt::format("{}: members = {} must be a larger multiple of the inner tier's {}", where,
                                     t.members, tiers[k - 1].members));
    }
    if (!(std::isfinite(t.bandwidth) && t.bandwidth > 0 && t.bandwidth <= network_limits::kBandwidth))
      throw InputError(fmt::format("{}: bandwidth = {:g} must be in (0, {:g}] bytes/s", where, t.bandwidth,
                                   network_limits::kBandwidth));
    if (!(std::isfinite(t.latency_s) && t.latency_s >= 0 && t.latency_s <= network_limits::kLatencyS))
      throw InputError(
          fmt::format("{}: latency_s = {:g} must be in [0, {:g}] s", where, t.latency_s, network_limits::kLatencyS));
    if (!(std::isfinite(t.efficiency) && t.efficiency > 0 && t.efficiency <= 1))
      throw InputError(fmt::format("{}: efficiency = {:g} must be in (0, 1]", where, t.efficiency));
  }
}

}  // namespace phaze::hw
