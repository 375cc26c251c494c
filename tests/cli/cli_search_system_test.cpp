// The search's network: --link-bandwidth (one link) or --system (a system's network tiers); the search under
// Megatron-LM execution.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

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

const std::string kTinyModel = std::string(PHAZE_TEST_DATA) + "/hf/tiny-gpt2/config.json";
/// The tiny model on a few designs and 16 devices, exhaustively, with widths 1 and 2: a second or less.
const std::string kTinySearch = fmt::format(
    "search --model {} --tc 1,2 --vc 1 --width 8 --depth 8,16 --glb-mib 2 --hbm 32 --devices 16 --global-batch 32 "
    "--tp 1,2 --exhaustive --phaze-compat",
    quoted(kTinyModel));

std::string system_file(TempDir& dir, const std::string& name, const std::string& tiers) {
  const std::string path = dir.file(name);
  dir.write(name, R"({"device": "tpuv4-like", "network": [)" + tiers + "]}");
  return path;
}

// Two tiers with the same bandwidth, no latency and full efficiency are one link: every collective and
// transfer takes the same time on either, so the answer is the one of --link-bandwidth.
TEST(CliSearchSystem, TwoEqualTiersAnswerLikeOneLink) {
  TempDir dir;
  const std::string sys =
      system_file(dir, "equal.json",
                  R"({"name": "node", "members": 2, "bandwidth": 1073741824}, {"name": "all", "members": 0,
                      "bandwidth": 1073741824})");
  const json one = json_answer(kTinySearch + " --link-bandwidth 1");
  const json two = json_answer(kTinySearch + " --system " + quoted(sys));
  ASSERT_TRUE(one.contains("top") && two.contains("top"));
  EXPECT_EQ(two.at("top"), one.at("top"));
  EXPECT_EQ(two.at("best"), one.at("best"));
  EXPECT_EQ(one.at("settings").at("link_bandwidth_bytes_per_s").get<double>(), 1073741824.0);
  EXPECT_EQ(two.at("settings").at("network").size(), 2u);
}

// A slower outer tier can only slow every plan down (pipeline and data-parallel traffic cross it), and a
// latency on the tensor-parallel tier only adds time: the best throughput never rises.
TEST(CliSearchSystem, SlowerTiersNeverRaiseTheThroughput) {
  TempDir dir;
  const json fast = json_answer(kTinySearch + " --link-bandwidth 1");
  const std::string slow =
      system_file(dir, "slow.json",
                  R"({"name": "node", "members": 2, "bandwidth": 1073741824, "latency_s": 1e-5, "efficiency": 0.5},
         {"name": "all", "members": 0, "bandwidth": 107374182.4})");
  const RunResult text = run_phaze(kTinySearch + " --system " + quoted(slow));
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(
      text.out.find("network node (groups of 2, 1 GiB/s, 1e-05 s, efficiency 0.5) / all (every device, 0.1 GiB/s"),
      std::string::npos)
      << text.out;
  const json slower = json_answer(kTinySearch + " --system " + quoted(slow));
  EXPECT_LE(slower.at("best").at("average_samples_per_s").get<double>(),
            fast.at("best").at("average_samples_per_s").get<double>());
}

TEST(CliSearchSystem, SystemAndLinkBandwidthExcludeEachOther) {
  TempDir dir;
  const std::string sys = system_file(dir, "one.json", R"({"name": "l", "members": 0, "bandwidth": 1e9})");
  const RunResult both = run_phaze(kTinySearch + " --system " + quoted(sys) + " --link-bandwidth 2");
  EXPECT_EQ(both.status, 2);
  EXPECT_NE(both.err.find("--link-bandwidth"), std::string::npos) << both.err;
  const std::string bad = system_file(dir, "bad.json", R"({"name": "l", "members": 4, "bandwidth": 1e9})");
  const RunResult refused = run_phaze(kTinySearch + " --system " + quoted(bad));
  EXPECT_EQ(refused.status, 2);
  EXPECT_NE(refused.err.find(bad), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("members = 4"), std::string::npos) << refused.err;
  // The question file carries the tiers: written with --system, it answers the same.
  const std::string q = dir.file("q.json");
  ASSERT_EQ(run_phaze(kTinySearch + " --system " + quoted(sys) + " --write-question " + quoted(q)).status, 0);
  EXPECT_EQ(json_answer("search --question " + quoted(q)).at("top"),
            json_answer(kTinySearch + " --system " + quoted(sys)).at("top"));
}

// Megatron-LM execution: every configuration uses all 16 devices (t · p · d), the answer says how it ran, and
// overlapping the gradient reduction with the backward pass only hides time.
TEST(CliSearchMegatron, UsesEveryDeviceAndOverlapNeverSlowsItDown) {
  const json a = json_answer(kTinySearch + " --execution megatron");
  ASSERT_TRUE(a.contains("best"));
  EXPECT_EQ(a.at("settings").at("execution"),
            json({{"kind", "megatron"}, {"overlap_dp", false}, {"zero_stages", {0, 1, 2, 3}}}));
  EXPECT_EQ(a.at("settings").at("optimizer"), "adam");  // Megatron-LM's mixed-precision Adam
  for (const json& point : a.at("top")) {
    const json& plan = point.at("models").at(0).at("plan");
    EXPECT_EQ(plan.at("devices_used"), 16);
    EXPECT_TRUE(plan.contains("megatron"));
    EXPECT_LE(plan.at("megatron").at("peak_memory_bytes").get<double>(),
              point.at("design").at("hbm_bytes").get<double>());
  }
  const json overlapped = json_answer(kTinySearch + " --execution megatron --overlap-dp");
  EXPECT_GE(overlapped.at("best").at("average_samples_per_s").get<double>(),
            a.at("best").at("average_samples_per_s").get<double>());
}

TEST(CliSearchMegatron, RefusesSgdAndOverlapWithoutIt) {
  const RunResult sgd = run_phaze(kTinySearch + " --execution megatron --optimizer sgd");
  EXPECT_EQ(sgd.status, 2);
  EXPECT_NE(sgd.err.find("--optimizer sgd: --execution megatron"), std::string::npos) << sgd.err;
  const RunResult overlap = run_phaze(kTinySearch + " --overlap-dp");
  EXPECT_EQ(overlap.status, 2);
  EXPECT_NE(overlap.err.find("--overlap-dp: needs --execution megatron"), std::string::npos) << overlap.err;
  const RunResult kind = run_phaze(kTinySearch + " --execution deepspeed");
  EXPECT_EQ(kind.status, 2);
  EXPECT_NE(kind.err.find("--execution"), std::string::npos) << kind.err;
}

TEST(CliSearchMegatron, QuestionFileCarriesTheExecution) {
  TempDir dir;
  const std::string q = dir.file("q.json");
  ASSERT_EQ(run_phaze(kTinySearch + " --execution megatron --overlap-dp --write-question " + quoted(q)).status, 0);
  EXPECT_EQ(json_answer("search --question " + quoted(q)).at("top"),
            json_answer(kTinySearch + " --execution megatron --overlap-dp").at("top"));
  // Given beside a file of PHAZE's execution, the flag switches it (and its optimizer) to Megatron-LM's.
  const std::string plain = dir.file("plain.json");
  ASSERT_EQ(run_phaze(kTinySearch + " --write-question " + quoted(plain)).status, 0);
  EXPECT_EQ(json_answer("search --question " + quoted(plain) + " --execution megatron").at("top"),
            json_answer(kTinySearch + " --execution megatron").at("top"));
}

}  // namespace

// The stagewise planner: never slower than PHAZE's at the best point, every stage with its own t and d
// within the devices, and refused beside Megatron-LM execution.
TEST(CliSearchStagewise, NeverSlowerAndSaysHowEachStageRuns) {
  const json uniform = json_answer(kTinySearch);
  const json a = json_answer(kTinySearch + " --planner stagewise");
  ASSERT_TRUE(a.contains("best"));
  EXPECT_EQ(a.at("settings").at("planner"), "stagewise");
  EXPECT_EQ(json_answer(kTinySearch + " --planner piper").at("best"), a.at("best"));  // its other name
  EXPECT_FALSE(uniform.at("settings").contains("planner"));
  EXPECT_GE(a.at("best").at("average_samples_per_s").get<double>(),
            uniform.at("best").at("average_samples_per_s").get<double>());
  for (const json& point : a.at("top")) {
    const json& plan = point.at("models").at(0).at("plan");
    EXPECT_TRUE(plan.at("stagewise").get<bool>());
    int64_t devices = 0;
    for (const json& stage : plan.at("stages"))
      devices += stage.at("devices").get<int64_t>() * stage.at("data_parallel").get<int64_t>();
    EXPECT_EQ(plan.at("devices_used").get<int64_t>(), devices);
    EXPECT_LE(devices, 16);
  }
  const RunResult megatron = run_phaze(kTinySearch + " --planner stagewise --execution megatron --optimizer adam");
  EXPECT_EQ(megatron.status, 2);
  EXPECT_NE(megatron.err.find("--planner stagewise: plans PHAZE's execution"), std::string::npos) << megatron.err;
  const RunResult kind = run_phaze(kTinySearch + " --planner greedy");
  EXPECT_EQ(kind.status, 2);
  EXPECT_NE(kind.err.find("--planner"), std::string::npos) << kind.err;
}

// The attention core as one fused kernel: said in the answer, kept in a written question, and at a long
// sequence (s = 2048 on a tiny Llama, where one layer's s × s scores are 32 MiB) in 20 MiB of HBM faster
// than the materialised scores, which only fit with recomputation; on designs this starved of vector lanes
// the kernel's own time is no better (its backward pass recomputes the probabilities).
TEST(CliSearchAttention, FusedKernelIsSaidKeptAndFitsWhereTheScoresDoNot) {
  TempDir dir;
  const std::string search = fmt::format(
      "search --model {} --seq 2048 --tc 1,2 --vc 1 --width 8 --depth 8,16 --glb-mib 2 --hbm 0.02 --devices 16 "
      "--global-batch 32 --tp 1,2 --exhaustive --phaze-compat",
      quoted(std::string(PHAZE_TEST_DATA) + "/hf/tiny-llama/config.json"));
  const json materialised = json_answer(search);
  const json fused = json_answer(search + " --attention-backend fused");
  ASSERT_TRUE(materialised.contains("best") && fused.contains("best"));
  EXPECT_FALSE(materialised.at("settings").contains("attention"));
  EXPECT_EQ(fused.at("settings").at("attention"), "fused");
  EXPECT_GT(fused.at("best").at("average_samples_per_s").get<double>(),
            1.5 * materialised.at("best").at("average_samples_per_s").get<double>());
  EXPECT_FALSE(fused.at("best").at("recompute").get<bool>());
  EXPECT_TRUE(materialised.at("best").at("recompute").get<bool>());
  const std::string q = dir.file("q.json");
  ASSERT_EQ(run_phaze(search + " --attention-backend fused --write-question " + quoted(q)).status, 0);
  EXPECT_EQ(json_answer("search --question " + quoted(q)).at("top"), fused.at("top"));
  EXPECT_EQ(json_answer("search --question " + quoted(q) + " --attention-backend unfused").at("top"),
            materialised.at("top"));
}

// --ranking smaller-area against brute force over the CSV of every point: the best point has the highest
// throughput and, among the points that reach it, the smallest chip; the top list holds each chip once.
TEST(CliSearchRanking, SmallerAreaTakesTheSmallestChipOfTheBestThroughput) {
  TempDir dir;
  // Designs that differ only in their vector cores often tie: the tiny model leaves them idle.
  const std::string search = fmt::format(
      "search --model {} --tc 1,2 --vc 1,2,4 --width 8,16 --depth 8 --glb-mib 2,4 --hbm 0.002,32 "
      "--devices 16 --global-batch 32 --tp 1,2 --lower-fraction 0 --ranking smaller-area --top 4",
      quoted(kTinyModel));
  const std::string csv = dir.file("all.csv");
  const json a = json_answer(search + " --csv " + quoted(csv));
  ASSERT_TRUE(a.contains("best"));
  double best_score = 0, best_area = 0;
  for (const phaze_test::CsvRow& row : phaze_test::csv_rows(phaze_test::file_text(csv))) {
    if (row.at("feasible") != "1") continue;
    const double score = std::stod(row.at("average_samples_per_s")), area = std::stod(row.at("area_um2"));
    if (score > best_score || (score == best_score && area < best_area)) {
      best_score = score;
      best_area = area;
    }
  }
  EXPECT_EQ(a.at("best").at("average_samples_per_s").get<double>(), best_score);
  EXPECT_EQ(a.at("best").at("design").at("area_um2").get<double>(), best_area);
  // The canonical ranking picks another chip of the same throughput here: the test tells them apart.
  const json canonical = json_answer(search.substr(0, search.find(" --ranking")) + " --ranking canonical --top 4");
  EXPECT_EQ(canonical.at("best").at("average_samples_per_s"), a.at("best").at("average_samples_per_s"));
  EXPECT_GT(canonical.at("best").at("design").at("area_um2").get<double>(), best_area);
  std::set<std::string> chips;
  for (const json& p : a.at("top")) {
    json chip = p.at("design");
    chip.erase("hbm_bytes");
    EXPECT_TRUE(chips.insert(chip.dump()).second) << chip.dump();
  }
  EXPECT_EQ(chips.size(), 4u);
}

// --hbm-bandwidth searches each chip at each bandwidth: the answer is the best of the searches at one
// bandwidth each (which the designs' bandwidth in the answer names), a budget file's bandwidth is the one
// searched without the option, and wrong values exit 2 naming the option.
TEST(CliSearchHbm, BandwidthsAreADimensionOfTheSpace) {
  TempDir dir;
  const std::string model = quoted(std::string(PHAZE_TEST_DATA) + "/hf/tiny-llama/config.json");
  const std::string search = fmt::format(
      "search --model {} --seq 256 --tc 1,2 --vc 1,2 --width 8 --depth 8,16 --glb-mib 2 --hbm 32 "
      "--devices 16 --global-batch 32 --tp 1,2 --lower-fraction 0",
      model);
  const json both = json_answer(search + " --hbm-bandwidth 1,4");
  const json slow = json_answer(search + " --hbm-bandwidth 1"), fast = json_answer(search + " --hbm-bandwidth 4");
  ASSERT_TRUE(both.contains("best") && slow.contains("best") && fast.contains("best"));
  EXPECT_EQ(both.at("designs").get<int64_t>(), slow.at("designs").get<int64_t>() + fast.at("designs").get<int64_t>());
  const json& winner = fast.at("best").at("average_samples_per_s").get<double>() >=
                               slow.at("best").at("average_samples_per_s").get<double>()
                           ? fast
                           : slow;
  EXPECT_EQ(both.at("best"), winner.at("best"));
  EXPECT_GT(fast.at("best").at("average_samples_per_s").get<double>(),
            slow.at("best").at("average_samples_per_s").get<double>());  // 1 GB/s starves these chips
  EXPECT_EQ(both.at("best").at("design").at("hbm_bandwidth"), 4000000000);

  // A budget chip's bandwidth (and clock) is the one searched.
  dir.write("budget.json",
            R"({"num_tc": 8, "tc_width": 128, "tc_depth": 128, "num_vc": 2, "vc_width": 128, "glb_mib": 128,
                "hbm_bandwidth": 4e9})");
  const json budgeted = json_answer(search + " --budget " + quoted(dir.file("budget.json")));
  EXPECT_EQ(budgeted.at("best"), fast.at("best"));

  for (const char* bad : {"0", "2,2", "1.2e12", "fast"}) {
    const RunResult r = run_phaze(search + " --hbm-bandwidth " + bad);
    EXPECT_EQ(r.status, 2) << bad;
    EXPECT_NE(r.err.find("bandwidth"), std::string::npos) << r.err;
  }
}

// --baseline: a GPU cluster's fastest BF16 Megatron-LM configuration of each model on the question's devices,
// batch and sequence. `phaze predict` of the configuration it lists gives its throughput; a GPU preset stands
// for its DGX system; the baseline survives a written question; a system of accelerators is refused.
TEST(CliSearchBaseline, GpuClusterIsItsFastestConfigurationAsPredictPricesIt) {
  TempDir dir;
  const std::string search = kTinySearch + " --baseline h100-sxm";
  const json a = json_answer(search);
  ASSERT_TRUE(a.at("baselines").contains("gpu")) << a.at("baselines").dump();
  const json& g = a.at("baselines").at("gpu").at(0);
  EXPECT_EQ(g.at("system"), "dgx-h100");
  EXPECT_EQ(g.at("gpu"), "h100-sxm");
  const json& m = g.at("models").at(0);
  const json& plan = m.at("prediction").at("plan");
  EXPECT_EQ(plan.at("gpus"), 16);
  EXPECT_EQ(plan.at("precision"), "bf16");
  std::string flags = fmt::format(
      "predict --model {} --system dgx-h100 --global-batch 32 --memory-reserve-gib 0 --tp {} --pp {} --dp {} --vp {} "
      "--mbs {} --zero {} --recompute {}",
      quoted(kTinyModel), plan.at("tp").get<int64_t>(), plan.at("pp").get<int64_t>(), plan.at("dp").get<int64_t>(),
      plan.at("vp").get<int64_t>(), plan.at("micro_batch").get<int64_t>(), plan.at("zero").get<int64_t>(),
      plan.at("recompute").get<std::string>());
  if (plan.at("sequence_parallel").get<bool>()) flags += " --sequence-parallel";
  const json p = json_answer(flags);
  EXPECT_DOUBLE_EQ(m.at("samples_per_s").get<double>(), 32 / p.at("iteration_time_s").get<double>()) << flags;
  EXPECT_DOUBLE_EQ(g.at("average_samples_per_s").get<double>(), m.at("samples_per_s").get<double>());
  EXPECT_DOUBLE_EQ(g.at("speedup_of_best").get<double>(),
                   a.at("best").at("average_samples_per_s").get<double>() / m.at("samples_per_s").get<double>());
  // The same baseline from the system's name and from a written question.
  EXPECT_EQ(json_answer(kTinySearch + " --baseline dgx-h100").at("baselines").at("gpu"), a.at("baselines").at("gpu"));
  const std::string q = dir.file("q.json");
  ASSERT_EQ(run_phaze(search + " --write-question " + quoted(q)).status, 0);
  EXPECT_EQ(json_answer("search --question " + quoted(q)).at("baselines").at("gpu"), a.at("baselines").at("gpu"));
  // Without --baseline the answer has no GPU entry, as before.
  EXPECT_FALSE(json_answer(kTinySearch).at("baselines").contains("gpu"));
  for (const auto& [bad, words] : {std::pair{"tpuv4-pod", "not a GPU"}, std::pair{"no-such-gpu", "no-such-gpu"}}) {
    const RunResult r = run_phaze(kTinySearch + " --baseline " + bad);
    EXPECT_EQ(r.status, 2) << bad;
    EXPECT_NE(r.err.find(words), std::string::npos) << r.err;
  }
}
