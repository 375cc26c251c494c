// Vector-operator and collective costs against hand-worked values of accelerator.md 6.3 and 7, and the
// operator estimator: fused epilogues, the persistent cache and thread-count independence.

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "cost/gemm_cost.h"
#include "cost/operator_cost.h"
#include "cost/vector_cost.h"
#include "hw/architecture.h"

namespace {

using namespace phaze;
using model::Direction;
using model::VectorKind;
using model::VectorPass;

hw::Architecture tpuv4() {
  hw::Architecture a;  // the defaults are the TPUv4-like design of accelerator.md
  a.num_tc = 8;
  a.num_vc = 2;
  return a;
}

TEST(VectorCost, SoftmaxComputeCyclesByHand) {
  // BERT-large scores [1, 16, 512, 512]: n = 4,194,304 elements in rows of 512, on 128 lanes:
  // 5 cycles per element over ⌈n/128⌉ = 32,768 tiles plus 10 per row over ⌈8192/128⌉ = 64 row tiles.
  const std::vector<VectorPass> passes{{VectorKind::Softmax, Direction::Forward, 4194304, 512}};
  EXPECT_EQ(cost::vector_compute_cycles(passes, 128), 5.0 * 32768 + 10.0 * 64);
  // Backward: 4 per element.
  const std::vector<VectorPass> back{{VectorKind::Softmax, Direction::Backward, 4194304, 512}};
  EXPECT_EQ(cost::vector_compute_cycles(back, 128), 4.0 * 32768);
}

TEST(VectorCost, MemoryBoundByHbmTraffic) {
  // A residual add of 2^20 elements reads two tensors and writes one: 6 MiB. At 1.2e12 B/s and 1.05 GHz
  // that is 6,291,456 / 1142.857 = 5,505.024 cycles, above the ⌈2^20 / 256⌉ = 4,096 compute cycles.
  const std::vector<VectorPass> add{{VectorKind::Add, Direction::Forward, 1 << 20, 0}};
  hw::VectorCoreConfig vc{2, 128, 2048, 128ll << 20, 1.2e12, 1.05e9};
  const cost::VectorCost c = cost::vector_cost(add, 6291456.0, vc, cost::CostParams{});
  EXPECT_EQ(c.compute_cycles, 4096);
  EXPECT_NEAR(c.memory_cycles, 6291456.0 / (1.2e12 / 1.05e9), 1e-6);
  EXPECT_EQ(c.cycles, c.memory_cycles);
}

TEST(VectorCost, EveryKindHasForwardAndBackwardCosts) {
  // D11/D12: every operator pays for itself, forward and backward (gathers are pure memory traffic).
  for (int k = 0; k <= static_cast<int>(VectorKind::Exp); ++k) {
    const auto kind = static_cast<VectorKind>(k);
    const auto f = cost::pass_cost(kind, Direction::Forward), b = cost::pass_cost(kind, Direction::Backward);
    if (kind != VectorKind::Gather && kind != VectorKind::ScatterAdd) {
      EXPECT_GT(f.per_element, 0) << k;
    }
    if (kind != VectorKind::Gather) {
      EXPECT_GT(b.per_element, 0) << k;
    }
  }
}

TEST(Collective, RingAllReduceOfTheDocExample) {
  // accelerator.md 7: GPT-3, t = 8: 50,331,648 bytes at 4 GiB/s take 2·7/8·50,331,648 / 2^32 = 0.0205078125 s.
  EXPECT_DOUBLE_EQ(cost::all_reduce_seconds(50331648.0, 8, 4294967296.0, 0.0), 0.0205078125);
  EXPECT_EQ(cost::all_reduce_seconds(50331648.0, 1, 4294967296.0, 0.0), 0);
  // With a per-step latency α the ring adds 2·(t − 1)·α.
  EXPECT_DOUBLE_EQ(cost::all_reduce_seconds(0.0, 4, 1e9, 1e-6), 6e-6);
}

TEST(Estimator, FusedEpilogueOverlapsTheGemm) {
  model::Operator op;
  op.engine = model::Engine::Fused;
  op.gemm = model::Gemm{2048, 6144, 12288, 1};
  const int64_t out = 2048 * 6144;
  op.passes = {{VectorKind::BiasAdd, Direction::Forward, out, 0}, {VectorKind::Gelu, Direction::Forward, out, 0}};
  cost::Estimator estimator;
  const auto fused = estimator.estimate(op, tpuv4());
  model::Operator bare = op;
  bare.passes.clear();
  bare.engine = model::Engine::Tensor;
  const auto gemm = estimator.estimate(bare, tpuv4());
  // Never cheaper than the GEMM alone, never dearer than GEMM + the whole epilogue run serially.
  const double epilogue_single = cost::vector_compute_cycles(op.passes, 128) / 1.05e9;
  EXPECT_GE(fused.single.latency_s, gemm.single.latency_s);
  EXPECT_LE(fused.single.latency_s, gemm.single.latency_s + epilogue_single);
  EXPECT_LE(fused.all.latency_s, fused.single.latency_s);
}

TEST(Estimator, CollectivesAndLayoutOperators) {
  model::Operator comm;
  comm.engine = model::Engine::Comm;
  comm.collective = model::Collective{50331648, 8};
  cost::Estimator estimator;
  const auto c = estimator.estimate(comm, tpuv4());
  EXPECT_DOUBLE_EQ(c.single.latency_s, 0.0205078125);
  EXPECT_DOUBLE_EQ(c.all.latency_s, 0.0205078125);
  model::Operator layout;
  layout.engine = model::Engine::None;
  EXPECT_EQ(estimator.estimate(layout, tpuv4()).all.latency_s, 0);
}

// A ring all-reduce over t ranks moves 2·(t − 1)/t of the bytes over each rank's link in 2·(t − 1) steps
// (accelerator.md 7). On a two-tier network the group of 8 stays inside a node's tier; 16 or 64 ranks cross
// nodes, where the 8 ranks of a node share its 8 per-device links of the outer tier: 8 · 2·10^10 B/s, below
// the node tier's 10^11 B/s (the rule of cost/collective_time.h, the same for every execution model).
TEST(Estimator, CollectivesRunOnTheTierTheirGroupSpans) {
  const hw::Network net{{hw::NetworkTier{"node", 8, 2e11, 1e-6, 0.5}, hw::NetworkTier{"cluster", 0, 2e10, 4e-6, 1}}};
  cost::Estimator estimator({}, net);
  const double bytes = 50331648;
  for (int64_t t : {2, 8, 16, 64}) {
    model::Operator comm;
    comm.engine = model::Engine::Comm;
    comm.collective = model::Collective{static_cast<int64_t>(bytes), t};
    const double bw = t <= 8 ? 2e11 * 0.5 : std::min(8 * 2e10, 2e11 * 0.5), alpha = t <= 8 ? 1e-6 : 4e-6;
    const double expected = 2.0 * (t - 1) / t * bytes / bw + 2.0 * (t - 1) * alpha;
    EXPECT_DOUBLE_EQ(estimator.estimate(comm, tpuv4()).single.latency_s, expected) << t;
  }
}

// An expert-parallel all-to-all's ranks are t apart: 4 ranks 2 apart stay in a node of 8 (3/4 of the bytes
// leave each rank on the node's 10^11 B/s); 4 apart they span two nodes, 2 ranks in each, and half the bytes
// leave the node on one device's 2·10^10 B/s of the outer tier.
TEST(Estimator, AllToAllRanksLieTheirStrideApart) {
  const hw::Network net{{hw::NetworkTier{"node", 8, 2e11, 1e-6, 0.5}, hw::NetworkTier{"cluster", 0, 2e10, 4e-6, 1}}};
  cost::Estimator estimator({}, net);
  const double bytes = 50331648;
  model::Operator exchange;
  exchange.engine = model::Engine::Comm;
  exchange.collective = model::Collective{static_cast<int64_t>(bytes), 4, model::Collective::Kind::AllToAll, 2};
  EXPECT_DOUBLE_EQ(estimator.estimate(exchange, tpuv4()).single.latency_s, 0.75 * bytes / 1e11 + 1e-6);
  exchange.collective->stride = 4;
  EXPECT_DOUBLE_EQ(estimator.estimate(exchange, tpuv4()).single.latency_s, 0.5 * bytes / 2e10 + 4e-6);
}

std::vector<std::pair<model::Gemm, hw::TensorCoreConfig>> sample_jobs() {
  std::vector<std::pair<model::Gemm, hw::TensorCoreConfig>> jobs;
  for (int64_t cores : {1, 2, 8, 64})
    for (const model::Gemm& g : {model::Gemm{2048, 4608, 12288, 1}, model::Gemm{2048, 2048, 128, 12},
                                 model::Gemm{3, 1, 1536, 1}, model::Gemm{2048, 4608, 12288, 1}})
      jobs.emplace_back(g, hw::TensorCoreConfig{cores, 64, 32, 32768, 8 << 20, 1.2e12, 1.05e9});
  return jobs;
}

TEST(Estimator, ResultsDoNotDependOnTheThreadCount) {
  const auto jobs = sample_jobs();
  cost::Estimator one, two;
  const auto a = one.gemms(jobs, 1), b = two.gemms(jobs, 2);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].latency_s, b[i].latency_s);
    EXPECT_EQ(a[i].energy_j, b[i].energy_j);
    const cost::GemmMapping direct = cost::map_gemm(jobs[i].first, jobs[i].second, cost::CostParams{});
    EXPECT_EQ(a[i].latency_s, direct.latency_s());
  }
}

TEST(Estimator, PersistentCacheGivesTheSameAnswers) {
  const auto dir = std::filesystem::temp_directory_path() / ("phaze_estimator_test_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const std::string path = (dir / "cache.sqlite").string();
  const auto jobs = sample_jobs();
  std::vector<cost::Estimate> cold, warm;
  {
    cost::EstimateCache cache(path);
    cost::Estimator estimator({}, hw::tpuv4_like_system().network, &cache);
    cold = estimator.gemms(jobs, 2);
    EXPECT_EQ(cache.size(), 12);  // 16 jobs, 4 of them repeats
  }
  {
    cost::EstimateCache cache(path);
    cost::Estimator estimator({}, hw::tpuv4_like_system().network, &cache);
    warm = estimator.gemms(jobs, 1);
    EXPECT_EQ(cache.size(), 12);
  }
  for (size_t i = 0; i < jobs.size(); ++i) {
    EXPECT_EQ(cold[i].latency_s, warm[i].latency_s);
    EXPECT_EQ(cold[i].energy_j, warm[i].energy_j);
  }
  // Different cost parameters are different keys.
  cost::CostParams other;
  other.systolic_fill = cost::SystolicFill::EveryPass;
  EXPECT_NE(cost::gemm_cache_key(jobs[0].first, jobs[0].second, {}),
            cost::gemm_cache_key(jobs[0].first, jobs[0].second, other));
  std::filesystem::remove_all(dir);
}

}  // namespace
