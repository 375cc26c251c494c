#pragma once

// The network of a system: tiers of links, innermost first. A tier joins its members (devices) in groups;
// each outer tier joins whole groups of the inner one. A single scalar link is a one-tier network whose
// one group is the whole system. A transfer or collective among a set of devices runs on the innermost tier
// whose groups hold them all (tier_spanning).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace phaze::hw {

struct NetworkTier {
  std::string name;       ///< e.g. "link", "nvswitch", "infiniband"
  int64_t members = 0;    ///< devices in one group of this tier; 0 = every device of the system (outermost)
  double bandwidth = 0;   ///< bytes/s per device into the tier, one direction
  double latency_s = 0;   ///< seconds per message (per step of a ring collective)
  double efficiency = 1;  ///< fraction of `bandwidth` that transfers reach, in (0, 1]

  /// Bytes per second a transfer reaches: bandwidth · efficiency.
  double effective_bandwidth() const { return bandwidth * efficiency; }
  bool operator==(const NetworkTier&) const = default;
};

struct Network {
  std::vector<NetworkTier> tiers;  ///< innermost first; the last one has members 0
  bool operator==(const Network&) const = default;
};

/// Largest accepted values of a network description (docs/limits.md).
namespace network_limits {
inline constexpr int64_t kTiers = 8;                      ///< tiers of one network
inline constexpr int64_t kMembers = int64_t{1} << 20;     ///< devices in one group of a tier
inline constexpr double kBandwidth = 1e6 * 1073741824.0;  ///< bytes/s of one tier (10^6 GiB/s)
inline constexpr double kLatencyS = 1;                    ///< seconds per message
}  // namespace network_limits

/// The network of one scalar link that joins every device: `bandwidth` bytes/s, `latency_s` per step.
Network one_tier_network(double bandwidth, double latency_s = 0);

/// The bandwidth of a network that is one plain link (one tier, no latency, efficiency 1: the original's
/// scalar), or nothing: reports print such a network as the one figure they always did.
std::optional<double> single_link_bandwidth(const Network& network);

/// The innermost tier whose groups hold `span_devices` consecutive devices (1 ≤ span): the tier a
/// collective or transfer among them runs on. The outermost tier holds every span.
const NetworkTier& tier_spanning(const Network& network, int64_t span_devices);

/// Checks a network (InputError naming `source`, the tier and the field): 1 to kTiers tiers, names given
/// and distinct, members positive and each a multiple of the inner tier's (groups nest), the last 0,
/// bandwidths positive and finite, latencies in [0, kLatencyS], efficiencies in (0, 1].
void validate(const Network& network, const std::string& source);

}  // namespace phaze::hw
