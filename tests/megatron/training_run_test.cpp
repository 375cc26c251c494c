// A training run from one iteration: GPT-3's 300 billion tokens (Brown et al. 2020) in global batches of
// 1,536 sequences of 2,048 tokens take ⌈300·10⁹ / 3,145,728⌉ = 95,368 iterations, the last one whole.

#include "megatron/training_run.h"

#include <gtest/gtest.h>

#include <utility>

#include "support/run_phaze.h"

namespace {

TEST(TrainingRun, IterationsRoundUpToWholeGlobalBatches) {
  phaze::megatron::StepPrediction p;
  p.plan.global_batch = 1536;
  p.plan.seq = 2048;
  p.plan.tp = 8;
  p.plan.pp = 8;
  p.plan.dp = 2;
  p.time.iteration_s = 10;
  const auto run = phaze::megatron::training_run(p, 300e9, 2.5);
  EXPECT_EQ(run.tokens_per_iteration, 3145728);
  EXPECT_EQ(run.iterations, 95368);
  EXPECT_DOUBLE_EQ(run.seconds, 953680);
  EXPECT_DOUBLE_EQ(run.gpu_hours, 953680.0 * 128 / 3600);
  ASSERT_TRUE(run.usd.has_value());
  EXPECT_DOUBLE_EQ(*run.usd, 953680.0 * 128 / 3600 * 2.5);
  // Exactly one iteration's tokens: one iteration; one token more: two. No price, no cost.
  EXPECT_EQ(phaze::megatron::training_run(p, 3145728).iterations, 1);
  EXPECT_EQ(phaze::megatron::training_run(p, 3145729).iterations, 2);
  EXPECT_FALSE(phaze::megatron::training_run(p, 1).usd.has_value());
}

TEST(TrainingRun, PredictSaysTheRunAndRefusesBadBudgets) {
  const std::string predict =
      "predict --model gpt3-175b --system dgx-a100-80gb --tp 8 --pp 8 --dp 2 --mbs 1 --global-batch 1536 --gpus 128";
  const auto r = phaze_test::run_phaze(predict + " --json --train-tokens 300e9 --usd-per-device-hour 2");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto out = phaze_test::parse_json(r);
  EXPECT_EQ(out["training_run"]["iterations"], 95368);
  EXPECT_DOUBLE_EQ(out["training_run"]["seconds"].get<double>(), 95368 * out["iteration_time_s"].get<double>());
  EXPECT_DOUBLE_EQ(out["tokens_per_s_per_gpu"].get<double>(), out["tokens_per_s"].get<double>() / 128);
  const std::pair<const char*, const char*> bad[] = {{" --train-tokens 0", "--train-tokens"},
                                                     {" --train-tokens -5", "--train-tokens"},
                                                     {" --train-tokens 2e18", "--train-tokens"},
                                                     {" --train-tokens x", "--train-tokens"},
                                                     {" --usd-per-device-hour 2", "--usd-per-device-hour"},
                                                     {" --train-tokens 1e9 --usd-per-device-hour -1", "--usd-per"}};
  for (const auto& [args, option] : bad) phaze_test::expect_input_error(phaze_test::run_phaze(predict + args), option);
}

TEST(TrainingRun, PlanGivesEachConfigurationItsRun) {
  // Llama 2 7B at 4,096 tokens in batches of 512: 2·10¹² tokens take ⌈2·10¹² / 2,097,152⌉ = 953,675 iterations.
  const auto r = phaze_test::run_phaze(
      "plan --model llama2-7b --system dgx-h100 --gpus 64 --global-batch 512 --top 2 --json --train-tokens 2e12 "
      "--usd-per-device-hour 2.5");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto out = phaze_test::parse_json(r);
  ASSERT_EQ(out["best"].size(), 2u);
  for (const auto& best : out["best"]) {
    const auto& run = best["training_run"];
    EXPECT_EQ(run["iterations"], 953675);
    EXPECT_DOUBLE_EQ(run["seconds"].get<double>(), 953675 * best["iteration_time_s"].get<double>());
    EXPECT_DOUBLE_EQ(run["usd"].get<double>(), run["seconds"].get<double>() * 64 / 3600 * 2.5);
  }
}

}  // namespace
