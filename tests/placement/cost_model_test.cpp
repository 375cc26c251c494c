// The placement cost model on its own: the time per batch (batch_time.h) and the stage memory rule
// (stage_memory.h) against hand-worked closed forms of placement.md and method.md D22/D3, and against
// independent transcriptions and brute force on random inputs; and the planners' choice of time model.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>

#include "placement/batch_time.h"
#include "placement/chain.h"
#include "placement/corrected_planner.h"
#include "placement/planner.h"
#include "placement/reference_planner.h"
#include "placement/stage_memory.h"
#include "placement/test_clusters.h"

namespace {

using phaze::placement::BatchTime;
using phaze::placement::BatchTimeModel;
using phaze::placement::Chain;
using phaze::placement::ChainNode;
using phaze::placement::Cluster;
using phaze::placement::CorrectedPlanner;
using phaze::placement::max_in_flight;
using phaze::placement::Optimizer;
using phaze::placement::PipelineShape;
using phaze::placement::ReferencePlanner;
using phaze::placement::stage_memory_bytes;
using phaze::placement::StageFootprint;
using phaze::placement::testing::cluster;
using phaze::placement::testing::with_corrected;

// placement.md's formula, one stage of load 9 on d = 4 replicas, N = 8, first stage 30 bytes, bandwidth 10:
// 9·(⌈8/4⌉ + 1 − 1) + 4·3·30/(10·4) = 18 + 9 = 27. The largest stage's bytes do not enter it.
TEST(PlacementBatchTime, ReferenceOneStageFourReplicas) {
  const BatchTime t =
      BatchTimeModel(cluster(4, 8, 100, 10), 4, /*replica_devices=*/1).batch_time(PipelineShape{9, 1, 30, 1e9});
  EXPECT_DOUBLE_EQ(t.total, 27.0);
  EXPECT_DOUBLE_EQ(t.parts.steady_state, 18.0);
  EXPECT_DOUBLE_EQ(t.parts.fill_drain, 0.0);
  EXPECT_DOUBLE_EQ(t.parts.data_parallel_sync, 9.0);
  EXPECT_DOUBLE_EQ(t.parts.optimizer_step, 0.0);
}

// Two stages, largest load 7, d = 2, N = 8, first stage 10 bytes, bandwidth 10:
// 7·(4 + 2 − 1) + 4·1·10/(10·2) = 35 + 2 = 37, of which 7·4 = 28 steady state and 7·1 filling and draining.
TEST(PlacementBatchTime, ReferenceTwoStagesTwoReplicas) {
  const BatchTime t =
      BatchTimeModel(cluster(4, 8, 100, 10), 2, /*replica_devices=*/1).batch_time(PipelineShape{7, 2, 10, 0});
  EXPECT_DOUBLE_EQ(t.total, 37.0);
  EXPECT_DOUBLE_EQ(t.parts.steady_state, 28.0);
  EXPECT_DOUBLE_EQ(t.parts.fill_drain, 7.0);
  EXPECT_DOUBLE_EQ(t.parts.data_parallel_sync, 2.0);
}

// The corrected terms, two stages of load 2 and 8 bytes each, d = 2, N = 8, α = 0.25 s:
// 2·(4 + 1) + 2·(1/2)·8/4 + 2·1·0.25 = 10 + 2 + 0.5 = 12.5 on 4 B/s data-parallel links; on the common
// bandwidth 2 (sync_bandwidth 0) the all-reduce takes 4 + 0.5. The first stage's bytes do not enter it.
TEST(PlacementBatchTime, CorrectedRingAllReduce) {
  const Cluster base = cluster(4, 8, 1000, 2);
  const BatchTime t = BatchTimeModel(with_corrected(base, 0.25, 4, 0), 2, /*replica_devices=*/1)
                          .batch_time(PipelineShape{2, 2, 1e9, 8});
  EXPECT_DOUBLE_EQ(t.total, 12.5);
  EXPECT_DOUBLE_EQ(t.parts.steady_state, 8.0);
  EXPECT_DOUBLE_EQ(t.parts.fill_drain, 2.0);
  EXPECT_DOUBLE_EQ(t.parts.data_parallel_sync, 2.5);
  EXPECT_DOUBLE_EQ(t.parts.optimizer_step, 0.0);

  const BatchTime common = BatchTimeModel(with_corrected(base, 0.25, 0, 0), 2, /*replica_devices=*/1)
                               .batch_time(PipelineShape{2, 2, 1e9, 8});
  EXPECT_DOUBLE_EQ(common.total, 14.5);
  EXPECT_DOUBLE_EQ(common.parts.data_parallel_sync, 4.5);
}

// The optimizer step charges the largest stage once per iteration, with or without replicas: d = 1,
// 20 bytes at 1 s per byte, load 8 over N = 4 in 2 stages: 8·5 + 20 = 60 (no synchronisation with d = 1).
TEST(PlacementBatchTime, CorrectedOptimizerStep) {
  const BatchTime t = BatchTimeModel(with_corrected(cluster(2, 4, 1000, 1), 0, 0, 1.0), 1, /*replica_devices=*/1)
                          .batch_time(PipelineShape{8, 2, 0, 20});
  EXPECT_DOUBLE_EQ(t.total, 60.0);
  EXPECT_DOUBLE_EQ(t.parts.data_parallel_sync, 0.0);
  EXPECT_DOUBLE_EQ(t.parts.optimizer_step, 20.0);
}

// Random shapes against the formulas written out here: the total and its parts agree with them, and the
// parts add up to the total (up to rounding).
TEST(PlacementBatchTime, MatchesTheFormulasOnRandomShapes) {
  std::mt19937 rng(8128u);
  std::uniform_real_distribution<double> real(0.1, 100.0);
  std::uniform_int_distribution<int64_t> count(1, 64);
  for (int k = 0; k < 2000; ++k) {
    const PipelineShape s{real(rng), count(rng), real(rng) * 1e6, real(rng) * 1e6};
    const int64_t data_parallel = count(rng);
    Cluster c = cluster(4096, count(rng) * 4, 1e12, real(rng) * 1e3);
    const double d = static_cast<double>(data_parallel);
    const double slots = std::ceil(static_cast<double>(c.micro_batches) / d) + static_cast<double>(s.stages) - 1;
    double want = s.max_stage_load * slots +
                  4 * (d - 1) / d * s.first_stage_parameter_bytes / c.pipeline_network.tiers[0].bandwidth;
    if (k % 2 == 1) {
      c = with_corrected(c, real(rng) * 1e-6, k % 4 == 1 ? 0 : real(rng) * 1e3, real(rng) * 1e-12);
      const double link = c.data_parallel_network.tiers[0].bandwidth;
      want = s.max_stage_load * slots + 2 * (d - 1) / d * s.max_stage_parameter_bytes / link +
             2 * (d - 1) * c.data_parallel_network.tiers[0].latency_s +
             s.max_stage_parameter_bytes * c.corrected.optimizer_seconds_per_byte;
    }
    const BatchTime t = BatchTimeModel(c, data_parallel, /*replica_devices=*/1).batch_time(s);
    EXPECT_NEAR(t.total, want, 1e-12 * want) << "shape " << k;
    EXPECT_NEAR(t.parts.total(), t.total, 1e-12 * t.total) << "shape " << k;
  }
}

// placement.md "Memory", SGD with stashed activations: 2·10 + 5 = 25 bytes with one micro-batch in flight,
// 5 more per further one. M = 100 holds all K = 4 (25 + 3·5 = 40); M = 30 holds 2; M = 25 one; M = 24 none.
TEST(PlacementStageMemory, SgdStashing) {
  Cluster c = cluster(4, 8, 100, 1);
  // The 1000 entering bytes only count when recomputing.
  const StageFootprint stage{10, 5, phaze::placement::whole_stage_stash_bytes(5, 1000, c)};
  EXPECT_DOUBLE_EQ(stage_memory_bytes(stage, 1, c), 25.0);
  EXPECT_DOUBLE_EQ(stage_memory_bytes(stage, 4, c), 40.0);
  EXPECT_EQ(max_in_flight(stage, c), 4);
  c.memory_bytes = 30;
  EXPECT_EQ(max_in_flight(stage, c), 2);
  c.memory_bytes = 25;
  EXPECT_EQ(max_in_flight(stage, c), 1);
  c.memory_bytes = 24;
  EXPECT_EQ(max_in_flight(stage, c), 0);
}

// Adam with recomputation: 3·4 + 0 = 12 bytes, then only the 6 entering bytes per further micro-batch.
// M = 35, K = 8: 12 + 3·6 = 30 fits, 12 + 4·6 = 36 does not, so 4 in flight.
TEST(PlacementStageMemory, AdamRecomputing) {
  Cluster c = cluster(8, 8, 35, 1);
  c.optimizer = Optimizer::Adam;
  c.recompute = true;
  const StageFootprint stage{4, 0, phaze::placement::whole_stage_stash_bytes(0, 6, c)};
  EXPECT_DOUBLE_EQ(stage_memory_bytes(stage, 1, c), 12.0);
  EXPECT_DOUBLE_EQ(stage_memory_bytes(stage, 4, c), 30.0);
  EXPECT_EQ(max_in_flight(stage, c), 4);
}

// Brute force on small integers (exact in floating point): the most micro-batches in flight is the largest
// n ≤ K whose bytes fit, whatever the optimizer, recomputation and stash (zero included).
TEST(PlacementStageMemory, MaxInFlightIsTheLargestCountThatFits) {
  std::mt19937 rng(271u);
  auto pick = [&](int hi) { return static_cast<double>(std::uniform_int_distribution<int>(0, hi)(rng)); };
  for (int k = 0; k < 5000; ++k) {
    Cluster c = cluster(std::uniform_int_distribution<int64_t>(1, 12)(rng), 8, pick(200), 1);
    c.optimizer = k % 2 == 0 ? Optimizer::Sgd : Optimizer::Adam;
    c.recompute = k % 3 == 0;
    const StageFootprint stage{pick(30), pick(20), pick(20)};
    int64_t want = 0;
    for (int64_t n = 1; n <= c.devices; ++n)
      if (stage_memory_bytes(stage, n, c) <= c.memory_bytes) want = n;
    ASSERT_EQ(max_in_flight(stage, c), want) << "case " << k;
  }
}

// Each planner is exact for one time model and refuses the other; make_planner picks by the cluster.
TEST(PlacementPlanners, EachRefusesTheOtherTimeModel) {
  Chain chain;
  chain.nodes = {ChainNode{1, 1, 8, 0, false}};
  const Cluster reference = cluster(2, 4, 1000, 1);
  const Cluster with_terms = with_corrected(reference, 0, 0, 0);
  EXPECT_THROW(ReferencePlanner().solve(chain, with_terms), std::invalid_argument);
  EXPECT_THROW(CorrectedPlanner().solve(chain, reference), std::invalid_argument);
  EXPECT_TRUE(ReferencePlanner().solve(chain, reference).feasible);
  EXPECT_TRUE(CorrectedPlanner().solve(chain, with_terms).feasible);
  EXPECT_NE(dynamic_cast<ReferencePlanner*>(phaze::placement::make_planner(reference).get()), nullptr);
  EXPECT_NE(dynamic_cast<CorrectedPlanner*>(phaze::placement::make_planner(with_terms).get()), nullptr);
}

}  // namespace
