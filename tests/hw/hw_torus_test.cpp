// The 3D torus of a TPU v4 pod: the slices a job of each size takes against the shapes Google offers
// (Cloud TPU's types and topologies; the wraparound of whole 4 × 4 × 4 cubes), a job larger than a pod in
// equal slices as PaLM ran on two pods of 3,072 chips, and a torus tier's JSON and its checks.

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "hw/network.h"
#include "hw/system.h"
#include "hw/system_json.h"
#include "util/input_error.h"

namespace {

using phaze::hw::Torus;
using phaze::hw::TorusDims;

Torus tpuv4_torus() {
  return *phaze::hw::tpuv4_pod_system().network.tiers.front().torus;
}

TorusDims sorted(TorusDims d) {
  std::sort(d.begin(), d.end());
  return d;
}

TEST(Torus, SlicesAreTheShapesTpuV4Offers) {
  // Cloud TPU v4's topologies (A ≤ B ≤ C): v4-8 2x2x1 to v4-64 2x4x4 inside a cube, then whole cubes.
  const std::pair<int64_t, TorusDims> offered[] = {
      {4, {1, 2, 2}},      {8, {2, 2, 2}},       {16, {2, 2, 4}},     {32, {2, 4, 4}},  {64, {4, 4, 4}},
      {128, {4, 4, 8}},    {192, {4, 4, 12}},    {256, {4, 8, 8}},    {512, {8, 8, 8}}, {1024, {8, 8, 16}},
      {2048, {8, 16, 16}}, {3072, {12, 16, 16}}, {4096, {16, 16, 16}}};
  const Torus torus = tpuv4_torus();
  for (const auto& [devices, shape] : offered) {
    const auto slice = phaze::hw::torus_slice(torus, devices);
    ASSERT_TRUE(slice.has_value()) << devices;
    EXPECT_EQ(sorted(*slice), shape) << devices;
    EXPECT_GE((*slice)[0], (*slice)[1]) << "the longest axis first";
    EXPECT_GE((*slice)[1], (*slice)[2]);
    // Only slices of whole cubes wrap round.
    EXPECT_EQ(phaze::hw::torus_wraps(torus, *slice), devices >= 64) << devices;
  }
  // No slice: not whole cubes, or a block no cube holds (axes of at most 4, or multiples of 4).
  for (int64_t devices : {5, 96, 4097, 65, 320})
    EXPECT_FALSE(phaze::hw::torus_slice(torus, devices).has_value()) << devices;
}

TEST(Torus, AJobLargerThanAPodTakesEqualSlicesOfTheFewestPods) {
  const phaze::hw::Network pod = phaze::hw::tpuv4_pod_system().network;
  // PaLM 540B: 6,144 chips as two pods of 3,072 (12 × 16 × 16).
  const phaze::hw::Network palm = phaze::hw::sized_network(pod, 6144, "test");
  EXPECT_EQ(sorted(palm.tiers[0].torus->slice), (TorusDims{12, 16, 16}));
  EXPECT_EQ(palm.tiers[0].members, 3072);
  const phaze::hw::Network one = phaze::hw::sized_network(pod, 256, "test");
  EXPECT_EQ(one.tiers[0].members, 256);
  EXPECT_EQ(phaze::hw::sized_network(pod, 8192, "test").tiers[0].members, 4096);
  // Sizing is idempotent and leaves the pod's shape.
  EXPECT_EQ(phaze::hw::sized_network(palm, 6144, "test"), palm);
  EXPECT_EQ(palm.tiers[0].torus->pod, (TorusDims{16, 16, 16}));
  // A network without a torus is left as it is.
  const phaze::hw::Network gpus = phaze::hw::dgx_h100_system().network;
  EXPECT_EQ(phaze::hw::sized_network(gpus, 1000, "test"), gpus);
  for (int64_t devices : {96, 5, 4100}) {
    try {
      phaze::hw::sized_network(pod, devices, "--devices");
      ADD_FAILURE() << devices;
    } catch (const phaze::InputError& e) {
      EXPECT_NE(std::string(e.what()).find("--devices"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(std::to_string(devices) + " devices"), std::string::npos) << e.what();
    }
  }
}

TEST(Torus, TierJsonRoundTripsAndIsChecked) {
  const phaze::hw::System pod = phaze::hw::tpuv4_pod_system();
  const nlohmann::json j = phaze::hw::to_json(pod.network);
  EXPECT_EQ(j[0]["torus"]["cube"], nlohmann::json({4, 4, 4}));
  EXPECT_FALSE(j[0]["torus"].contains("slice"));
  EXPECT_EQ(phaze::hw::network_from_json(j, "net"), pod.network);
  const phaze::hw::Network sized = phaze::hw::sized_network(pod.network, 128, "test");
  EXPECT_EQ(phaze::hw::network_from_json(phaze::hw::to_json(sized), "net"), sized);

  auto rejected = [&](nlohmann::json bad, const std::string& words) {
    try {
      phaze::hw::network_from_json(bad, "net");
      ADD_FAILURE() << bad.dump();
    } catch (const phaze::InputError& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  nlohmann::json bad = j;
  bad[0]["torus"]["cube"] = {4, 4, 3};
  rejected(bad, "multiple of the cube");
  bad = j;
  bad[0]["members"] = 64;
  rejected(bad, "members = 64");
  bad = j;
  bad[0]["torus"]["pod"] = {16, 16};
  rejected(bad, "three device counts");
  bad = j;
  bad[0]["torus"]["slice"] = {4, 4, 6};
  bad[0]["members"] = 96;
  rejected(bad, "whole cubes");
  bad = j;
  bad[1]["torus"] = j[0]["torus"];
  rejected(bad, "only the innermost tier");
  bad = nlohmann::json::array({j[0]});
  bad[0]["members"] = 4096;
  rejected(bad, "members");  // the one tier must be the outermost, members 0
}

}  // namespace
