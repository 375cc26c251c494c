// Ring collectives on network tiers: the per-group bandwidth rule against hand-computed cases, and the
// NVSwitch tier against all-reduce times measured on 8 A100s of one node.

#include "cost/collective_time.h"

#include <gtest/gtest.h>

#include "hw/system.h"

namespace {

using phaze::cost::all_reduce_s;
using phaze::cost::DeviceGroup;
using phaze::cost::group_link;
using phaze::cost::reduce_scatter_s;
using phaze::cost::send_s;
using phaze::hw::Network;
using phaze::hw::NetworkTier;

/// Nodes of 8 at 100 GB/s per device inside, 10 GB/s per device between nodes; no latency.
Network two_tiers() {
  return Network{{NetworkTier{"node", 8, 100e9, 0, 1}, NetworkTier{"fabric", 0, 10e9, 0, 1}}};
}

TEST(CollectiveTime, GroupInsideANodeUsesTheInnerTier) {
  EXPECT_DOUBLE_EQ(group_link(two_tiers(), DeviceGroup{8, 1}).bandwidth, 100e9);
  EXPECT_DOUBLE_EQ(group_link(two_tiers(), DeviceGroup{4, 2}).bandwidth, 100e9);  // devices 0, 2, 4, 6
}

TEST(CollectiveTime, GroupAcrossNodesGetsItsMembersShareOfTheOuterTier) {
  // 64 devices at stride 1: 8 members per node, 8 × 10 GB/s.
  EXPECT_DOUBLE_EQ(group_link(two_tiers(), DeviceGroup{64, 1}).bandwidth, 80e9);
  // Stride 2 (t = 2): 4 members per node share their 4 devices' links.
  EXPECT_DOUBLE_EQ(group_link(two_tiers(), DeviceGroup{32, 2}).bandwidth, 40e9);
  // Stride 8 or more: one member per node.
  EXPECT_DOUBLE_EQ(group_link(two_tiers(), DeviceGroup{16, 8}).bandwidth, 10e9);
  EXPECT_DOUBLE_EQ(group_link(two_tiers(), DeviceGroup{4, 64}).bandwidth, 10e9);
  // Never above the inner tier: 8 × 20 GB/s capped at 100.
  Network fast = two_tiers();
  fast.tiers[1].bandwidth = 20e9;
  EXPECT_DOUBLE_EQ(group_link(fast, DeviceGroup{64, 1}).bandwidth, 100e9);
}

TEST(CollectiveTime, RingFormulas) {
  Network n = two_tiers();
  n.tiers[0].latency_s = 1e-6;
  // All-reduce of 1 GB on 4 devices of a node: 2·3/4 · 1e9 / 1e11 + 6 · 1 µs.
  EXPECT_NEAR(all_reduce_s(n, DeviceGroup{4, 1}, 1e9), 0.015 + 6e-6, 1e-15);
  EXPECT_NEAR(reduce_scatter_s(n, DeviceGroup{4, 1}, 1e9), 0.0075 + 3e-6, 1e-15);
  EXPECT_EQ(all_reduce_s(n, DeviceGroup{1, 1}, 1e9), 0);
  // A send to the next node runs on the fabric at one device's bandwidth.
  EXPECT_DOUBLE_EQ(send_s(n, 8, 1e9), 0.1);
  EXPECT_DOUBLE_EQ(send_s(n, 4, 1e9), 0.01 + 1e-6);
}

TEST(CollectiveTime, AllToAllSendsWhatLeavesTheMemberOnTheTierItCrosses) {
  Network n = two_tiers();
  n.tiers[0].latency_s = 1e-6;
  n.tiers[1].latency_s = 5e-6;
  // 8 members of one node: 7/8 of 1 GB on the node's 100 GB/s, one latency.
  EXPECT_NEAR(phaze::cost::all_to_all_s(n, DeviceGroup{8, 1}, 1e9), 7.0 / 8 * 0.01 + 1e-6, 1e-15);
  // 16 members at stride 2: 4 share a node; 12/16 of the bytes leave it on one device's 10 GB/s, 3/16 stay
  // on 100 GB/s at the same time.
  EXPECT_NEAR(phaze::cost::all_to_all_s(n, DeviceGroup{16, 2}, 1e9), 12.0 / 16 * 0.1 + 5e-6, 1e-15);
  // One member per node: everything but its own 1/4 leaves it.
  EXPECT_NEAR(phaze::cost::all_to_all_s(n, DeviceGroup{4, 8}, 1e9), 3.0 / 4 * 0.1 + 5e-6, 1e-15);
  EXPECT_EQ(phaze::cost::all_to_all_s(n, DeviceGroup{1, 8}, 1e9), 0);
}

TEST(CollectiveTime, NvswitchTierMatchesMeasuredAllReducesOnEightA100s) {
  // nccl-tests all-reduce on 8 A100s of one node (published with the vTrain measurements): 16 MiB in
  // 232.4 µs, 128 MiB in 1,162.0 µs, 1 GiB in 8,193.0 µs.
  const Network n = phaze::hw::vtrain_a100_system().network;
  const std::pair<double, double> measured[] = {
      {16.0 * (1 << 20), 232.4e-6}, {128.0 * (1 << 20), 1162.0e-6}, {1024.0 * (1 << 20), 8193.0e-6}};
  for (const auto& [bytes, seconds] : measured)
    EXPECT_NEAR(all_reduce_s(n, DeviceGroup{8, 1}, bytes) / seconds, 1.0, 0.10) << bytes;
}

}  // namespace
