#include "hw/network.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "util/checked_int.h"
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

int64_t torus_devices(const TorusDims& dims) {
  return CheckedInt(dims[0]) * dims[1] * dims[2];
}

namespace {

std::string dims_text(const TorusDims& d) {
  return fmt::format("{}×{}×{}", d[0], d[1], d[2]);
}

/// The block of `blocks` units of `unit` devices per axis, at most `most` units along each axis: the most
/// nearly cubic (the shortest longest axis, then the longest shortest one), its longest axis first. Nothing when
/// no block has that many.
std::optional<TorusDims> block_of(int64_t blocks, const TorusDims& unit, const TorusDims& most) {
  std::optional<TorusDims> best;
  auto better = [](const TorusDims& a, const TorusDims& b) {
    const int64_t la = std::max({a[0], a[1], a[2]}), lb = std::max({b[0], b[1], b[2]});
    if (la != lb) return la < lb;
    const int64_t sa = std::min({a[0], a[1], a[2]}), sb = std::min({b[0], b[1], b[2]});
    if (sa != sb) return sa > sb;
    return a[0] != b[0] ? a[0] > b[0] : a[1] > b[1];
  };
  for (int64_t q0 = 1; q0 <= std::min(blocks, most[0]); ++q0) {
    if (blocks % q0 != 0) continue;
    for (int64_t q1 = 1; q1 <= std::min(blocks / q0, most[1]); ++q1) {
      if ((blocks / q0) % q1 != 0) continue;
      const int64_t q2 = blocks / q0 / q1;
      if (q2 > most[2]) continue;
      const TorusDims d{q0 * unit[0], q1 * unit[1], q2 * unit[2]};
      if (!best || better(d, *best)) best = d;
    }
  }
  return best;
}

}  // namespace

std::optional<TorusDims> torus_slice(const Torus& torus, int64_t devices) {
  const int64_t cube = torus_devices(torus.cube);
  if (devices >= cube && devices % cube == 0)
    return block_of(devices / cube, torus.cube,
                    {torus.pod[0] / torus.cube[0], torus.pod[1] / torus.cube[1], torus.pod[2] / torus.cube[2]});
  if (devices >= 1 && devices < cube) return block_of(devices, {1, 1, 1}, torus.cube);
  return std::nullopt;
}

TorusDims torus_slice_for(const Torus& torus, int64_t span_devices) {
  if (torus.slice != TorusDims{}) return torus.slice;
  for (int64_t n = std::max<int64_t>(span_devices, 1); n < torus_devices(torus.pod); ++n)
    if (const auto slice = torus_slice(torus, n)) return *slice;
  return torus.pod;
}

bool torus_wraps(const Torus& torus, const TorusDims& slice) {
  for (size_t k = 0; k < 3; ++k)
    if (slice[k] < torus.cube[k] || slice[k] % torus.cube[k] != 0) return false;
  return true;
}

Network sized_network(const Network& network, int64_t devices, const std::string& source) {
  if (network.tiers.empty() || !network.tiers.front().torus) return network;
  Network out = network;
  NetworkTier& tier = out.tiers.front();
  Torus& torus = *tier.torus;
  const int64_t pod = torus_devices(torus.pod);
  // A job larger than the pod takes equal slices of as few pods as hold it (PaLM: 2 × 3,072 of 4,096).
  const int64_t least = std::max<int64_t>(1, (devices + pod - 1) / pod);
  std::optional<TorusDims> slice;
  if (devices <= pod) {
    slice = torus_slice(torus, devices);
  } else {
    // At most twice the fewest pods: a job is not spread thinly over many pods.
    for (int64_t pods = least; !slice && pods <= 2 * least; ++pods)
      if (devices % pods == 0 && devices / pods >= torus_devices(torus.cube))
        slice = torus_slice(torus, devices / pods);
  }
  if (!slice)
    throw InputError(fmt::format(
        "{}: {} devices make no slice of the '{}' torus: whole {} cubes inside its {} pods (equal slices of as few "
        "pods as hold them), or a block of one cube",
        source, devices, tier.name, dims_text(torus.cube), dims_text(torus.pod)));
  torus.slice = *slice;
  tier.members = torus_devices(torus.slice);
  validate(out, source);  // an outer tier's groups must still hold whole slices
  return out;
}

bool sizable(const Network& network, int64_t devices) {
  try {
    sized_network(network, devices, "");
    return true;
  } catch (const InputError&) {
    return false;
  }
}

std::string tier_members_text(const NetworkTier& t) {
  if (!t.torus) return t.members == 0 ? "every device" : fmt::format("groups of {}", t.members);
  const std::string pod = fmt::format("{} torus of {} cubes", dims_text(t.torus->pod), dims_text(t.torus->cube));
  if (t.torus->slice == TorusDims{}) return pod;
  return fmt::format("{} slices of a {}", dims_text(t.torus->slice), pod);
}

const NetworkTier& tier_spanning(const Network& network, int64_t span_devices) {
  if (network.tiers.empty()) throw std::logic_error("tier_spanning: a network without tiers");
  for (const NetworkTier& tier : network.tiers)
    if (tier.members == 0 || tier.members >= span_devices) return tier;
  return network.tiers.back();
}

namespace {

void validate_torus(const NetworkTier& t, size_t k, size_t tiers, const std::string& where) {
  const Torus& torus = *t.torus;
  if (k != 0) throw InputError(fmt::format("{}: only the innermost tier can be a torus", where));
  if (tiers < 2)
    throw InputError(fmt::format("{}: a torus needs an outer tier beyond it (members 0) to join its pods", where));
  for (size_t a = 0; a < 3; ++a) {
    if (torus.cube[a] < 1 || torus.cube[a] > network_limits::kTorusAxis)
      throw InputError(fmt::format("{}: torus cube axis {} = {} must be in [1, {}]", where, a + 1, torus.cube[a],
                                   network_limits::kTorusAxis));
    if (torus.pod[a] < 1 || torus.pod[a] > network_limits::kTorusAxis || torus.pod[a] % torus.cube[a] != 0)
      throw InputError(fmt::format("{}: torus pod axis {} = {} must be a multiple of the cube's {}, at most {}", where,
                                   a + 1, torus.pod[a], torus.cube[a], network_limits::kTorusAxis));
  }
  const bool sized = torus.slice != TorusDims{};
  const int64_t devices = torus_devices(sized ? torus.slice : torus.pod);
  if (sized) {
    bool fits = true;
    for (size_t a = 0; a < 3; ++a) fits = fits && torus.slice[a] >= 1 && torus.slice[a] <= torus.pod[a];
    const bool in_cube =
        torus.slice[0] <= torus.cube[0] && torus.slice[1] <= torus.cube[1] && torus.slice[2] <= torus.cube[2];
    if (!fits || !(in_cube || torus_wraps(torus, torus.slice)))
      throw InputError(fmt::format("{}: torus slice {} must be whole cubes of {} inside the pod {}, or inside one cube",
                                   where, dims_text(torus.slice), dims_text(torus.cube), dims_text(torus.pod)));
  }
  if (t.members != devices)
    throw InputError(fmt::format("{}: members = {} must be the torus {}'s {} devices", where, t.members,
                                 sized ? "slice" : "pod", devices));
}

}  // namespace

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
    if (t.torus) validate_torus(t, k, tiers.size(), where);
  }
}

}  // namespace phaze::hw
