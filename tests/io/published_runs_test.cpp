// Published runs as JSON: fields, defaults, runs left out with their reason, and errors naming the file,
// the run and the field.

#include "io/published_runs.h"

#include <gtest/gtest.h>

#include "support/temp_dir.h"
#include "util/input_error.h"

namespace {

using phaze::io::read_published_runs;

std::string one_run(const std::string& fields) {
  return R"({"system": "dgx-h100", "runs": [{"label": "r", "model": "llama2-7b", "gpus": 16, "global_batch": 64)" +
         (fields.empty() ? "" : ", " + fields) + "}]}";
}

TEST(PublishedRuns, ReadsGivenAndFreeSettings) {
  phaze_test::TempDir dir;
  dir.write("runs.json", one_run(R"("tp": 2, "pp": 2, "mbs": 1, "sequence_parallel": true,
      "tflops_per_gpu": 400, "flop_count": "narayanan")"));
  const auto runs = read_published_runs(dir.file("runs.json"));
  ASSERT_EQ(runs.size(), 1u);
  const auto& r = runs[0];
  EXPECT_EQ(r.plan.dp, 4);  // 16 / (2 · 2)
  EXPECT_EQ(r.plan.seq, 4096);
  EXPECT_FALSE(r.free_micro_batch);
  EXPECT_TRUE(r.free_interleaving);
  EXPECT_TRUE(r.free_recompute);
  EXPECT_TRUE(r.plan.bf16);
  EXPECT_TRUE(r.plan.flash_attention);
  EXPECT_EQ(r.metric, phaze::megatron::PublishedMetric::TflopsPerGpu);
  EXPECT_EQ(r.flop_count, phaze::megatron::FlopCount::Narayanan);
}

TEST(PublishedRuns, ContextParallelFp8AndZeroSettingsAreRead) {
  phaze_test::TempDir dir;
  dir.write("run.json", one_run(R"("cp": 2, "precision": "fp8", "fp8_recipe": "tensorwise", "zero": 3,
                                   "cp_comm_type": "all_gather", "iteration_s": 3)"));
  const auto plan = read_published_runs(dir.file("run.json"))[0].plan;
  EXPECT_EQ(plan.cp, 2);
  EXPECT_TRUE(plan.fp8 && plan.bf16);
  EXPECT_EQ(plan.fp8_recipe, phaze::megatron::Fp8Recipe::Tensorwise);
  EXPECT_EQ(plan.zero, 3);
  EXPECT_EQ(plan.cp_comm, phaze::megatron::CpComm::AllGather);
  // The loss is fused and attention the GPU's own fused kernel unless a run says otherwise.
  EXPECT_FALSE(plan.unfused_loss);
  EXPECT_EQ(plan.attention_library, phaze::hw::AttentionLibrary::Fused);
  dir.write("flash.json",
            one_run(R"("attention_backend": "flash", "cross_entropy_loss_fusion": false, "iteration_s": 3)"));
  const auto flash = read_published_runs(dir.file("flash.json"))[0].plan;
  EXPECT_TRUE(flash.flash_attention && flash.unfused_loss);
  EXPECT_EQ(flash.attention_library, phaze::hw::AttentionLibrary::Flash2);
}

TEST(PublishedRuns, TokenDroppingAndRoutingImbalanceAreRead) {
  phaze_test::TempDir dir;
  dir.write("drop.json", R"({"system": "dgx-h100", "runs": [{"model": "mixtral-8x7b", "gpus": 8, "global_batch": 64,
      "ep": 8, "moe_expert_capacity_factor": 1.0, "moe_pad_expert_input_to_capacity": true,
      "moe_load_imbalance": 1.2, "iteration_s": 3}]})");
  const auto plan = read_published_runs(dir.file("drop.json"))[0].plan;
  EXPECT_EQ(plan.moe_capacity_factor, 1.0);
  EXPECT_TRUE(plan.moe_pad_to_capacity);
  EXPECT_EQ(plan.moe_load_imbalance, 1.2);
  EXPECT_EQ(plan.expert_load(), 1.0);
  // A pipeline layout sets the chunks per stage where the run does not.
  dir.write("layout.json", one_run(R"("pp": 4, "pipeline_model_parallel_layout": "Et*4|(t*4|)*6t*4L",
                                      "iteration_s": 3)"));
  const auto laid = read_published_runs(dir.file("layout.json"))[0];
  EXPECT_EQ(laid.plan.vp, 2);
  EXPECT_FALSE(laid.free_interleaving);
}

TEST(PublishedRuns, BadFieldsNameTheRunAndTheField) {
  phaze_test::TempDir dir;
  const std::pair<std::string, std::string> cases[] = {
      {one_run(R"("tflops_per_gpu": 400)"), "flop_count"},
      {one_run(R"("iteration_s": 3, "tokens_per_s_per_gpu": 9)"), "exactly one of"},
      {one_run(""), "exactly one of"},
      {one_run(R"("tp": 3, "iteration_s": 3)"), "gpus"},
      {one_run(R"("dp": 3, "iteration_s": 3)"), "dp"},
      {one_run(R"("precision": "fp4", "iteration_s": 3)"), "precision"},
      {one_run(R"("sequence_parallel": "yes", "iteration_s": 3)"), "sequence_parallel"},
      {one_run(R"("recompute": "some", "iteration_s": 3)"), "recompute"},
      {one_run(R"("colour": "red", "iteration_s": 3)"), "colour"},
      {one_run(R"("iteration_s": -3)"), "iteration_s"},
      {one_run(R"("distributed_optimizer": true, "zero": 0, "iteration_s": 3)"), "zero"},
      {one_run(R"("zero": 4, "iteration_s": 3)"), "zero"},
      {one_run(R"("cp": 2, "cp_comm_type": "ring", "iteration_s": 3)"), "cp_comm_type"},
      {one_run(R"("precision": "fp8", "fp8_recipe": "mxfp8", "iteration_s": 3)"), "fp8_recipe"},
      {one_run(R"("attention_backend": "xformers", "iteration_s": 3)"), "attention_backend"},
      {one_run(R"("attention_backend": "flash", "flash_attention": true, "iteration_s": 3)"), "attention_backend"},
      {one_run(R"("cross_entropy_loss_fusion": "no", "iteration_s": 3)"), "cross_entropy_loss_fusion"},
      {one_run(R"("ep": 0, "iteration_s": 3)"), "ep"},
      {one_run(R"("ep": 2, "iteration_s": 3)"), "--ep"},
      {one_run(R"("moe_expert_capacity_factor": 1, "iteration_s": 3)"), "--moe-expert-capacity-factor"},
      {one_run(R"("moe_load_imbalance": 0.5, "iteration_s": 3)"), "moe_load_imbalance"},
      {one_run(R"("pp": 4, "pipeline_model_parallel_layout": "Et*4|t*4L", "iteration_s": 3)"),
       "--pipeline-model-parallel-layout"},
      {one_run(R"("pipeline_model_parallel_layout": "Ex", "iteration_s": 3)"), "pipeline_model_parallel_layout"},
      {one_run(R"("account_for_loss_in_pipeline_split": true, "pp": 16, "iteration_s": 3)"),
       "--account-for-loss-in-pipeline-split"},
      {R"({"runs": []})", "runs"},
      {R"({"system": "dgx-h100"})", "runs"},
      {R"({"system": "dgx-h100", "runs": [{"model": "no-such-model", "gpus": 8, "global_batch": 8,
          "iteration_s": 3}]})",
       "runs[0]: model"}};
  for (const auto& [text, field] : cases) {
    dir.write("bad.json", text);
    try {
      read_published_runs(dir.file("bad.json"));
      FAIL() << "accepted " << text;
    } catch (const phaze::InputError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("bad.json"), std::string::npos) << what;
      EXPECT_NE(what.find(field), std::string::npos) << what;
    }
  }
}

}  // namespace
