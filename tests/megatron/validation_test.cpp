// phaze's error on vTrain's measured A100 runs. The GPU's three software figures were fitted on the
// single-node file only; the multi-node file is validation. The bounds are the errors reached when the
// figures were fitted: a change that makes either prediction worse fails here.

#include "megatron/validation.h"

#include <gtest/gtest.h>

#include <string>

#include "io/measured_runs.h"

namespace {

const std::string kData = std::string(PHAZE_TEST_DATA) + "/vtrain/";

TEST(Validation, MultiNodeRunsWithinTheReachedError) {
  const auto runs = phaze::io::read_measured_runs(kData + "ground_truth_multi.csv");
  const auto v = phaze::megatron::check_runs(runs, phaze::hw::vtrain_a100_system());
  EXPECT_LE(v.mean_abs_error, 0.0765);  // reached: 7.64 %; vTrain's own simulator: 14.7 %
  EXPECT_LE(v.max_abs_error, 0.48);
}

TEST(Validation, SingleNodeRunsWithinTheReachedError) {
  const auto runs = phaze::io::read_measured_runs(kData + "ground_truth_single.csv");
  const auto v = phaze::megatron::check_runs(runs, phaze::hw::vtrain_a100_system());
  EXPECT_LE(v.mean_abs_error, 0.0667);  // reached: 6.66 %; vTrain's own simulator: 8.37 %
  EXPECT_LE(v.max_abs_error, 0.31);
}

TEST(Validation, FitDoesNotMoveTheFittedFigures) {
  // The preset's figures are a fixed point of the fit on the single-node file: the fit reproduces them.
  const auto runs = phaze::io::read_measured_runs(kData + "ground_truth_single.csv");
  const phaze::hw::System system = phaze::hw::vtrain_a100_system();
  const phaze::hw::System fitted = phaze::megatron::fit_gpu_software(runs, system);
  EXPECT_EQ(phaze::hw::gpu_of(fitted), phaze::hw::gpu_of(system));
}

TEST(Validation, PublishedMegatronRunsOnSelene) {
  // Korthikanti et al. 2022, Table 5: full recomputation, and sequence parallelism with selective
  // recomputation, 8 to 512 A100s, interleaved pipelines. Validation only; reached: 4.02 % mean, 7.9 % largest.
  const auto runs = phaze::io::read_measured_runs(PHAZE_TEST_DATA "/megatron/korthikanti_table5.csv");
  ASSERT_EQ(runs.size(), 8u);
  const auto v = phaze::megatron::check_runs(runs, phaze::hw::dgx_a100_system(true));
  EXPECT_LE(v.mean_abs_error, 0.0403);
  EXPECT_LE(v.max_abs_error, 0.08);
  // The features' speed-up, measured 1.29 (22B) to 1.32 (1T): phaze's within 0.1 of each.
  for (size_t i = 0; i < runs.size(); i += 2) {
    const double measured = runs[i].iteration_s / runs[i + 1].iteration_s;
    const double predicted = v.runs[i].predicted_s / v.runs[i + 1].predicted_s;
    EXPECT_NEAR(predicted, measured, 0.1) << runs[i].label;
  }
}

}  // namespace
