#pragma once

// The network of a system: tiers of links, innermost first. A tier joins its members (devices) in groups;
// each outer tier joins whole groups of the inner one. A single scalar link is a one-tier network whose
// one group is the whole system. A transfer or collective among a set of devices runs on the innermost tier
// whose groups hold them all (tier_spanning).

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace phaze::hw {

/// Devices along the three axes of a 3D torus, x first: x varies fastest in the device order, so that
/// consecutive devices (a tensor-parallel group) lie along x.
using TorusDims = std::array<int64_t, 3>;

/// The innermost tier wired as a 3D torus (TPU v4's inter-chip interconnect, docs/tpu.md): every device
/// is joined to its two neighbours on each axis by one link each way, of the tier's bandwidth. A job runs on a
/// slice of the pod; a slice made of whole cubes has wraparound links on every axis (each axis a ring), a
/// smaller one has none (each axis a line).
struct Torus {
  TorusDims cube{};   ///< the building block; a slice of whole cubes has wraparound links
  TorusDims pod{};    ///< the largest slice; the tier's members are its devices
  TorusDims slice{};  ///< the slice of the job (sized_network); zeros until sized
  bool operator==(const Torus&) const = default;
};

struct NetworkTier {
  std::string name;       ///< e.g. "link", "nvswitch", "infiniband"
  int64_t members = 0;    ///< devices in one group of this tier; 0 = every device of the system (outermost)
  double bandwidth = 0;   ///< bytes/s per device into the tier, one direction (of one link on a torus)
  double latency_s = 0;   ///< seconds per message (per step of a ring collective; per hop on a torus)
  double efficiency = 1;  ///< fraction of `bandwidth` that transfers reach, in (0, 1]
  /// The tier's wiring when it is a 3D torus (innermost tier only); nothing: every device of a group reaches
  /// `bandwidth` to every other (a switch).
  std::optional<Torus> torus = std::nullopt;

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
inline constexpr int64_t kTorusAxis = 1024;               ///< devices along one axis of a torus
}  // namespace network_limits

/// The network of one scalar link that joins every device: `bandwidth` bytes/s, `latency_s` per step.
Network one_tier_network(double bandwidth, double latency_s = 0);

/// The bandwidth of a network that is one plain link (one tier, no latency, efficiency 1: the original's
/// scalar), or nothing: reports print such a network as the one figure they always did.
std::optional<double> single_link_bandwidth(const Network& network);

/// Whom a tier joins, for reports: "every device", "groups of 8", or a torus's "16×16×16 torus of 4×4×4 cubes"
/// (with its slice once sized).
std::string tier_members_text(const NetworkTier& tier);

/// Devices of a torus shape: the product of its axes.
int64_t torus_devices(const TorusDims& dims);
/// The slice of `torus` that `devices` devices (1 to the pod's) take: whole cubes when they fill one or more
/// (the shortest longest axis the pod allows), else a block of one cube; the longest axis first. Nothing when
/// no slice has that many devices.
std::optional<TorusDims> torus_slice(const Torus& torus, int64_t devices);
/// The slice a torus tier's collectives run on: the sized one, or else (a network not sized for a job) the
/// smallest slice that holds `span_devices`.
TorusDims torus_slice_for(const Torus& torus, int64_t span_devices);
/// Whether a slice has wraparound links: it is made of whole cubes.
bool torus_wraps(const Torus& torus, const TorusDims& slice);
/// The network as a job of `devices` devices uses it: a torus tier's slice set (and its members: the slice's
/// devices; a job larger than the pod takes equal slices of as few pods as hold it, at most twice that many).
/// Other networks unchanged. InputError naming `source` when the devices make no slice, or when an outer tier's
/// groups would not hold whole slices.
Network sized_network(const Network& network, int64_t devices, const std::string& source);

/// Whether sized_network accepts `devices` (a torus has a slice of that many; any other network, always).
bool sizable(const Network& network, int64_t devices);

/// The innermost tier whose groups hold `span_devices` consecutive devices (1 ≤ span): the tier a
/// collective or transfer among them runs on. The outermost tier holds every span.
const NetworkTier& tier_spanning(const Network& network, int64_t span_devices);

/// Checks a network (InputError naming `source`, the tier and the field): 1 to kTiers tiers, names given
/// and distinct, members positive and each a multiple of the inner tier's (groups nest), the last 0,
/// bandwidths positive and finite, latencies in [0, kLatencyS], efficiencies in (0, 1]; a torus on the
/// innermost tier only, its cube's axes in [1, kTorusAxis] dividing the pod's, its members the pod's devices, a
/// slice given (if any) of whole cubes or inside one cube.
void validate(const Network& network, const std::string& source);

}  // namespace phaze::hw
