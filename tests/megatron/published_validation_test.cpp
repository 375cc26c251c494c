// phaze against published training runs (tests/data/published, each file citing its source). None of
// these runs chooses a figure or a formula: they are validation only, and the bounds below are the errors
// as they came out when the files were added, so that a change that makes any set worse fails here
// (docs/gpu.md, "Published runs", has the tables).

#include "megatron/published_validation.h"

#include <gtest/gtest.h>

#include <string>

#include "io/published_runs.h"

namespace {

const std::string kData = std::string(PHAZE_TEST_DATA) + "/published/";

phaze::megatron::PublishedValidation check(const std::string& file) {
  return phaze::megatron::check_published_runs(phaze::io::read_published_runs(kData + file));
}

TEST(PublishedValidation, NarayananTableOneOnA100) {
  const auto v = check("narayanan_sc21_table1.json");
  EXPECT_EQ(v.priced, 10u);
  EXPECT_LE(v.mean_abs_error, 0.1001);  // came out at 10.00 %, every run faster than published
  EXPECT_LE(v.max_abs_error, 0.161);
}

TEST(PublishedValidation, MegatronLmWeakScalingOnH100) {
  const auto v = check("megatron_lm_h100_weak_scaling.json");
  EXPECT_EQ(v.priced, 9u);
  EXPECT_LE(v.mean_abs_error, 0.3385);  // came out at 33.82 %: Hopper's figures know kernels, not the framework
  EXPECT_LE(v.max_abs_error, 0.603);
}

TEST(PublishedValidation, Llama3TableFourOnH100) {
  const auto v = check("llama3_405b_table4.json");
  EXPECT_EQ(v.priced, 2u);  // the 131,072-token run needs context parallelism
  EXPECT_LE(v.mean_abs_error, 0.209);
  EXPECT_LE(v.max_abs_error, 0.291);
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
