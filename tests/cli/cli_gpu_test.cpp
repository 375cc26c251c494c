// The GPU commands end to end: predict, plan and validate, their JSON and their refusals (exit 2 naming the
// option), and GPU systems in system files.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/run_phaze.h"
#include "support/temp_dir.h"

namespace {

using nlohmann::json;
using phaze_test::quoted;
using phaze_test::run_phaze;
using phaze_test::RunResult;
using phaze_test::TempDir;

// vTrain's GPT-3 runs, which materialised the attention scores and trained in FP16 (the defaults are fused
// attention and BF16).
const std::string kPredict =
    "predict --model gpt3-175b --system vtrain-a100 --global-batch 1536 --no-flash-attention --fp16 ";

TEST(CliGpu, PredictJsonHasTheBreakdownAndMemory) {
  const RunResult r = run_phaze(kPredict + "--tp 8 --pp 16 --dp 4 --mbs 2 --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_GT(j.at("iteration_time_s").get<double>(), 0);
  for (const char* key :
       {"forward_s", "backward_s", "recompute_s", "tp_comm_s", "pp_comm_s", "bubble_s", "dp_comm_s", "optimizer_s"})
    EXPECT_TRUE(j.at("breakdown").contains(key)) << key;
  for (const char* key : {"weights_bytes", "gradients_bytes", "optimizer_bytes", "activations_bytes", "peak_bytes"})
    EXPECT_TRUE(j.at("memory").contains(key)) << key;
  EXPECT_TRUE(j.at("fits").get<bool>());
  // GPT-3 on 512 A100s, vTrain's measured 56,315.8 ms for this plan: within 8 %.
  EXPECT_NEAR(j.at("iteration_time_s").get<double>() / 56.3158, 1, 0.08);
}

// Every text answer starts with one line of what it assumes. The A100's and H100's software figures were
// fitted on their own generations (docs/gpu.md, "Calibration"), so their answers carry no caveat; a GPU file
// of another generation that keeps the H100's figures says they were fitted on Hopper; a GPU file that gives
// its own software figures says they are its file's.
TEST(CliGpu, TextAnswersStartWithTheirAssumptions) {
  const std::string own = "not on its own generation";
  const RunResult a100 = run_phaze(kPredict + "--tp 8 --pp 16 --dp 4 --mbs 2");
  ASSERT_EQ(a100.status, 0) << a100.err;
  EXPECT_EQ(a100.out.rfind("assumptions: ", 0), 0u) << a100.out;
  EXPECT_EQ(a100.out.substr(0, a100.out.find('\n')).find(own), std::string::npos) << a100.out;
  const RunResult h100 =
      run_phaze("predict --model llama2-7b --system dgx-h100 --tp 2 --pp 1 --dp 4 --global-batch 64");
  ASSERT_EQ(h100.status, 0) << h100.err;
  const std::string first = h100.out.substr(0, h100.out.find('\n'));
  EXPECT_EQ(first.rfind("assumptions: ", 0), 0u) << h100.out;
  EXPECT_EQ(first.find(own), std::string::npos) << first;  // Hopper's figures were fitted on Hopper kernels
  EXPECT_NE(first.find("fused (flash) attention"), std::string::npos) << first;  // the default
  EXPECT_NE(a100.out.find("materialised attention"), std::string::npos) << a100.out;

  TempDir dir;
  dir.write("next.json", R"({"name": "next", "device": {"kind": "gpu", "base": "h100-sxm", "name": "next-gpu",
    "generation": "blackwell"}, "network": [{"name": "link", "members": 0, "bandwidth": 1e11}]})");
  const RunResult plan = run_phaze("plan --model llama2-7b --system " + quoted(dir.file("next.json")) +
                                   " --gpus 8 --global-batch 64 --top 1");
  ASSERT_EQ(plan.status, 0) << plan.err;
  EXPECT_EQ(plan.out.rfind("assumptions: ", 0), 0u) << plan.out;
  EXPECT_NE(plan.out.substr(0, plan.out.find('\n'))
                .find("next-gpu's software figures were fitted on hopper measurements, " + own + " (blackwell)"),
            std::string::npos)
      << plan.out;

  dir.write("tuned.json", R"({"name": "tuned", "device": {"kind": "gpu", "base": "h100-sxm", "name": "tuned-h100",
    "tensor_efficiency": 0.7}, "network": [{"name": "link", "members": 0, "bandwidth": 1e11}]})");
  const RunResult tuned = run_phaze("predict --model llama2-7b --system " + quoted(dir.file("tuned.json")) +
                                    " --tp 2 --pp 1 --dp 4 --global-batch 64 --json");
  ASSERT_EQ(tuned.status, 0) << tuned.err;
  EXPECT_NE(json::parse(tuned.out).at("assumptions").get<std::string>().find("come from its file"), std::string::npos)
      << tuned.out;
}

TEST(CliGpu, PredictSaysWhenItDoesNotFit) {
  const RunResult r = run_phaze(kPredict + "--tp 1 --pp 1 --dp 512 --mbs 1");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("DOES NOT FIT"), std::string::npos) << r.out;
}

// The reserve is kept free on top of the peak: a plan that fits with the default 1 GiB does not when the
// reserve leaves less room than its peak, and the JSON reports both.
TEST(CliGpu, MemoryReserveDecidesWhatFits) {
  const std::string args = kPredict + "--tp 8 --pp 16 --dp 4 --mbs 2 --json";
  const RunResult fits = run_phaze(args);
  ASSERT_EQ(fits.status, 0) << fits.err;
  const json j = json::parse(fits.out);
  ASSERT_TRUE(j.at("fits").get<bool>());
  EXPECT_EQ(j.at("memory").at("reserve_bytes").get<int64_t>(), int64_t{1} << 30);
  const double room = j.at("memory").at("capacity_bytes").get<double>() - j.at("memory").at("peak_bytes").get<double>();
  const RunResult tight = run_phaze(args + " --memory-reserve-gib " + std::to_string(room / (1 << 30) + 0.01));
  ASSERT_EQ(tight.status, 0) << tight.err;
  EXPECT_FALSE(json::parse(tight.out).at("fits").get<bool>()) << tight.out;
}

TEST(CliGpu, ImpossiblePlansExitTwoNamingTheOption) {
  const std::pair<std::string, std::string> cases[] = {
      {"--tp 8 --pp 16 --dp 4 --mbs 2 --gpus 256", "--gpus"},
      {"--tp 8 --pp 7 --dp 4 --mbs 2", "--pp"},
      {"--tp 7 --pp 16 --dp 4 --mbs 2", "--tp"},
      {"--tp 8 --pp 16 --dp 4 --mbs 5", "--global-batch"},
      {"--tp 8 --pp 16 --dp 4 --mbs 2 --vp 5", "--vp"},
      {"--tp 8 --pp 16 --dp 4 --mbs 2 --recompute some", "--recompute"},
      {"--tp 8 --pp 16 --dp 4 --mbs 99999999999999999999", "--mbs"},
      {"--tp 8 --pp 16 --dp 4 --mbs 2 --decoder-first-pipeline-num-layers 5", "--decoder-first-pipeline-num-layers"},
      {"--tp 8 --pp 16 --dp 4 --mbs 2 --decoder-last-pipeline-num-layers 99999", "--decoder-last-pipeline-num-layers"},
      {"--tp 8 --pp 16 --dp 4 --mbs 2 --tp-comm-overlap", "--tp-comm-overlap"},
      {"--tp 8 --pp 16 --dp 4 --mbs 2 --overlap-param-gather", "--overlap-param-gather"},
      {"--tp 8 --pp 16 --dp 4 --mbs 2 --memory-reserve-gib -1", "--memory-reserve-gib"},
      {"--tp 8 --pp 16 --dp 4 --mbs 2 --memory-reserve-gib lots", "--memory-reserve-gib"},
      {"--tp 8 --pp 16 --dp 4 --mbs 2 --memory-reserve-gib 1e300", "--memory-reserve-gib"},
      {"--tp 8 --pp 16 --dp 4 --mbs 2 --zero 4", "--zero"},
      {"--tp 8 --pp 16 --dp 4 --mbs 2 --zero 1 --zero-group 3", "--zero-group"},
      {"--tp 8 --pp 16 --dp 4 --mbs 2 --fp8-recipe tensorwise", "--fp8-recipe"},
      {"--tp 8 --pp 16 --dp 4 --mbs 2 --fp8-recipe mxfp8 --fp8", "--fp8-recipe"},
      {"--tp 8 --pp 16 --dp 4 --mbs 2 --cp-comm-type all_gather", "--cp-comm-type"},
      {"--tp 8 --pp 16 --dp 4 --mbs 2 --attention-backend cutlass", "--attention-backend"},
      {"--tp 8 --pp 16 --dp 2 --cp 2 --mbs 2 --no-flash-attention", "--cp"},
      {"--tp 8 --pp 16 --dp 4 --mbs 2 --fp8 --fp16", "--fp8"},
      {"--tp 8 --pp 16 --dp 4 --mbs 2 --account-for-embedding-in-pipeline-split",
       "--account-for-embedding-in-pipeline-split"},  // 97 slots on 16 stages
      {"--tp 8 --pp 16 --dp 4 --mbs 2 --account-for-loss-in-pipeline-split --decoder-first-pipeline-num-layers 6",
       "--account-for-loss-in-pipeline-split"}};
  for (const auto& [args, option] : cases) {
    const RunResult r = run_phaze(kPredict + args);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_NE(r.err.find(option), std::string::npos) << args << ": " << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
  }
  // Expert parallelism: a dense model has no experts; a width must divide the experts and the data-parallel
  // GPUs; experts under tensor parallelism need sequence parallelism.
  const std::pair<std::string, std::string> experts[] = {
      {"--model gpt3-175b --tp 8 --pp 16 --dp 4 --mbs 2 --global-batch 1536 --ep 2", "--ep"},
      {"--model mixtral-8x7b --seq 4096 --dp 8 --global-batch 64 --ep 3", "--ep"},
      {"--model mixtral-8x7b --seq 4096 --dp 2 --global-batch 64 --ep 4", "--ep"},
      {"--model mixtral-8x7b --seq 4096 --tp 2 --dp 4 --global-batch 64", "--sequence-parallel"},
      {"--model mixtral-8x7b --seq 4096 --dp 8 --global-batch 64 --ep 0", "--ep"},
      {"--model mixtral-8x7b --seq 4096 --tp 2 --dp 4 --sequence-parallel --global-batch 64 --etp 3", "--etp"},
      {"--model mixtral-8x7b --seq 4096 --dp 8 --global-batch 64 --moe-token-dispatcher-type allgather",
       "--moe-token-dispatcher-type"},
      {"--model mixtral-8x7b --seq 4096 --dp 8 --global-batch 64 --moe-token-dispatcher-type deepep",
       "--moe-token-dispatcher-type"}};
  for (const auto& [args, option] : experts) {
    const RunResult r = run_phaze("predict --system dgx-h100 " + args);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_NE(r.err.find(option), std::string::npos) << args << ": " << r.err;
  }
  const RunResult dense_plan =
      run_phaze("plan --model gpt3-175b --system dgx-h100 --gpus 64 --global-batch 64 --ep 1,2");
  EXPECT_EQ(dense_plan.status, 2);
  EXPECT_NE(dense_plan.err.find("--ep"), std::string::npos) << dense_plan.err;
  // An accelerator system has no FP8 tensor cores and no GPU to fit.
  const RunResult accelerator =
      run_phaze("predict --model gpt3-175b --system tpuv4-pod --devices 64 --global-batch 64 --tp 8 --fp8");
  EXPECT_EQ(accelerator.status, 2);
  EXPECT_NE(accelerator.err.find("--fp8"), std::string::npos) << accelerator.err;
}

// A published-runs file: every run priced or left out with its reason; --fit writes a system that predict
// reads back, with the fitted figures.
TEST(CliGpu, ValidatePublishedRunsAndWriteTheFittedSystem) {
  TempDir dir;
  dir.write("runs.json", R"({"system": "dgx-h100", "runs": [
    {"label": "a", "model": "llama2-7b", "gpus": 8, "global_batch": 64, "tokens_per_s_per_gpu": 3000},
    {"label": "b", "model": "llama2-7b", "gpus": 16, "tp": 2, "global_batch": 64, "iteration_s": 20},
    {"label": "c", "model": "llama2-7b", "gpus": 16, "cp": 2, "global_batch": 64, "iteration_s": 20}]})");
  const RunResult r = run_phaze("validate " + quoted(dir.file("runs.json")) + " --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j.at("priced").get<int>(), 3);
  EXPECT_EQ(j.at("runs")[2].at("prediction").at("plan").at("cp").get<int>(), 2);
  const RunResult fit = run_phaze("validate " + quoted(dir.file("runs.json")) + " --fit --write-system " +
                                  quoted(dir.file("fitted.json")) + " --json");
  ASSERT_EQ(fit.status, 0) << fit.err;
  EXPECT_LT(json::parse(fit.out).at("mean_abs_error").get<double>(), j.at("mean_abs_error").get<double>());
  const RunResult again = run_phaze("predict --model llama2-7b --system " + quoted(dir.file("fitted.json")) +
                                    " --tp 1 --pp 1 --dp 8 --global-batch 64 --json");
  ASSERT_EQ(again.status, 0) << again.err;
}

// Megatron-LM's own command line after --: the same prediction as phaze's options for the same run, the
// flags phaze does not model listed on stderr, and no mixing of the two.
TEST(CliGpu, PredictReadsMegatronLmArguments) {
  const std::string args =
      " -- --num-layers 24 --hidden-size 2048 --num-attention-heads 16 --seq-length 2048 "
      "--max-position-embeddings 2048 --micro-batch-size 4 --global-batch-size 64 "
      "--tensor-model-parallel-size 2 --sequence-parallel --use-distributed-optimizer --bf16 "
      "--recompute-granularity full --recompute-method uniform --lr 1e-4";
  const RunResult megatron = run_phaze("predict --system dgx-h100 --gpus 8 --json" + args);
  ASSERT_EQ(megatron.status, 0) << megatron.err;
  EXPECT_NE(megatron.err.find("--lr 1e-4"), std::string::npos) << megatron.err;
  EXPECT_NE(megatron.err.find("--recompute-method uniform"), std::string::npos) << megatron.err;
  EXPECT_NE(megatron.err.find("assumed vocabulary 50257"), std::string::npos) << megatron.err;
  TempDir dir;
  dir.write("gpt.json", R"({"model_type": "gpt2", "n_layer": 24, "n_embd": 2048, "n_head": 16, "n_positions": 2048,
    "vocab_size": 50257})");
  const RunResult options = run_phaze("predict --model " + quoted(dir.file("gpt.json")) +
                                      " --system dgx-h100 --tp 2 --dp 4 --mbs 4 --global-batch 64 --sequence-parallel "
                                      "--distributed-optimizer --recompute full --no-cross-entropy-loss-fusion --json");
  ASSERT_EQ(options.status, 0) << options.err;
  EXPECT_NEAR(json::parse(megatron.out).at("iteration_time_s").get<double>() /
                  json::parse(options.out).at("iteration_time_s").get<double>(),
              1, 0.02);
  const RunResult both = run_phaze("predict --system dgx-h100 --tp 2" + args);
  EXPECT_EQ(both.status, 2);
  EXPECT_NE(both.err.find("not both"), std::string::npos) << both.err;
}

// validate --kernels end to end, and the option combinations that would do nothing exit 2 naming them.
TEST(CliGpu, ValidateKernelsAndItsOptions) {
  const std::string kernels =
      quoted(std::string(PHAZE_GPU_MEASUREMENTS) + "/h100-sxm/kernels.csv") + " --kernels --system dgx-h100";
  const RunResult r = run_phaze("validate " + kernels + " --json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(json::parse(r.out).at("classes").size(), 5u);
  const std::pair<std::string, std::string> cases[] = {
      {"validate " + kernels + " --attention-backend cuDNN", "--attention-backend"},
      {"validate " + kernels + " --write-system x.json", "--write-system"},
      {"validate " + quoted(std::string(PHAZE_TEST_DATA) + "/published/llama3_405b_table4.json") + " --system dgx-h200",
       "--system"}};
  for (const auto& [args, option] : cases) {
    const RunResult bad = run_phaze(args);
    EXPECT_EQ(bad.status, 2) << args;
    EXPECT_NE(bad.err.find(option), std::string::npos) << bad.err;
  }
}

TEST(CliGpu, PlanReturnsFittingConfigurationsFastestFirst) {
  const RunResult r =
      run_phaze("plan --model megatron-gpt2-54 --system dgx-a100-40gb --gpus 64 --global-batch 512 --top 3 --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = json::parse(r.out);
  ASSERT_EQ(j.at("best").size(), 3u);
  EXPECT_GT(j.at("evaluated").get<int64_t>(), j.at("fitting").get<int64_t>());
  double previous = 0;
  for (const json& p : j.at("best")) {
    EXPECT_TRUE(p.at("fits").get<bool>());
    EXPECT_EQ(p.at("plan").at("gpus").get<int64_t>(), 64);
    EXPECT_GE(p.at("iteration_time_s").get<double>(), previous);
    previous = p.at("iteration_time_s").get<double>();
  }
  // FP8 is tried only with BF16: FP16 on an H100 searches FP16 plans alone.
  const RunResult fp16 = run_phaze("plan --model llama2-7b --system dgx-h100 --gpus 8 --global-batch 64 --fp16 --json");
  ASSERT_EQ(fp16.status, 0) << fp16.err;
  EXPECT_EQ(json::parse(fp16.out).at("best")[0].at("plan").at("precision").get<std::string>(), "fp16");
  // Without c = 1 among the widths tried, nothing says the sequence needs context parallelism.
  const RunResult widths =
      run_phaze("plan --model llama2-7b --system dgx-h100 --gpus 8 --global-batch 64 --cp 2,4 --json");
  ASSERT_EQ(widths.status, 0) << widths.err;
  EXPECT_FALSE(json::parse(widths.out).at("fits_only_with_context_parallelism").get<bool>());
  const RunResult none = run_phaze("plan --model gpt3-175b --system dgx-a100-40gb --gpus 1 --global-batch 8");
  EXPECT_EQ(none.status, 0) << none.err;
  EXPECT_NE(none.out.find("no configuration fits"), std::string::npos) << none.out;
}

TEST(CliGpu, ValidatePrintsEveryRunAndTheErrors) {
  const RunResult r =
      run_phaze("validate " + quoted(std::string(PHAZE_TEST_DATA) + "/vtrain/ground_truth_multi.csv") + " --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j.at("runs").size(), 109u);
  EXPECT_LT(j.at("mean_abs_error").get<double>(), 0.08);
  TempDir dir;
  dir.write("bad.csv", "# GPUs,colour\n");
  const RunResult bad = run_phaze("validate " + quoted(dir.file("bad.csv")));
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("unknown column 'colour'"), std::string::npos) << bad.err;
}

TEST(CliGpu, GpuSystemFromAFile) {
  TempDir dir;
  dir.write("sys.json", R"({"name": "mine", "device": {"kind": "gpu", "base": "h100-sxm", "hbm_gib": 94},
    "network": [{"name": "nvlink", "members": 4, "bandwidth": 4.5e11}, {"name": "ib", "members": 0,
    "bandwidth": 5e10}]})");
  const RunResult show = run_phaze("system show " + quoted(dir.file("sys.json")) + " --json");
  ASSERT_EQ(show.status, 0) << show.err;
  const json j = json::parse(show.out);
  EXPECT_EQ(j.at("device").at("hbm_bytes").get<int64_t>(), int64_t{94} << 30);
  EXPECT_EQ(j.at("device").at("sms").get<int64_t>(), 132);
  dir.write("bad.json", R"({"device": {"kind": "gpu", "sms": 0}, "network": [{"name": "x", "members": 0,
    "bandwidth": 1}]})");
  const RunResult bad = run_phaze("system show " + quoted(dir.file("bad.json")));
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("sms"), std::string::npos) << bad.err;
  dir.write("era.json", R"({"device": {"kind": "gpu", "generation": 9}, "network": [{"name": "x", "members": 0,
    "bandwidth": 1}]})");
  const RunResult era = run_phaze("system show " + quoted(dir.file("era.json")));
  EXPECT_EQ(era.status, 2);
  EXPECT_NE(era.err.find("generation"), std::string::npos) << era.err;
}

}  // namespace

namespace {

// `plan` with settings pinned: its list is the unpinned list's plans with those settings, in the same order
// (brute force: every fitting configuration of a small run listed, then filtered).
TEST(CliGpu, PinnedPlanSettingsFilterTheFullList) {
  const std::string model = std::string(PHAZE_TEST_DATA) + "/hf/tiny-llama/config.json";
  const std::string run =
      "plan --model " + quoted(model) + " --system dgx-h100 --gpus 4 --global-batch 8 --json --all-variants";
  const RunResult all = run_phaze(run + " --top 1000");
  ASSERT_EQ(all.status, 0) << all.err;
  const json every = json::parse(all.out);
  ASSERT_LT(every["best"].size(), 1000u);  // the whole list
  ASSERT_EQ(every["best"].size(), every["fitting"].get<size_t>());
  const RunResult pinned = run_phaze(run + " --top 5 --tp 2 --mbs 2 --recompute none,full");
  ASSERT_EQ(pinned.status, 0) << pinned.err;
  std::vector<json> expected;
  for (const json& p : every["best"])
    if (p["plan"]["tp"] == 2 && p["plan"]["micro_batch"] == 2 && p["plan"]["recompute"] != "selective" &&
        expected.size() < 5)
      expected.push_back(p);
  const json got = json::parse(pinned.out)["best"];
  ASSERT_EQ(got.size(), expected.size());
  ASSERT_FALSE(expected.empty());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(got[i], expected[i]) << i;
  const RunResult bad = run_phaze(run + " --recompute some");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--recompute"), std::string::npos) << bad.err;
}

// predict derives d from --gpus as Megatron-LM derives it from the world size.
TEST(CliGpu, PredictDerivesDataParallelFromTheGpus) {
  const std::string run = "predict --model llama2-7b --system dgx-h100 --tp 2 --pp 2 --global-batch 64 --json";
  const RunResult derived = run_phaze(run + " --gpus 16");
  const RunResult given = run_phaze(run + " --dp 4");
  ASSERT_EQ(derived.status, 0) << derived.err;
  EXPECT_EQ(derived.out, given.out);
  const RunResult bad = run_phaze(run + " --gpus 10");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--gpus = 10 is not a multiple of --tp 2 × --cp 1 × --pp 2 = 4"), std::string::npos)
      << bad.err;
}

}  // namespace

namespace {

json plan_json(const std::string& args) {
  const RunResult r = run_phaze("plan " + args + " --json");
  EXPECT_EQ(r.status, 0) << r.err;
  return json::parse(r.out);
}

// With nothing to offer, plan says which constraint failed and what would give a configuration; each claim
// is checked by running plan on what it proposes, and on every GPU count it passed over.
TEST(CliGpu, NoPlanSaysWhyAndWhatWouldFit) {
  // The batch: 7 sequences on 3 GPUs (d = 3 the only degree the heads and layers leave).
  json a = plan_json("--model llama2-7b --system dgx-h100 --gpus 3 --global-batch 7");
  ASSERT_TRUE(a["best"].empty());
  EXPECT_NE(a["no_plan"]["constraints"][0].get<std::string>().find("batch: the global batch 7"), std::string::npos);
  EXPECT_EQ(a["no_plan"]["nearest_global_batch"], 6);
  EXPECT_FALSE(plan_json("--model llama2-7b --system dgx-h100 --gpus 3 --global-batch 6")["best"].empty());
  EXPECT_EQ(a["no_plan"]["least_gpus"], 4);
  EXPECT_FALSE(plan_json("--model llama2-7b --system dgx-h100 --gpus 4 --global-batch 7")["best"].empty());

  // Memory: GPT-3 175B on 8 H100s; every multiple of 8 and power of two below the answer fits nothing.
  a = plan_json("--model gpt3-175b --system dgx-h100 --gpus 8 --global-batch 64");
  ASSERT_TRUE(a["best"].empty());
  EXPECT_NE(a["no_plan"]["constraints"][0].get<std::string>().find("memory: the configuration that needs least"),
            std::string::npos);
  EXPECT_GT(a["no_plan"]["least_memory"]["memory"]["peak_bytes"].get<double>(),
            a["no_plan"]["least_memory"]["memory"]["capacity_bytes"].get<double>());
  const int64_t least = a["no_plan"]["least_gpus"];
  for (int64_t g = 16; g < least; g += 8)
    EXPECT_TRUE(
        plan_json(fmt::format("--model gpt3-175b --system dgx-h100 --gpus {} --global-batch 64", g))["best"].empty())
        << g;
  EXPECT_FALSE(
      plan_json(fmt::format("--model gpt3-175b --system dgx-h100 --gpus {} --global-batch 64", least))["best"].empty());

  // Pins: without them, the unpinned plan's best.
  a = plan_json(
      "--model llama2-7b --system dgx-h100 --gpus 8 --global-batch 64 --zero 0 --recompute none --tp 1 --pp 1");
  ASSERT_TRUE(a["best"].empty());
  const json free = plan_json("--model llama2-7b --system dgx-h100 --gpus 8 --global-batch 64 --top 1");
  EXPECT_EQ(a["no_plan"]["without_pins"], free["best"][0]);
}

}  // namespace

namespace {

// --rank-of: the pinned configuration's rank is one more than the configurations of the full list that are
// strictly faster (brute force over every fitting configuration of a small run).
TEST(CliGpu, RankOfCountsTheFasterConfigurations) {
  const std::string model = std::string(PHAZE_TEST_DATA) + "/hf/tiny-llama/config.json";
  const std::string run =
      "plan --model " + quoted(model) + " --system dgx-h100 --gpus 4 --global-batch 8 --json --all-variants";
  const json every = json::parse(run_phaze(run + " --top 1000").out);
  const RunResult ranked = run_phaze(run + " --top 3 --tp 2 --pp 2 --recompute full --rank-of");
  ASSERT_EQ(ranked.status, 0) << ranked.err;
  const json r = json::parse(ranked.out);
  const double own = r["rank_of"]["configuration"]["iteration_time_s"];
  int64_t faster = 0;
  for (const json& p : every["best"]) faster += p["iteration_time_s"].get<double>() < own ? 1 : 0;
  EXPECT_EQ(r["rank_of"]["rank"], faster + 1);
  EXPECT_EQ(r["rank_of"]["fitting"], every["fitting"]);
  EXPECT_EQ(r["rank_of"]["configuration"]["plan"]["tp"], 2);
  // The list is the unpinned one.
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(r["best"][i], every["best"][i]);
}

}  // namespace

namespace {

// The default list holds the fastest variant of each layout: it is the list of every variant with each
// layout's later (slower) variants dropped.
TEST(CliGpu, PlansListedAreDistinctLayouts) {
  const std::string model = std::string(PHAZE_TEST_DATA) + "/hf/tiny-llama/config.json";
  const std::string run = "plan --model " + quoted(model) + " --system dgx-h100 --gpus 4 --global-batch 8 --json";
  const json every = json::parse(run_phaze(run + " --top 1000 --all-variants").out);
  const json distinct = json::parse(run_phaze(run + " --top 10").out);
  std::vector<json> expected;
  std::vector<std::string> layouts;
  for (const json& p : every["best"]) {
    const json& q = p["plan"];
    const std::string layout =
        fmt::format("{} {} {} {} {} {} {} {}", q["tp"].dump(), q["cp"].dump(), q["pp"].dump(), q["dp"].dump(),
                    q["ep"].dump(), q["etp"].dump(), q["micro_batch"].dump(), q["vp"].dump());
    if (std::find(layouts.begin(), layouts.end(), layout) != layouts.end()) continue;
    layouts.push_back(layout);
    if (expected.size() < 10) expected.push_back(p);
  }
  ASSERT_EQ(distinct["best"].size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(distinct["best"][i], expected[i]) << i;
}

}  // namespace

namespace {

// A global batch in tokens is that many sequences of the run's length; one that is no multiple is refused
// with the nearest ones.
TEST(CliGpu, GlobalBatchInTokens) {
  const std::string plan = "plan --model llama2-7b --system dgx-h100 --gpus 64 --top 2 --json";
  EXPECT_EQ(run_phaze(plan + " --global-batch-tokens 2097152").out, run_phaze(plan + " --global-batch 512").out);
  const std::string predict = "predict --model llama2-7b --system dgx-h100 --tp 2 --gpus 8 --json --seq 2048";
  EXPECT_EQ(run_phaze(predict + " --global-batch-tokens 131072").out, run_phaze(predict + " --global-batch 64").out);
  RunResult bad = run_phaze(plan + " --global-batch-tokens 2000000");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("not a multiple of the sequence length 4096 (nearest: 1998848 or 2002944 tokens"),
            std::string::npos)
      << bad.err;
  bad = run_phaze(plan + " --global-batch 512 --global-batch-tokens 2097152");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("one of them"), std::string::npos) << bad.err;
}

}  // namespace
