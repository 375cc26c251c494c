// Architecture description files, presets and the JSON form of a design.

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>

#include "hw/architecture_json.h"
#include "hw/area.h"
#include "hw/presets.h"
#include "support/temp_file.h"
#include "util/input_error.h"

namespace {

using phaze_test::TempFile;

using namespace phaze::hw;

/// The message of the InputError that parsing `text` throws ("" when none).
std::string error_of(const std::string& text, const std::string& source = "arch.json") {
  try {
    parse_architecture(text, source);
  } catch (const phaze::InputError& e) {
    return e.what();
  }
  return "";
}

void expect_error(const std::string& text, const std::vector<std::string>& needles) {
  const std::string message = error_of(text);
  ASSERT_FALSE(message.empty()) << "accepted: " << text;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_NE(message.find("arch.json"), std::string::npos) << message;
  for (const auto& needle : needles) EXPECT_NE(message.find(needle), std::string::npos) << needle << " / " << message;
}

constexpr const char* kMinimal =
    R"({"num_tc": 8, "tc_width": 128, "tc_depth": 128, "num_vc": 2, "vc_width": 128, "glb_mib": 128})";

TEST(HwPresets, TpuV4LikeIsTheReferenceChip) {
  ASSERT_EQ(preset_names().size(), 2u);
  EXPECT_EQ(preset_names()[0], "tpuv4-like");
  const auto a = find_preset("tpuv4-like");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->name, "tpuv4-like");
  EXPECT_EQ(a->num_tc, 8);
  EXPECT_EQ(a->tc_width, 128);
  EXPECT_EQ(a->tc_depth, 128);
  EXPECT_EQ(a->num_vc, 2);
  EXPECT_EQ(a->vc_width, 128);
  EXPECT_EQ(a->glb_bytes, 128ll << 20);
  EXPECT_EQ(a->hbm_bytes, 32ll << 30);
  EXPECT_EQ(a->hbm_bandwidth, 1.2e12);
  EXPECT_EQ(a->clock_hz, 1.05e9);
  EXPECT_EQ(find_preset("tpuv4"), a);
  EXPECT_FALSE(find_preset("tpuv5").has_value());
  EXPECT_NEAR(area_um2(*a), 278826676.31216, 1e-6);
}

TEST(HwArchitectureJson, ReadsAFileWithDefaults) {
  const Architecture a = parse_architecture(kMinimal, "arch.json");
  Architecture want = tpuv4_like();
  want.name = "arch.json";
  EXPECT_EQ(a, want);
  EXPECT_NEAR(area_um2(a), 278826676.31216, 1e-6);
}

TEST(HwArchitectureJson, ReadsEveryKey) {
  const Architecture a = parse_architecture(R"({
      "name": "odd", "num_tc": 3, "tc_width": 100, "tc_depth": 60, "num_vc": 5, "vc_width": 48,
      "glb_bytes": 10000000, "tc_sram_bytes": 65536, "vc_sram_bytes": 3000, "hbm_gib": 80,
      "hbm_bandwidth": 2e12, "clock_hz": 1.5e9, "comment": "ignored", "extra": [1, 2]
  })",
                                            "arch.json");
  EXPECT_EQ(a.name, "odd");
  EXPECT_EQ(a.num_tc, 3);
  EXPECT_EQ(a.tc_width, 100);
  EXPECT_EQ(a.tc_depth, 60);
  EXPECT_EQ(a.num_vc, 5);
  EXPECT_EQ(a.vc_width, 48);
  EXPECT_EQ(a.glb_bytes, 10000000);
  EXPECT_EQ(a.tc_sram_bytes, 65536);
  EXPECT_EQ(a.vc_sram_bytes, 3000);
  EXPECT_EQ(a.hbm_bytes, 80ll << 30);
  EXPECT_EQ(a.hbm_bandwidth, 2e12);
  EXPECT_EQ(a.clock_hz, 1.5e9);
  // Area with the explicit SRAMs: 64 KiB is a table entry (115,579), 3000 bytes lies between 2 and 4 KiB.
  const AreaBreakdown b = area_breakdown(a);
  EXPECT_NEAR(b.tc_pes_um2, 3 * 100 * 60 * 760.041386, 1e-6);
  EXPECT_NEAR(b.tc_srams_um2, 3 * 115579.0, 1e-6);
  EXPECT_NEAR(b.vc_lanes_um2, 5 * 48 * 759.823853, 1e-6);
  EXPECT_NEAR(b.vc_srams_um2, 5 * (8248.43 + (3000.0 - 2048.0) / 2048.0 * (12610.5 - 8248.43)), 1e-6);
}

TEST(HwArchitectureJson, SizeUnitsAndIntegralFloats) {
  const Architecture a = parse_architecture(
      R"({"num_tc": 1, "tc_width": 2.0, "tc_depth": 2, "num_vc": 1, "vc_width": 2, "glb_mib": 0.5,
          "hbm_bytes": 1073741824})",
      "arch.json");
  EXPECT_EQ(a.tc_width, 2);
  EXPECT_EQ(a.glb_bytes, 512 << 10);
  EXPECT_EQ(a.hbm_bytes, 1ll << 30);
  EXPECT_EQ(a.tc_sram_bytes, 0);
  const Architecture zero = parse_architecture(
      R"({"num_tc": 1, "tc_width": 2, "tc_depth": 2, "num_vc": 1, "vc_width": 2, "glb_bytes": 2097152,
                             "tc_sram_bytes": 0, "vc_sram_bytes": 0})",
      "arch.json");
  EXPECT_EQ(zero.tc_sram_bytes, 0);  // 0 = derived
  EXPECT_EQ(tensor_core_sram_bytes(zero), 1024);
}

TEST(HwArchitectureJson, ErrorsNameFileKeyAndValue) {
  expect_error("{", {"malformed JSON"});
  expect_error("[1, 2]", {"JSON object"});
  expect_error(R"({"tc_width": 128, "tc_depth": 128, "num_vc": 2, "vc_width": 128, "glb_mib": 128})", {"'num_tc'"});
  expect_error(R"({"num_tc": 8, "tc_width": 128, "tc_depth": 128, "num_vc": 2, "vc_width": 128})", {"'glb_bytes'"});
  expect_error(R"({"num_tc": 8, "tc_width": -4, "tc_depth": 128, "num_vc": 2, "vc_width": 128, "glb_mib": 128})",
               {"'tc_width'", "-4"});
  expect_error(R"({"num_tc": 0, "tc_width": 4, "tc_depth": 128, "num_vc": 2, "vc_width": 128, "glb_mib": 128})",
               {"'num_tc'", "0"});
  expect_error(R"({"num_tc": 8, "tc_width": 2.5, "tc_depth": 128, "num_vc": 2, "vc_width": 128, "glb_mib": 128})",
               {"'tc_width'", "2.5"});
  expect_error(R"({"num_tc": "8", "tc_width": 4, "tc_depth": 128, "num_vc": 2, "vc_width": 128, "glb_mib": 128})",
               {"'num_tc'", "\"8\""});
  expect_error(R"({"num_tc": 8, "tc_width": 4, "tc_depth": 128, "num_vc": 2, "vc_width": 1000000, "glb_mib": 128})",
               {"'vc_width'", "1000000"});
  expect_error(R"({"num_tc": 8, "tc_width": 4, "tc_depth": 4, "num_vc": 2, "vc_width": 4, "glb_mib": -1})",
               {"'glb_mib'", "-1"});
  expect_error(R"({"num_tc": 8, "tc_width": 4, "tc_depth": 4, "num_vc": 2, "vc_width": 4, "glb_mib": 1e-9})",
               {"'glb_mib'", "whole number of bytes"});
  expect_error(R"({"num_tc": 8, "tc_width": 4, "tc_depth": 4, "num_vc": 2, "vc_width": 4, "glb_mib": 2,
                   "glb_bytes": 2097152})",
               {"'glb_bytes'", "'glb_mib'"});
  expect_error(R"({"num_tc": 8, "tc_width": 4, "tc_depth": 4, "num_vc": 2, "vc_width": 4, "glb_mib": 2,
                   "hbm_bandwidth": 0})",
               {"'hbm_bandwidth'", "0"});
  expect_error(R"({"num_tc": 8, "tc_width": 4, "tc_depth": 4, "num_vc": 2, "vc_width": 4, "glb_mib": 2,
                   "link_bandwidth": -5})",
               {"'link_bandwidth'", "-5"});
  // A link in a device file would be ignored by the search: the links are the system's network.
  expect_error(R"({"num_tc": 8, "tc_width": 4, "tc_depth": 4, "num_vc": 2, "vc_width": 4, "glb_mib": 2,
                   "link_bandwidth": 5e10})",
               {"'link_bandwidth'", "system's network"});
  expect_error(R"({"num_tc": 8, "tc_width": 4, "tc_depth": 4, "num_vc": 2, "vc_width": 4, "glb_mib": 2,
                   "clock_hz": "fast"})",
               {"'clock_hz'", "\"fast\""});
  expect_error(R"({"num_tc": 8, "tc_width": 4, "tc_depth": 4, "num_vc": 2, "vc_width": 4, "glb_mib": 2,
                   "tc_sram_bytes": -1024})",
               {"'tc_sram_bytes'", "-1024"});
  expect_error(R"({"num_tc": 8, "tc_width": 4, "tc_depth": 4, "num_vc": 2, "vc_width": 4, "glb_mib": 2,
                   "hbm_gib": 0})",
               {"'hbm_gib'", "0"});
}

TEST(HwArchitectureJson, FilesAndPresetsLoad) {
  const TempFile file(kMinimal);
  const Architecture a = read_architecture_file(file.path());
  EXPECT_EQ(a.name, file.path());
  EXPECT_EQ(load_architecture(file.path()), a);
  EXPECT_EQ(load_architecture("tpuv4-like"), tpuv4_like());
  EXPECT_THROW(load_architecture("no-such-chip"), phaze::InputError);
  EXPECT_THROW(read_architecture_file("/nonexistent/arch.json"), phaze::InputError);
  try {
    load_architecture("no-such-chip");
  } catch (const phaze::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no-such-chip"), std::string::npos);
  }
  const TempFile bad(R"({"num_tc": -8})");
  try {
    load_architecture(bad.path());
    ADD_FAILURE() << "accepted";
  } catch (const phaze::InputError& e) {
    EXPECT_NE(std::string(e.what()).find(bad.path()), std::string::npos) << e.what();
  }
}

TEST(HwArchitectureJson, ToJsonHasDerivedSizesAreaAndRoundTrips) {
  const nlohmann::json j = to_json(tpuv4_like());
  EXPECT_EQ(j.at("name"), "tpuv4-like");
  EXPECT_EQ(j.at("tc_sram_bytes"), 262144);
  EXPECT_EQ(j.at("vc_sram_bytes"), 2048);
  EXPECT_EQ(j.at("glb_bytes"), 134217728);
  EXPECT_NEAR(j.at("area_um2").get<double>(), 278826676.31216, 1e-6);
  const auto& b = j.at("area_breakdown_um2");
  EXPECT_NEAR(b.at("tensor_core_pes").get<double>(), 99620144.545792, 1e-6);
  EXPECT_NEAR(b.at("tensor_core_srams").get<double>(), 3572520, 1e-6);
  EXPECT_NEAR(b.at("vector_core_lanes").get<double>(), 194514.906368, 1e-6);
  EXPECT_NEAR(b.at("vector_core_srams").get<double>(), 16496.86, 1e-6);
  EXPECT_NEAR(b.at("glb").get<double>(), 175423000, 1e-6);
  EXPECT_EQ(j.at("area_from_tables"), true);
  EXPECT_EQ(j.at("peak_tensor_macs_per_s").get<double>(), 8.0 * 128 * 128 * 1.05e9);
  EXPECT_EQ(j.at("peak_vector_macs_per_s").get<double>(), 2.0 * 128 * 1.05e9);

  const Architecture back = architecture_from_json(j, "round trip");
  EXPECT_EQ(back.name, "tpuv4-like");
  EXPECT_EQ(back.num_tc, 8);
  EXPECT_EQ(back.tc_sram_bytes, 262144);  // now explicit
  EXPECT_EQ(area_um2(back), area_um2(tpuv4_like()));
  EXPECT_EQ(back.hbm_bytes, tpuv4_like().hbm_bytes);
}

}  // namespace
