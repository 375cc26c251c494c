// End-to-end tests of the `phaze arch` commands. Expected numbers come from accelerator.md sections 2 and 3.

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "support/run_phaze.h"
#include "support/temp_file.h"

namespace {

using phaze_test::TempFile;

using phaze_test::chomp;
using phaze_test::expect_input_error;
using phaze_test::expect_one_line;
using phaze_test::quoted;
using phaze_test::run_phaze;
using phaze_test::RunResult;

using phaze_test::parse_json;

constexpr double kAmax = 278826676.31216;

TEST(ArchCli, ListNamesThePreset) {
  const auto r = run_phaze("arch list");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("tpuv4-like"), std::string::npos);
  const auto j = run_phaze("arch list --json");
  ASSERT_EQ(j.status, 0) << j.err;
  const auto list = parse_json(j);
  ASSERT_TRUE(list.is_array());
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].at("name"), "tpuv4-like");
  EXPECT_EQ(list[1].at("name"), "tpuv4-published");
  EXPECT_NEAR(list[0].at("area_um2").get<double>(), kAmax, 1e-6);
}

TEST(ArchCli, ShowJsonOfTheReferenceChip) {
  const auto r = run_phaze("arch show tpuv4-like --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = parse_json(r);
  EXPECT_NEAR(j.at("area_um2").get<double>(), kAmax, 1e-6);
  EXPECT_EQ(j.at("num_tc"), 8);
  EXPECT_EQ(j.at("tc_width"), 128);
  EXPECT_EQ(j.at("tc_depth"), 128);
  EXPECT_EQ(j.at("num_vc"), 2);
  EXPECT_EQ(j.at("vc_width"), 128);
  EXPECT_EQ(j.at("glb_bytes"), 128ll << 20);
  EXPECT_EQ(j.at("tc_sram_bytes"), 256 << 10);
  EXPECT_EQ(j.at("vc_sram_bytes"), 2 << 10);
  EXPECT_EQ(j.at("hbm_bytes"), 32ll << 30);
  EXPECT_FALSE(j.contains("link_bandwidth"));  // the link is the system's (phaze system show)
  const auto& b = j.at("area_breakdown_um2");
  EXPECT_NEAR(b.at("tensor_core_pes").get<double>(), 99620144.545792, 1e-6);
  EXPECT_NEAR(b.at("tensor_core_srams").get<double>(), 3572520, 1e-6);
  EXPECT_NEAR(b.at("vector_core_lanes").get<double>(), 194514.906368, 1e-6);
  EXPECT_NEAR(b.at("vector_core_srams").get<double>(), 16496.86, 1e-6);
  EXPECT_NEAR(b.at("glb").get<double>(), 175423000, 1e-6);
  EXPECT_EQ(j.at("peak_tensor_macs_per_s").get<double>(), 8.0 * 128 * 128 * 1.05e9);
}

TEST(ArchCli, ShowTextAndFile) {
  const auto r = run_phaze("arch show tpuv4");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("278,826,676.31216"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("99,620,144.545792"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("175,423,000"), std::string::npos) << r.out;

  // Row "8, 2, 128, 128, 128, 64 MiB" of accelerator.md 3.1 from a file.
  const TempFile file(
      R"({"num_tc": 8, "tc_width": 128, "tc_depth": 128, "num_vc": 2, "vc_width": 128, "glb_mib": 64})");
  const auto f = run_phaze("arch show " + quoted(file.path()) + " --json");
  ASSERT_EQ(f.status, 0) << f.err;
  EXPECT_NEAR(parse_json(f).at("area_um2").get<double>(), 192009376.31216, 1e-6);
}

TEST(ArchCli, EnumerateJsonHasTheKeptList) {
  const auto r = run_phaze("arch enumerate --budget tpuv4 --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto list = parse_json(r);
  ASSERT_TRUE(list.is_array());
  ASSERT_EQ(list.size(), 29360u);
  struct IndexRow {
    size_t index;
    int64_t num_tc, num_vc, width, depth, width_vc, glb_mib;
    double area;
  };
  const IndexRow rows[] = {{0, 4096, 4096, 16, 2, 16, 32, 246416424.736},
                           {1000, 2048, 4096, 4, 32, 4, 4, 259785449.819136},
                           {18578, 8, 2, 128, 128, 128, 128, 278826676.31216},
                           {27000, 1, 32, 8, 4, 8, 2, 3759477.57072},
                           {29359, 1, 1, 2, 2, 2, 2, 3355047.77325}};
  for (const IndexRow& row : rows) {
    const auto& e = list[row.index];
    EXPECT_EQ(e.at("index"), row.index);
    EXPECT_EQ(e.at("num_tc"), row.num_tc) << row.index;
    EXPECT_EQ(e.at("num_vc"), row.num_vc) << row.index;
    EXPECT_EQ(e.at("tc_width"), row.width) << row.index;
    EXPECT_EQ(e.at("tc_depth"), row.depth) << row.index;
    EXPECT_EQ(e.at("vc_width"), row.width_vc) << row.index;
    EXPECT_EQ(e.at("glb_bytes"), row.glb_mib << 20) << row.index;
    EXPECT_NEAR(e.at("area_um2").get<double>(), row.area, 1e-6) << row.index;
  }
  // The default budget is the same.
  const auto plain = run_phaze("arch enumerate --json");
  ASSERT_EQ(plain.status, 0) << plain.err;
  EXPECT_EQ(plain.out, r.out);
}

TEST(ArchCli, EnumerateCountAndText) {
  const auto c = run_phaze("arch enumerate --count");
  ASSERT_EQ(c.status, 0) << c.err;
  EXPECT_EQ(chomp(c.out), "29360");
  const auto cj = run_phaze("arch enumerate --count --json");
  ASSERT_EQ(cj.status, 0) << cj.err;
  const auto j = parse_json(cj);
  EXPECT_EQ(j.at("count"), 29360);
  EXPECT_EQ(j.at("candidates"), 75712);
  EXPECT_NEAR(j.at("budget_um2").get<double>(), kAmax, 1e-6);

  const auto t = run_phaze("arch enumerate");
  ASSERT_EQ(t.status, 0) << t.err;
  int lines = 0;
  for (char ch : t.out) lines += ch == '\n';
  EXPECT_GE(lines, 29360);
  EXPECT_NE(t.out.find("278,826,676.31216"), std::string::npos);
}

TEST(ArchCli, EnumerateOptions) {
  const auto untied = run_phaze("arch enumerate --untie-vector-width --count");
  ASSERT_EQ(untied.status, 0) << untied.err;
  EXPECT_GT(std::stoll(untied.out), 29360);
  const auto loose = run_phaze("arch enumerate --lower-fraction 0 --count");
  ASSERT_EQ(loose.status, 0) << loose.err;
  EXPECT_GT(std::stoll(loose.out), 29360);
  const auto tight = run_phaze("arch enumerate --lower-fraction 0.9 --count");
  ASSERT_EQ(tight.status, 0) << tight.err;
  EXPECT_LT(std::stoll(tight.out), 29360);
  // Just above the smallest design's area (1, 1, 2, 2, 2, 2 MiB: 3,355,047.77325 µm²) only it fits.
  const auto one = run_phaze("arch enumerate --budget-um2 3355048 --json");
  ASSERT_EQ(one.status, 0) << one.err;
  const auto list = parse_json(one);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_NEAR(list[0].at("area_um2").get<double>(), 3355047.77325, 1e-6);
  // No design fits: an empty answer, not an error.
  const auto none = run_phaze("arch enumerate --budget-um2 1000 --json");
  ASSERT_EQ(none.status, 0) << none.err;
  EXPECT_TRUE(parse_json(none).empty());
  const auto none_count = run_phaze("arch enumerate --budget-um2 0 --count");
  ASSERT_EQ(none_count.status, 0) << none_count.err;
  EXPECT_EQ(chomp(none_count.out), "0");
  // A budget given as an architecture file.
  const TempFile file(
      R"({"num_tc": 8, "tc_width": 128, "tc_depth": 128, "num_vc": 2, "vc_width": 128, "glb_mib": 128})");
  const auto by_file = run_phaze("arch enumerate --count --budget " + quoted(file.path()));
  ASSERT_EQ(by_file.status, 0) << by_file.err;
  EXPECT_EQ(chomp(by_file.out), "29360");
}

TEST(ArchCli, BadInputsExitTwoWithOneLine) {
  expect_input_error(run_phaze("arch enumerate --budget-um2 -5"), "-5");
  expect_input_error(run_phaze("arch enumerate --lower-fraction 1.5"), "1.5");
  expect_input_error(run_phaze("arch enumerate --lower-fraction -0.1"), "-0.1");
  expect_input_error(run_phaze("arch enumerate --budget nosuch"), "nosuch");
  expect_input_error(run_phaze("arch enumerate --budget tpuv4 --budget-um2 5"));
  expect_input_error(run_phaze("arch enumerate --budget-um2 lots"));
  expect_input_error(run_phaze("arch show nosuch-chip"), "nosuch-chip");
  expect_input_error(run_phaze("arch show"));
  expect_input_error(run_phaze("arch"));
  const TempFile bad(R"({"num_tc": 8, "tc_width": -128, "tc_depth": 128, "num_vc": 2, "vc_width": 128,
                         "glb_mib": 128})");
  const auto r = run_phaze("arch show " + quoted(bad.path()));
  expect_input_error(r, "tc_width");
  EXPECT_NE(r.err.find(bad.path()), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("-128"), std::string::npos) << r.err;
  const TempFile malformed("{\"num_tc\": ");
  expect_input_error(run_phaze("arch show " + quoted(malformed.path())), "malformed");
}

}  // namespace
