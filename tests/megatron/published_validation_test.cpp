// phaze against published training runs (tests/data/published, each file citing its source). None of
// these runs chooses a figure or a formula: they are validation only, and the bounds below are the errors
// as they came out when the files were added, so that a change that makes any set worse fails here
// (docs/gpu.md, "Published runs", has the tables).

#include "megatron/published_validation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "io/published_runs.h"

namespace {

const std::string kData = std::string(PHAZE_TEST_DATA) + "/published/";

phaze::megatron::PublishedValidation check(const std::string& file) {
  return phaze::megatron::check_published_runs(phaze::io::read_published_runs(kData + file));
}

TEST(PublishedValidation, NarayananTableOneOnA100) {
  const auto v = check("narayanan_sc21_table1.json");
  EXPECT_EQ(v.priced, 10u);
  // Came out at 10.00 %, 9.60 % with Megatron-LM's unfused FP32 loss as these runs had it; every run faster
  // than published.
  EXPECT_LE(v.mean_abs_error, 0.0961);
  EXPECT_LE(v.max_abs_error, 0.160);
}

TEST(PublishedValidation, MegatronLmWeakScalingOnH100) {
  const auto v = check("megatron_lm_h100_weak_scaling.json");
  EXPECT_EQ(v.priced, 9u);
  // 16.89 % with Hopper's sustained clock share (33.82 % without); 14.76 % with Megatron-LM's unfused FP32
  // loss, which these runs had (the 1.7B model, whose 131,072-word vocabulary dwarfs its layers, +38.9 % to
  // +26.7 %).
  EXPECT_LE(v.mean_abs_error, 0.1477);
  EXPECT_LE(v.max_abs_error, 0.268);
}

TEST(PublishedValidation, DgxCloudFp8AndBf16RecipesOnH100) {
  const auto v = check("dgxc_h100_fp8_bf16.json");
  EXPECT_EQ(v.priced, 14u);
  // Came out at 5.21 %, 5.22 % with GPT-3 175B's dropout off as NeMo's GPTConfig175B has it: FP8 runs 7 %
  // slow to 11 % fast, BF16 within 6 %.
  EXPECT_LE(v.mean_abs_error, 0.0523);
  EXPECT_LE(v.max_abs_error, 0.111);
}

TEST(PublishedValidation, MosaicMlFsdpOnH100) {
  // PyTorch FSDP of 2023 with Triton attention. Priced with cuDNN's fused attention, short sequences came out
  // 7-46 % and 32K-token ones 99-142 % too fast (54.45 % mean); with FlashAttention-2, the nearest library
  // measured, 4-40 % and 30-45 % too fast.
  const auto v = check("mosaicml_fsdp_h100.json");
  EXPECT_EQ(v.priced, 16u);
  EXPECT_LE(v.mean_abs_error, 0.2524);
  EXPECT_LE(v.max_abs_error, 0.453);
}

TEST(PublishedValidation, NemoLongContextWithContextParallelismOnH100) {
  // Counted as Megatron-LM counted then (every s x s block), every run comes out 25-59 % too fast.
  const auto v = check("nemo_long_context_h100.json");
  EXPECT_EQ(v.priced, 7u);
  EXPECT_LE(v.mean_abs_error, 0.4512);
  EXPECT_LE(v.max_abs_error, 0.587);
}

// The FP8/BF16 speedup of the same recipe: every pair of runs labelled "... BF16" and "... FP8" in the
// DGX Cloud and MosaicML sets, published against predicted.
TEST(PublishedValidation, Fp8OverBf16SpeedupsOfTheSameRuns) {
  struct Pair {
    double published = 0, predicted = 0;
  };
  std::vector<Pair> pairs;
  for (const char* file : {"dgxc_h100_fp8_bf16.json", "mosaicml_fsdp_h100.json"}) {
    const auto runs = phaze::io::read_published_runs(kData + file);
    const auto v = phaze::megatron::check_published_runs(runs);
    for (size_t i = 0; i + 1 < runs.size(); ++i) {
      const std::string& a = runs[i].label;
      if (a.size() < 5 || a.substr(a.size() - 5) != " BF16" || runs[i + 1].label != a.substr(0, a.size() - 5) + " FP8")
        continue;
      ASSERT_TRUE(runs[i + 1].plan.fp8 && !runs[i].plan.fp8) << a;
      // Seconds per iteration fall with FP8, tokens per second rise.
      const bool seconds = runs[i].metric == phaze::megatron::PublishedMetric::IterationSeconds;
      const auto speedup = [&](double bf16, double fp8) { return seconds ? bf16 / fp8 : fp8 / bf16; };
      pairs.push_back(
          {speedup(runs[i].value, runs[i + 1].value), speedup(v.runs[i].predicted, v.runs[i + 1].predicted)});
    }
  }
  ASSERT_EQ(pairs.size(), 12u);
  double sum = 0, largest = 0;
  for (const Pair& p : pairs) {
    EXPECT_GT(p.predicted, 1);  // FP8 never slows a run down in phaze
    sum += std::abs(p.predicted - p.published);
    largest = std::max(largest, std::abs(p.predicted - p.published));
  }
  // Came out at 0.101 mean and 0.171 largest, 0.083 and 0.139 with MosaicML's runs on FlashAttention-2: phaze's
  // FP8 gains more than most runs did.
  EXPECT_LE(sum / static_cast<double>(pairs.size()), 0.0830);
  EXPECT_LE(largest, 0.1390);
}

TEST(PublishedValidation, Llama3TableFourOnH100) {
  const auto v = check("llama3_405b_table4.json");
  EXPECT_EQ(v.priced, 3u);
  // +2.8 % and +3.8 % at 8,192 tokens (interleaved, the embedding and the loss counted in the split), -23.4 %
  // at 131,072 tokens, where phaze's memory needs full recomputation.
  EXPECT_LE(v.mean_abs_error, 0.1001);
  EXPECT_LE(v.max_abs_error, 0.234);
}

TEST(PublishedValidation, NarayananCountIsEquationThreeOfThePaper) {
  // Eq. 3 for the 1.7B row: 96 · B · s · l · h² · (1 + s/(6h) + V/(16·l·h)) with B 512, s 2048, l 24,
  // h 2304, V 51,200, written out independently of the library.
  const auto runs = phaze::io::read_published_runs(kData + "narayanan_sc21_table1.json");
  const double B = 512, s = 2048, l = 24, h = 2304, V = 51200;
  const double expected = 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
  EXPECT_NEAR(phaze::megatron::narayanan_flops(runs[0].spec, runs[0].plan) / expected, 1, 1e-12);
}

}  // namespace
