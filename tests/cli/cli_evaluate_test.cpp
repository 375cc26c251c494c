// phaze evaluate: one chip priced end to end. Its answer is the search's own pricing of that design (a design of
// the searched space gives the scores of its points in the search's CSV, the TPUv4-like preset the search's
// TPUv4-like baseline), a chip outside the template is priced with its own bandwidth and lanes, and the chip is
// kept in a written question.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <tuple>

#include "support/csv_rows.h"
#include "support/file_text.h"
#include "support/run_phaze.h"
#include "support/temp_dir.h"

namespace {

using nlohmann::json;
using phaze_test::json_answer;
using phaze_test::quoted;
using phaze_test::run_phaze;
using phaze_test::RunResult;
using phaze_test::TempDir;

const std::string kTiny = quoted(std::string(PHAZE_TEST_DATA) + "/hf/tiny-gpt2/config.json");
const std::string kWorkload = " --devices 16 --global-batch 32 --tp 1,2 --mbs 1,2 --hbm 0.002,32";

std::string chip_file(TempDir& dir, const std::string& name, const std::string& fields) {
  dir.write(name, "{" + fields + "}");
  return quoted(dir.file(name));
}

TEST(CliEvaluate, AChipOfTheSpaceScoresAsItsPointsInTheSearch) {
  TempDir dir;
  const std::string csv = dir.file("all.csv");
  ASSERT_EQ(run_phaze("search --model " + kTiny + kWorkload + " --tc 2 --vc 1 --width 8 --depth 16 --glb-mib 2 --csv " +
                      quoted(csv))
                .status,
            0);
  // Score of each (micro-batch, HBM, recomputation) point of the one design, from the CSV.
  std::map<std::tuple<int64_t, int64_t, bool>, double> searched;
  for (const phaze_test::CsvRow& row : phaze_test::csv_rows(phaze_test::file_text(csv)))
    searched[{std::stoll(row.at("micro_batch")), std::stoll(row.at("hbm_bytes")), row.at("recompute") == "1"}] =
        std::stod(row.at("average_samples_per_s"));
  ASSERT_EQ(searched.size(), 8u);
  const std::string chip = chip_file(
      dir, "chip.json", R"("num_tc": 2, "tc_width": 8, "tc_depth": 16, "num_vc": 1, "vc_width": 8, "glb_mib": 2)");
  const json a = json_answer("evaluate --arch " + chip + " --model " + kTiny + kWorkload);
  ASSERT_TRUE(a.contains("search"));
  int compared = 0;
  for (const json& c : a.at("search").at("combinations")) {
    const auto key =
        std::tuple(c.at("micro_batch").get<int64_t>(), c.at("hbm_bytes").get<int64_t>(), c.at("recompute").get<bool>());
    ASSERT_TRUE(searched.contains(key));
    const double score =
        c.at("best_average_samples_per_s").is_null() ? 0 : c.at("best_average_samples_per_s").get<double>();
    EXPECT_EQ(score, searched.at(key));
    ++compared;
  }
  EXPECT_EQ(compared, 8);
}

TEST(CliEvaluate, TheTpuv4LikePresetIsTheSearchsBaseline) {
  const json search =
      json_answer("search --model " + kTiny + kWorkload + " --tc 2 --vc 1 --width 8 --depth 16 --glb-mib 2");
  const json evaluated = json_answer("evaluate --arch tpuv4-like --model " + kTiny + kWorkload);
  EXPECT_EQ(evaluated.at("best").at("average_samples_per_s"),
            search.at("baselines").at("tpuv4_like").at("average_samples_per_s"));
  EXPECT_EQ(evaluated.at("settings").at("chip").at("name"), "tpuv4-like");
}

TEST(CliEvaluate, AChipOutsideTheTemplateWithItsOwnBandwidth) {
  // Llama-style attention at s = 1024 on one chip with 1,024-lane vector cores (outside the template), at two
  // HBM bandwidths: twice the bandwidth is never slower, and the chip's bandwidth is what the answer used.
  TempDir dir;
  const std::string model = quoted(std::string(PHAZE_TEST_DATA) + "/hf/tiny-llama/config.json");
  const std::string base =
      R"("num_tc": 4, "tc_width": 16, "tc_depth": 16, "num_vc": 4, "vc_width": 1024, "glb_mib": 8)";
  const std::string slow = chip_file(dir, "slow.json", base + R"(, "hbm_bandwidth": 2e11)");
  const std::string fast = chip_file(dir, "fast.json", base + R"(, "hbm_bandwidth": 4e11)");
  const std::string args = " --model " + model + " --seq 1024 --devices 8 --global-batch 16 --attention-backend fused";
  const json a = json_answer("evaluate --arch " + slow + args), b = json_answer("evaluate --arch " + fast + args);
  ASSERT_TRUE(a.at("best").is_object() && b.at("best").is_object());
  EXPECT_EQ(a.at("settings").at("chip").at("hbm_bandwidth"), 2e11);
  EXPECT_EQ(a.at("settings").at("chip").at("vc_width"), 1024);
  EXPECT_GT(b.at("best").at("average_samples_per_s").get<double>(),
            a.at("best").at("average_samples_per_s").get<double>());
  // The chip's HBM capacity (32 GiB by default) is the only one unless --hbm names others.
  EXPECT_EQ(a.at("settings").at("hbm_bytes"), json::array({int64_t{32} << 30}));
}

TEST(CliEvaluate, MemoryPerDeviceIsThePublishedLayerFigures) {
  // GPT-3 175B on the TPUv4-like chip at t = 1 with recomputation: a stage of n transformer layers after the
  // first holds, per device, its weights and SGD gradients (2 · 2 bytes · n · (12h² + 13h)) or, with
  // mixed-precision Adam, 18 bytes per parameter (BF16 weights, FP32 gradients, master weights and two
  // moments: Megatron-LM's), one micro-batch's activations (n · (34sbh + 5as²b) bytes, Korthikanti et al.
  // 2022) and, for each further micro-batch of the p − q in flight on stage q under 1F1B, the 2sbh bytes
  // that entered it.
  for (const auto& [optimizer, bytes_per_parameter] : {std::pair("sgd", 4.0), std::pair("adam", 18.0)}) {
    SCOPED_TRACE(optimizer);
    const json a =
        json_answer(std::string("evaluate --arch tpuv4-like --model gpt3-175b --mbs 1 --recompute on --hbm 80 "
                                "--tp 1 --attention-backend unfused --optimizer ") +
                    optimizer);
    ASSERT_TRUE(a.at("best").is_object());
    const json& plan = a.at("best").at("models").at(0).at("plan");
    const int64_t p = plan.at("pipeline_stages").get<int64_t>();
    ASSERT_GT(p, 2);
    const double h = 12288, s = 2048, heads = 96, b = 1;
    double peak = 0;
    for (int64_t q = 1; q < p - 1; ++q) {
      const json& stage = plan.at("stages").at(q);
      const double n = stage.at("layers").get<double>();
      const double expected = bytes_per_parameter * n * (12 * h * h + 13 * h) +
                              n * (34 * s * b * h + 5 * heads * s * s * b) +
                              static_cast<double>(p - q - 1) * 2 * s * b * h;
      EXPECT_EQ(stage.at("memory_bytes_per_device").get<double>(), expected) << "stage " << q;
    }
    for (const json& stage : plan.at("stages"))
      peak = std::max(peak, stage.at("memory_bytes_per_device").get<double>());
    EXPECT_EQ(plan.at("peak_memory_bytes_per_device").get<double>(), peak);
    EXPECT_LE(peak, 80.0 * (int64_t{1} << 30));
  }
}

TEST(CliEvaluate, TheChipIsKeptInAWrittenQuestion) {
  TempDir dir;
  const std::string chip = chip_file(
      dir, "chip.json",
      R"("name": "mine", "num_tc": 2, "tc_width": 8, "tc_depth": 16, "num_vc": 1, "vc_width": 8, "glb_mib": 2, "tc_sram_bytes": 4096)");
  const std::string q = dir.file("q.json");
  const std::string args = "evaluate --arch " + chip + " --model " + kTiny + kWorkload;
  ASSERT_EQ(run_phaze(args + " --write-question " + quoted(q)).status, 0);
  const json written = json::parse(phaze_test::file_text(q));
  EXPECT_EQ(written.at("chip").at("tc_sram_bytes"), 4096);
  EXPECT_EQ(json_answer("search --question " + quoted(q)).at("best"), json_answer(args).at("best"));
}

TEST(CliEvaluate, BadInputNamesTheOption) {
  const RunResult missing = run_phaze("evaluate --arch no-such-chip --model " + kTiny);
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.err.find("architecture 'no-such-chip'"), std::string::npos) << missing.err;
  const RunResult filter = run_phaze("evaluate --arch tpuv4-like --model " + kTiny + " --tc 8");
  EXPECT_EQ(filter.status, 2);  // no such option: the space is the one chip
}

}  // namespace
