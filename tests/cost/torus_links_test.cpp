// Collectives on a 3D torus (TPU v4's inter-chip interconnect): the reduce-scatter against the closed forms of
// a bidirectional ring, a line and a whole cube (a link each way per axis, the axes at once), the
// all-to-all against a brute force that routes every message axis by axis on the shortest way, and transfers
// and groups that leave the pod for the data-centre network.

#include "cost/torus_links.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "cost/collective_time.h"
#include "hw/system.h"

namespace {

using phaze::cost::DeviceGroup;
using phaze::hw::Network;

constexpr double kLink = 45e9;  // bytes/s one way
constexpr double kBytes = 1e9;

/// The TPU v4 pod's network sized for `devices`, without latency.
Network pod(int64_t devices) {
  Network n = phaze::hw::tpuv4_pod_system().network;
  for (auto& tier : n.tiers) tier.latency_s = 0;
  return phaze::hw::sized_network(n, devices, "test");
}

TEST(TorusLinks, ReduceScatterOnOneAxisIsABidirectionalRingOrALine) {
  // 64 chips, 4 × 4 × 4 with wraparound: four consecutive chips are a ring of 4, each direction a link.
  EXPECT_NEAR(phaze::cost::torus_reduce_scatter_s(pod(64).tiers[0], DeviceGroup{4, 1}, kBytes),
              0.75 * kBytes / (2 * kLink), 1e-12);
  // 4 chips, 2 × 2 × 1 without: two chips are a line of 2, one link's bandwidth; all four a 2 × 2 block, each
  // half of the buffer reduced along one axis and then the other (3/8 of it on each axis's link).
  EXPECT_NEAR(phaze::cost::torus_reduce_scatter_s(pod(4).tiers[0], DeviceGroup{2, 1}, kBytes), 0.5 * kBytes / kLink,
              1e-12);
  EXPECT_NEAR(phaze::cost::torus_reduce_scatter_s(pod(4).tiers[0], DeviceGroup{4, 1}, kBytes), 0.375 * kBytes / kLink,
              1e-12);
  // Four chips of a 4 × 2 × 2 slice lie as that 2 × 2 block rather than as a line of 4 (0.75 · bytes / link).
  EXPECT_NEAR(phaze::cost::torus_reduce_scatter_s(pod(16).tiers[0], DeviceGroup{4, 1}, kBytes), 0.375 * kBytes / kLink,
              1e-12);
  // Chips 0 and 2 of a ring of 4 (stride 2): each way round is two links, shared with the group of chips 1 and 3.
  EXPECT_NEAR(phaze::cost::torus_reduce_scatter_s(pod(64).tiers[0], DeviceGroup{2, 2}, kBytes), 0.5 * kBytes / kLink,
              1e-12);
}

TEST(TorusLinks, AWholeCubeUsesItsSixLinksAtOnce) {
  // (n − 1)/n · bytes over 3 axes × 2 directions × 45 GB/s.
  const auto tier = pod(64).tiers[0];
  EXPECT_NEAR(phaze::cost::torus_reduce_scatter_s(tier, DeviceGroup{64, 1}, kBytes), 63.0 / 64 * kBytes / (6 * kLink),
              1e-12);
  // The same group through the collectives of collective_time.h: the ring all-reduce is twice that.
  EXPECT_NEAR(phaze::cost::all_reduce_s(pod(64), DeviceGroup{64, 1}, kBytes), 2 * 63.0 / 64 * kBytes / (6 * kLink),
              1e-12);
  // A plane of 16 (two axes): (15/16) · bytes over 4 links.
  EXPECT_NEAR(phaze::cost::torus_reduce_scatter_s(tier, DeviceGroup{16, 1}, kBytes), 15.0 / 16 * kBytes / (4 * kLink),
              1e-12);
  // The 16 chips 4 apart (the data-parallel group of t = 4) are the same plane of the other two axes.
  EXPECT_NEAR(phaze::cost::torus_reduce_scatter_s(tier, DeviceGroup{16, 4}, kBytes), 15.0 / 16 * kBytes / (4 * kLink),
              1e-12);
}

TEST(TorusLinks, TheModelAxisOfTwelveLiesOnTheAxisOfTwelve) {
  // PaLM's 12-way model parallelism on a 12 × 16 × 16 slice: a ring of 12; its fully sharded data axis of 256
  // (chips 12 apart) the other two axes, both rings.
  const auto tier = pod(6144).tiers[0];
  EXPECT_NEAR(phaze::cost::torus_reduce_scatter_s(tier, DeviceGroup{12, 1}, kBytes), 11.0 / 12 * kBytes / (2 * kLink),
              1e-12);
  EXPECT_NEAR(phaze::cost::torus_reduce_scatter_s(tier, DeviceGroup{256, 12}, kBytes),
              255.0 / 256 * kBytes / (4 * kLink), 1e-12);
}

/// Seconds of an all-to-all of `bytes` on every member of the block of `extent` chips along each axis of a
/// slice (x fastest), each message routed x, then y, then z, the shorter way round each ring (half each way
/// on a tie): the busiest directed link's bytes over one link's bandwidth.
double brute_force_all_to_all(const std::array<int64_t, 3>& slice, bool wraps, const std::array<int64_t, 3>& extent,
                              double bytes) {
  std::vector<std::array<int64_t, 3>> members;
  for (int64_t z = 0; z < extent[2]; ++z)
    for (int64_t y = 0; y < extent[1]; ++y)
      for (int64_t x = 0; x < extent[0]; ++x) members.push_back({x, y, z});
  const double each = bytes / static_cast<double>(members.size());
  std::map<std::tuple<int64_t, int64_t, int64_t, size_t, int>, double> load;  // link: from, axis, direction
  for (const auto& from : members)
    for (const auto& to : members) {
      if (from == to) continue;
      std::array<int64_t, 3> at = from;
      for (size_t k = 0; k < 3; ++k) {
        const int64_t length = slice[k];
        const int64_t ahead = ((to[k] - at[k]) % length + length) % length;
        const int64_t behind = (length - ahead) % length;
        auto walk = [&](int direction, int64_t hops, double share) {
          std::array<int64_t, 3> p = at;
          for (int64_t h = 0; h < hops; ++h) {
            load[{p[0], p[1], p[2], k, direction}] += share;
            p[k] = ((p[k] + direction) % length + length) % length;
          }
        };
        if (ahead == 0) continue;
        if (!wraps) {
          walk(to[k] > at[k] ? 1 : -1, std::abs(to[k] - at[k]), each);
        } else if (ahead < behind) {
          walk(1, ahead, each);
        } else if (behind < ahead) {
          walk(-1, behind, each);
        } else {
          walk(1, ahead, each / 2);
          walk(-1, behind, each / 2);
        }
        at[k] = to[k];
      }
    }
  double busiest = 0;
  for (const auto& [link, bytes_on_it] : load) busiest = std::max(busiest, bytes_on_it);
  return busiest / kLink;
}

TEST(TorusLinks, AllToAllEqualsRoutingEveryMessage) {
  struct Case {
    int64_t devices;
    DeviceGroup group;
    std::array<int64_t, 3> extent;
  };
  // Slices: 64 → 4 × 4 × 4 with wraparound; 4 → 2 × 2 × 1, 16 → 4 × 2 × 2 and 32 → 4 × 4 × 2 without.
  for (const Case& c : {Case{64, {4, 1}, {4, 1, 1}}, Case{64, {16, 1}, {4, 4, 1}}, Case{64, {64, 1}, {4, 4, 4}},
                        Case{4, {4, 1}, {2, 2, 1}}, Case{16, {16, 1}, {4, 2, 2}}, Case{32, {32, 1}, {4, 4, 2}},
                        Case{4, {2, 1}, {2, 1, 1}}}) {
    const auto net = pod(c.devices);
    const auto& torus = *net.tiers[0].torus;
    EXPECT_NEAR(phaze::cost::torus_all_to_all_s(net.tiers[0], c.group, kBytes),
                brute_force_all_to_all(torus.slice, phaze::hw::torus_wraps(torus, torus.slice), c.extent, kBytes),
                1e-12)
        << c.devices << " chips, group " << c.group.size;
  }
}

TEST(TorusLinks, SendsShareTheLinksTheyCross) {
  const Network net = pod(64);
  // To the next chip, or the next along y: one link.
  EXPECT_DOUBLE_EQ(phaze::cost::send_link(net, 1).bandwidth, kLink);
  EXPECT_DOUBLE_EQ(phaze::cost::send_link(net, 4).bandwidth, kLink);
  // Two along x: every link carries two transfers.
  EXPECT_DOUBLE_EQ(phaze::cost::send_link(net, 2).bandwidth, kLink / 2);
}

TEST(TorusLinks, GroupsAcrossPodsRunOnTheDataCentreNetwork) {
  // Two pods of 4,096: the two chips 4,096 apart meet over the data-centre network at 6.25 GB/s each.
  const Network net = pod(8192);
  EXPECT_DOUBLE_EQ(phaze::cost::group_link(net, DeviceGroup{2, 4096}).bandwidth, 6.25e9);
  EXPECT_DOUBLE_EQ(phaze::cost::send_link(net, 4096).bandwidth, 6.25e9);
  // 32 chips 256 apart, 16 in each pod: together 16 chips' shares of the data-centre network (100 GB/s), but no
  // more than their ring in the pod passes on (a ring along one axis, 2 × 45 GB/s).
  EXPECT_DOUBLE_EQ(phaze::cost::group_link(net, DeviceGroup{32, 256}).bandwidth, 2 * kLink);
  // 8 chips 1,024 apart, 4 in each pod: 4 × 6.25 GB/s of the data-centre network, but their ring in the pod
  // (every fourth chip round an axis of 16, its links shared by the 4 rings interleaved with it) passes on
  // 2 × 45 / 4 GB/s.
  EXPECT_DOUBLE_EQ(phaze::cost::group_link(net, DeviceGroup{8, 1024}).bandwidth, 2 * kLink / 4);
  // A data-parallel group of 1,024 at stride 8 over two pods is no faster than its 512 members' ring in one.
  const Network one_pod = pod(4096);
  EXPECT_LE(phaze::cost::group_link(net, DeviceGroup{1024, 8}).bandwidth,
            phaze::cost::group_link(one_pod, DeviceGroup{512, 8}).bandwidth);
}

}  // namespace
