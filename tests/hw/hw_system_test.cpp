// System descriptions: network tiers, the tier a group spans, system files and presets.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hw/presets.h"
#include "hw/system_json.h"
#include "support/run_phaze.h"
#include "support/temp_file.h"
#include "util/input_error.h"
#include "util/json_input.h"

namespace {

using namespace phaze::hw;
using phaze_test::TempFile;

/// NVSwitch-like inside groups of 8, a pod tier of 256, and a cluster tier of every device.
Network three_tiers() {
  return Network{{NetworkTier{"nvswitch", 8, 3e11, 5e-6, 0.8}, NetworkTier{"pod", 256, 1e11, 1e-5, 0.9},
                  NetworkTier{"cluster", 0, 2.5e10, 2e-5, 1.0}}};
}

std::string error_of(const std::string& text) {
  try {
    system_from_json(phaze::parse_json_input(text, "sys.json"), "sys.json");
  } catch (const phaze::InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Network, GroupsRunOnTheInnermostTierThatHoldsThem) {
  const Network n = three_tiers();
  // A group of s consecutive devices fits in the smallest tier group of at least s members.
  for (int64_t span = 1; span <= 2048; ++span) {
    const std::string expected = span <= 8 ? "nvswitch" : span <= 256 ? "pod" : "cluster";
    ASSERT_EQ(tier_spanning(n, span).name, expected) << span;
  }
}

TEST(Network, OneTierNetworkCarriesEverything) {
  const Network n = one_tier_network(4294967296.0, 1e-6);
  ASSERT_EQ(n.tiers.size(), 1u);
  for (int64_t span : std::vector<int64_t>{1, 2, 1024, int64_t{1} << 20}) {
    EXPECT_EQ(tier_spanning(n, span).bandwidth, 4294967296.0);
    EXPECT_EQ(tier_spanning(n, span).latency_s, 1e-6);
  }
  // Efficiency 1: the effective bandwidth is the link's, bit for bit.
  EXPECT_EQ(n.tiers[0].effective_bandwidth(), 4294967296.0);
  EXPECT_NO_THROW(validate(n, "x"));
}

TEST(Network, EffectiveBandwidthIsBandwidthTimesEfficiency) {
  EXPECT_DOUBLE_EQ(three_tiers().tiers[0].effective_bandwidth(), 2.4e11);
}

TEST(Network, ValidationNamesTheTierAndField) {
  auto message = [](Network n) {
    try {
      validate(n, "net");
    } catch (const phaze::InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NO_THROW(validate(three_tiers(), "net"));
  Network n = three_tiers();
  n.tiers[1].members = 100;  // not a multiple of 8
  EXPECT_NE(message(n).find("tier 2 ('pod'): members = 100"), std::string::npos) << message(n);
  n = three_tiers();
  n.tiers[2].members = 512;  // the outermost tier joins every device
  EXPECT_NE(message(n).find("tier 3 ('cluster'): members = 512 must be 0"), std::string::npos) << message(n);
  n = three_tiers();
  n.tiers[0].efficiency = 0;
  EXPECT_NE(message(n).find("efficiency = 0"), std::string::npos) << message(n);
  n = three_tiers();
  n.tiers[1].name = "nvswitch";
  EXPECT_NE(message(n).find("given twice"), std::string::npos) << message(n);
  n = three_tiers();
  n.tiers[0].bandwidth = -1;
  EXPECT_NE(message(n).find("bandwidth = -1"), std::string::npos) << message(n);
  EXPECT_NE(message(Network{}).find("1 to 8 tiers"), std::string::npos) << message(Network{});
}

TEST(SystemJson, PresetIsTheOriginalEvaluationsSystem) {
  const System s = *find_system_preset("tpuv4");
  EXPECT_EQ(s.name, "tpuv4-like");
  EXPECT_EQ(accelerator_of(s), tpuv4_like());
  // method.md 5: one 4 GiB/s inter-chip link for every transfer, no latency term.
  EXPECT_EQ(s.network, one_tier_network(4.0 * 1073741824.0, 0));
  EXPECT_FALSE(find_system_preset("dgx-z").has_value());
}

TEST(SystemJson, RoundTripsThroughItsJson) {
  const System s{"three", tpuv4_like(), three_tiers()};
  const System back = system_from_json(to_json(s), "three");
  EXPECT_EQ(back.network, s.network);
  EXPECT_EQ(back.name, "three");
  // The device comes back through the architecture reader; the derived SRAM sizes are written as sizes.
  EXPECT_EQ(accelerator_of(back).num_tc, accelerator_of(s).num_tc);
  EXPECT_EQ(accelerator_of(back).glb_bytes, accelerator_of(s).glb_bytes);
  EXPECT_EQ(accelerator_of(back).hbm_bandwidth, accelerator_of(s).hbm_bandwidth);
}

TEST(SystemJson, DeviceByPresetFileOrObject) {
  const std::string tiers = R"("network": [{"name": "link", "members": 0, "bandwidth": 1e9}])";
  const TempFile arch(R"({"num_tc": 2, "tc_width": 32, "tc_depth": 16, "num_vc": 1, "vc_width": 32, "glb_mib": 8})");
  const System by_file = read_system_file(
      TempFile("{\"device\": \"" + std::filesystem::path(arch.path()).filename().string() + "\", " + tiers + "}")
          .path());
  EXPECT_EQ(accelerator_of(by_file).tc_depth, 16);
  const System by_object =
      system_from_json(phaze::parse_json_input(R"({"device": {"num_tc": 4, "tc_width": 8, "tc_depth": 8, "num_vc": 1,
                                  "vc_width": 8, "glb_bytes": 1048576}, )" +
                                                   tiers + "}",
                                               "s"),
                       "s");
  EXPECT_EQ(accelerator_of(by_object).num_tc, 4);
  EXPECT_EQ(by_object.name, "s");
  EXPECT_EQ(by_object.network.tiers[0].efficiency, 1.0);
  EXPECT_EQ(by_object.network.tiers[0].latency_s, 0.0);
}

TEST(SystemJson, BadFilesNameTheKeyAndValue) {
  const std::string dev = R"("device": "tpuv4-like")";
  struct Case {
    std::string text;
    std::vector<std::string> needles;
  };
  const std::vector<Case> cases = {
      {"[]", {"expected a JSON object"}},
      {"{" + dev + "}", {"missing required key 'network'"}},
      {R"({"network": []})", {"missing required key 'device'"}},
      {"{" + dev + R"(, "network": [], "speed": 1})", {"unknown key 'speed'"}},
      {"{" + dev + R"(, "network": {}})", {"'network'", "an array of tiers"}},
      {"{" + dev + R"(, "network": []})", {"1 to 8 tiers"}},
      {"{" + dev + R"(, "network": [{"name": "l", "members": 0}]})", {"network[0]", "'bandwidth'"}},
      {"{" + dev + R"(, "network": [{"name": "l", "members": 0, "bandwidth": "fast"}]})",
       {"network[0]", "'bandwidth' = \"fast\""}},
      {"{" + dev + R"(, "network": [{"name": "l", "members": -1, "bandwidth": 1}]})", {"'members' = -1"}},
      {"{" + dev + R"(, "network": [{"name": "l", "members": 0, "bandwidth": 1, "latency_s": -1}]})",
       {"'latency_s' = -1"}},
      {"{" + dev + R"(, "network": [{"name": "l", "members": 0, "bandwidth": 1, "lat": 1}]})", {"unknown key 'lat'"}},
      {R"({"device": "no-such-chip", "network": [{"name": "l", "members": 0, "bandwidth": 1}]})",
       {"no-such-chip", "no such preset or file"}},
  };
  for (const Case& c : cases) {
    const std::string message = error_of(c.text);
    ASSERT_FALSE(message.empty()) << "accepted: " << c.text;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_NE(message.find("sys.json"), std::string::npos) << message;
    for (const auto& needle : c.needles)
      EXPECT_NE(message.find(needle), std::string::npos) << needle << " / " << message;
  }
}

TEST(SystemCli, ListAndShow) {
  using phaze_test::run_phaze;
  const auto list = run_phaze("system list");
  ASSERT_EQ(list.status, 0) << list.err;
  EXPECT_NE(list.out.find("tpuv4-like"), std::string::npos) << list.out;
  const auto shown = run_phaze("system show tpuv4 --json");
  ASSERT_EQ(shown.status, 0) << shown.err;
  const nlohmann::json j = nlohmann::json::parse(shown.out);
  EXPECT_EQ(j.at("network").at(0).at("bandwidth").get<double>(), 4294967296.0);
  EXPECT_EQ(j.at("device").at("num_tc").get<int>(), 8);
  const TempFile bad(R"({"device": "tpuv4", "network": [{"name": "l", "members": 4, "bandwidth": 1}]})");
  const auto refused = run_phaze("system show " + phaze_test::quoted(bad.path()));
  EXPECT_EQ(refused.status, 2);
  EXPECT_NE(refused.err.find(bad.path()), std::string::npos) << refused.err;
  EXPECT_NE(run_phaze("system show nope").err.find("no such preset or file"), std::string::npos);
}

}  // namespace
