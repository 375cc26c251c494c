// The GEMM cost model: the fast mapper against brute force over the whole mapping space on small
// GEMMs, roofline bounds, and the properties accelerator.md 5.7 requires of our model.

#include "cost/gemm_cost.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace {

using namespace phaze;
using cost::Dataflow;
using cost::Dim;
using cost::GemmMapping;
using cost::LoopOrder;
using cost::Tiling;

hw::TensorCoreConfig tpuv4_cores(int64_t cores) {
  // accelerator.md 1: 128×128 arrays, per-core SRAM 16·128·128 bytes = 256 KiB, 128 MiB GLB, 1.2 TB/s, 1.05 GHz.
  return hw::TensorCoreConfig{cores, 128, 128, 256 << 10, 128ll << 20, 1.2e12, 1.05e9};
}

double compute_bound_cycles(const model::Gemm& g, const hw::TensorCoreConfig& c) {
  return std::ceil(static_cast<double>(g.macs()) / static_cast<double>(c.cores * c.width * c.depth));
}

double compulsory_hbm_cycles(const model::Gemm& g, const hw::TensorCoreConfig& c) {
  const double bytes = 2.0 * g.batch * (g.m * g.k + g.k * g.n + g.m * g.n);
  return bytes / (c.hbm_bandwidth / c.clock_hz);
}

/// Every tiling of an M×N×K problem that fits `capacity` words (m·k + k·n + m·n ≤ capacity), in all three
/// loop orders; (1, 1, 1) when nothing fits.
std::vector<Tiling> all_tilings(int64_t M, int64_t N, int64_t K, double capacity) {
  std::vector<Tiling> out;
  for (int64_t m = 1; m <= M; ++m)
    for (int64_t n = 1; n <= N; ++n)
      for (int64_t k = 1; k <= K; ++k)
        if (static_cast<double>(m * k + k * n + m * n) <= capacity)
          for (LoopOrder o : {LoopOrder::AStationary, LoopOrder::BStationary, LoopOrder::CStationary})
            out.push_back(Tiling{m, n, k, o});
  if (out.empty()) out.push_back(Tiling{1, 1, 1, LoopOrder::CStationary});
  return out;
}

/// The minimum (cycles, energy, words) over every mapping: every split of the cores over batch, M and N
/// (each a divisor of what is left), every pair of dimensions on the PE array, every SRAM and GLB tiling.
GemmMapping brute_force(const model::Gemm& g, const hw::TensorCoreConfig& c, const cost::CostParams& p) {
  const std::vector<Dataflow> dataflows{{Dim::K, Dim::N, Dim::M}, {Dim::N, Dim::K, Dim::M}, {Dim::M, Dim::N, Dim::K},
                                        {Dim::N, Dim::M, Dim::K}, {Dim::M, Dim::K, Dim::N}, {Dim::K, Dim::M, Dim::N}};
  GemmMapping best;
  best.cycles = INFINITY;
  const double words = 2.0 * p.double_buffering;
  for (int64_t sg = 1; sg <= std::min(c.cores, g.batch); ++sg) {
    if (c.cores % sg) continue;
    for (int64_t sm = 1; sm <= std::min(c.cores / sg, g.m); ++sm) {
      if ((c.cores / sg) % sm) continue;
      for (int64_t sn = 1; sn <= std::min(c.cores / sg / sm, g.n); ++sn) {
        if ((c.cores / sg / sm) % sn) continue;
        const int64_t mc = (g.m + sm - 1) / sm, nc = (g.n + sn - 1) / sn;
        for (const Dataflow& df : dataflows)
          for (const Tiling& s : all_tilings(mc, nc, g.k, static_cast<double>(c.sram_bytes) / words))
            for (const Tiling& h : all_tilings(g.m, g.n, g.k, static_cast<double>(c.glb_bytes) / words)) {
              GemmMapping m;
              m.split_g = sg;
              m.split_m = sm;
              m.split_n = sn;
              m.dataflow = df;
              m.sram = s;
              m.glb = h;
              cost::evaluate_mapping(g, c, p, m);
              const bool better = m.cycles < best.cycles ||
                                  (m.cycles == best.cycles &&
                                   (m.energy_j < best.energy_j * (1 - 1e-12) ||
                                    (m.energy_j <= best.energy_j * (1 + 1e-12) && m.words_moved < best.words_moved)));
              if (better) best = m;
            }
      }
    }
  }
  return best;
}

TEST(GemmCost, FastMapperEqualsBruteForceOnSmallGemms) {
  std::mt19937 rng(7);
  cost::CostParams params;
  for (int trial = 0; trial < 80; ++trial) {
    const int64_t extent = trial < 40 ? 5 : 8;
    const model::Gemm g{1 + static_cast<int64_t>(rng() % extent), 1 + static_cast<int64_t>(rng() % extent),
                        1 + static_cast<int64_t>(rng() % extent), 1 + static_cast<int64_t>(rng() % 3)};
    hw::TensorCoreConfig c;
    c.cores = 1 + static_cast<int64_t>(rng() % 4);
    c.width = 1 + static_cast<int64_t>(rng() % 3);
    c.depth = 1 + static_cast<int64_t>(rng() % 3);
    c.sram_bytes = 2 * (2 + static_cast<int64_t>(rng() % 30));  // 2..31 words: tilings matter
    c.glb_bytes = 2 * (3 + static_cast<int64_t>(rng() % 90));
    c.hbm_bandwidth = 2.1e9 * (1 + static_cast<double>(rng() % 4));  // 1..4 words per cycle
    c.clock_hz = 1.05e9;
    c.on_chip = trial % 5 == 4;  // a product inside a fused kernel: no HBM level
    params.systolic_fill = static_cast<cost::SystolicFill>(trial % 3);
    params.double_buffering = trial % 4 == 0 ? 2 : 1;
    params.glb_words_per_cycle = 1 + static_cast<double>(rng() % 4);
    SCOPED_TRACE(::testing::Message() << "trial " << trial << ": GEMM " << g.m << "x" << g.n << "x" << g.k << "x"
                                      << g.batch << " on " << c.cores << " cores " << c.width << "x" << c.depth
                                      << " sram " << c.sram_bytes << " glb " << c.glb_bytes);
    const GemmMapping fast = cost::map_gemm(g, c, params);
    const GemmMapping slow = brute_force(g, c, params);
    EXPECT_EQ(fast.cycles, slow.cycles);
    EXPECT_NEAR(fast.energy_j, slow.energy_j, 1e-9 * slow.energy_j);
  }
}

TEST(GemmCost, NeverBelowTheRooflineBounds) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    const model::Gemm g{1 + static_cast<int64_t>(rng() % 5000), 1 + static_cast<int64_t>(rng() % 5000),
                        1 + static_cast<int64_t>(rng() % 5000), 1 + static_cast<int64_t>(rng() % 16)};
    const int64_t w = int64_t{2} << (rng() % 8), d = int64_t{2} << (rng() % 8);
    const hw::TensorCoreConfig c{int64_t{1} << (rng() % 13),        w,      d,     std::max<int64_t>(1024, 16 * w * d),
                                 (int64_t{2} << (rng() % 7)) << 20, 1.2e12, 1.05e9};
    const GemmMapping m = cost::map_gemm(g, c, cost::CostParams{});
    EXPECT_GE(m.cycles, compute_bound_cycles(g, c));
    EXPECT_GE(m.cycles * (1 + 1e-12), compulsory_hbm_cycles(g, c));
    EXPECT_TRUE(std::isfinite(m.cycles));
    EXPECT_GT(m.energy_j, 0);
  }
}

void expect_same_mapping(const GemmMapping& a, const GemmMapping& b) {
  EXPECT_EQ(a.split_g, b.split_g);
  EXPECT_EQ(a.split_m, b.split_m);
  EXPECT_EQ(a.split_n, b.split_n);
  EXPECT_EQ(a.dataflow.rows, b.dataflow.rows);
  EXPECT_EQ(a.dataflow.cols, b.dataflow.cols);
  for (const auto& [x, y] : {std::pair(a.sram, b.sram), std::pair(a.glb, b.glb)}) {
    EXPECT_EQ(x.m, y.m);
    EXPECT_EQ(x.n, y.n);
    EXPECT_EQ(x.k, y.k);
    EXPECT_EQ(x.order, y.order);
  }
  EXPECT_EQ(a.cycles, b.cycles);
  EXPECT_EQ(a.energy_j, b.energy_j);
  EXPECT_EQ(a.words_moved, b.words_moved);
}

TEST(GemmCost, MemoizedLevelsGiveTheMappingOfAFreshSearch) {
  // One memo over GEMMs and core configurations that share levels (the same GLB with other cores, the same
  // SRAM and split with another GLB, array or core count): every mapping equals brute force on small GEMMs
  // and, field for field, the search without a memo on large ones.
  cost::CostParams params;
  cost::GemmMappingMemo memo(params);
  std::mt19937 rng(17);
  for (int trial = 0; trial < 300; ++trial) {
    const bool small = trial % 3 == 0;
    const int64_t extent = small ? 6 : 6000;
    const model::Gemm g{1 + static_cast<int64_t>(rng() % extent), 1 + static_cast<int64_t>(rng() % extent),
                        1 + static_cast<int64_t>(rng() % extent), 1 + static_cast<int64_t>(rng() % 3)};
    for (int config = 0; config < 4; ++config) {
      hw::TensorCoreConfig c;
      c.cores = int64_t{1} << (rng() % (small ? 3 : 9));
      c.width = small ? 1 + static_cast<int64_t>(rng() % 3) : int64_t{4} << (rng() % 6);
      c.depth = small ? 1 + static_cast<int64_t>(rng() % 3) : int64_t{4} << (rng() % 6);
      c.sram_bytes = small ? 2 * (2 + static_cast<int64_t>(rng() % 4)) : int64_t{16} << (10 + rng() % 3);
      c.glb_bytes = small ? 2 * (3 + static_cast<int64_t>(rng() % 6)) : int64_t{1} << (20 + rng() % 4);
      c.hbm_bandwidth = small ? 2.1e9 * (1 + static_cast<double>(rng() % 2)) : 1.2e12;
      c.clock_hz = 1.05e9;
      SCOPED_TRACE(::testing::Message() << "trial " << trial << "." << config << ": GEMM " << g.m << "x" << g.n << "x"
                                        << g.k << "x" << g.batch << " on " << c.cores << " cores " << c.width << "x"
                                        << c.depth << " sram " << c.sram_bytes << " glb " << c.glb_bytes);
      const GemmMapping kept = cost::map_gemm(g, c, params, &memo);
      expect_same_mapping(kept, cost::map_gemm(g, c, params));
      if (small) {
        const GemmMapping slow = brute_force(g, c, params);
        EXPECT_EQ(kept.cycles, slow.cycles);
        EXPECT_NEAR(kept.energy_j, slow.energy_j, 1e-9 * slow.energy_j);
      }
    }
  }
  EXPECT_GT(memo.levels(), 0u);
}

TEST(GemmCost, DesignsThatDifferInTheGlobalBufferShareTheSramLevels) {
  // With HBM fast enough never to bind, the same splits reach their SRAM tilings whatever the GLB: after the
  // first GLB size, each other one adds its own GLB level and nothing else.
  cost::GemmMappingMemo memo(cost::CostParams{});
  const model::Gemm g{2048, 4096, 4096, 1};
  hw::TensorCoreConfig c = tpuv4_cores(8);
  c.hbm_bandwidth = 1e18;
  c.glb_bytes = 8 << 20;
  const GemmMapping first = cost::map_gemm(g, c, {}, &memo);
  const size_t after_first = memo.levels();
  EXPECT_GT(after_first, 2u);  // a GLB level and SRAM levels of several splits
  for (const int64_t mib : {16, 32, 64}) {
    c.glb_bytes = mib << 20;
    expect_same_mapping(cost::map_gemm(g, c, {}, &memo), cost::map_gemm(g, c, {}));
  }
  EXPECT_EQ(memo.levels(), after_first + 3);
  EXPECT_GT(first.cycles, 0);
}

TEST(GemmCost, AMemoForOtherParametersIsNotUsed) {
  cost::CostParams other;
  other.glb_words_per_cycle = 64;
  cost::GemmMappingMemo memo(cost::CostParams{});
  const model::Gemm g{1024, 4096, 1024, 1};
  expect_same_mapping(cost::map_gemm(g, tpuv4_cores(4), other, &memo), cost::map_gemm(g, tpuv4_cores(4), other));
  EXPECT_EQ(memo.levels(), 0u);
}

TEST(GemmCost, LargeSquareGemmRunsNearPeakOnTheTpuV4LikeDesign) {
  // 8192³ MACs over 8 cores × 128·128 PEs: the compute bound is 8192³ / 131072 = 4,194,304 cycles.
  const model::Gemm g{8192, 8192, 8192, 1};
  const GemmMapping all = cost::map_gemm(g, tpuv4_cores(8), cost::CostParams{});
  EXPECT_GE(4194304.0 / all.cycles, 0.90);
}

TEST(GemmCost, FourCoresAreAtLeast3Point5TimesOneCore) {
  const model::Gemm g{8192, 8192, 8192, 1};
  const double one = cost::map_gemm(g, tpuv4_cores(1), cost::CostParams{}).cycles;
  const double four = cost::map_gemm(g, tpuv4_cores(4), cost::CostParams{}).cycles;
  EXPECT_GE(one / four, 3.5);
}

TEST(GemmCost, AllCoresNeverSlowerThanOneCore) {
  // accelerator.md D13: the original's 8-core estimate of (M, K, N) = (1024, 1600, 6400) was slower than
  // one core's; ours is at least 7 times faster (compute bound 640,000 vs 80,000 cycles).
  const model::Gemm g{1024, 6400, 1600, 1};
  const double one = cost::map_gemm(g, tpuv4_cores(1), cost::CostParams{}).cycles;
  const double eight = cost::map_gemm(g, tpuv4_cores(8), cost::CostParams{}).cycles;
  EXPECT_GE(one / eight, 7.0);
  std::mt19937 rng(3);
  for (int trial = 0; trial < 100; ++trial) {
    const model::Gemm h{1 + static_cast<int64_t>(rng() % 3000), 1 + static_cast<int64_t>(rng() % 3000),
                        1 + static_cast<int64_t>(rng() % 3000), 1 + static_cast<int64_t>(rng() % 8)};
    hw::TensorCoreConfig c = tpuv4_cores(int64_t{1} << (rng() % 13));
    const double all = cost::map_gemm(h, c, cost::CostParams{}).cycles;
    c.cores = 1;
    EXPECT_LE(all, cost::map_gemm(h, c, cost::CostParams{}).cycles);
  }
}

TEST(GemmCost, BandwidthsScaleWithTheHardware) {
  // accelerator.md D14: (M, K, N) = (512, 1024, 1024) took 40,960 cycles on 1 and on 8 cores of 128×128
  // in the original (fixed chip-wide bandwidths); the compute bounds are 32,768 and 4,096 cycles.
  const model::Gemm g{512, 1024, 1024, 1};
  // Ours: within the compute bound plus one fill and drain of the 128×128 array (256 cycles) and 6%.
  EXPECT_LE(cost::map_gemm(g, tpuv4_cores(1), cost::CostParams{}).cycles, (32768 + 256) * 1.06);
  EXPECT_LE(cost::map_gemm(g, tpuv4_cores(8), cost::CostParams{}).cycles, (4096 + 256) * 1.06);
}

TEST(GemmCost, AwkwardAndTinyGemmsGetFiniteSensibleLatencies) {
  // D18: (M, K, N) = (3, 1536, 1) on 8 × 64×4 with 4 KiB SRAMs and a 16 MiB GLB was infeasible.
  const hw::TensorCoreConfig small{8, 64, 4, 4096, 16 << 20, 1.2e12, 1.05e9};
  const GemmMapping tiny = cost::map_gemm(model::Gemm{3, 1, 1536, 1}, small, cost::CostParams{});
  EXPECT_TRUE(std::isfinite(tiny.cycles));
  EXPECT_GE(tiny.cycles, std::ceil(3.0 * 1536 / (8 * 64 * 4)));
  EXPECT_LE(tiny.cycles, 3.0 * 1536);  // no worse than one MAC per cycle
  // D16: a vocabulary of 50257 pads the last 128-column pass only: ⌈50257/128⌉·128 = 50304 columns.
  const model::Gemm logits{2048, 50257, 1600, 1};
  const double padded_bound = std::ceil(1600.0 / 128) * (50304.0 / 128) * 2048 / 8;
  const GemmMapping m = cost::map_gemm(logits, tpuv4_cores(8), cost::CostParams{});
  EXPECT_LE(m.cycles, padded_bound * 1.10);
  // 25 heads of 64 (GPT-2 XL attention) and a one-element GEMM.
  EXPECT_TRUE(std::isfinite(cost::map_gemm(model::Gemm{1024, 1024, 64, 25}, tpuv4_cores(8), {}).cycles));
  // One MAC: one cycle plus the array's fill and drain, 128 + 128 cycles.
  EXPECT_EQ(cost::map_gemm(model::Gemm{1, 1, 1, 1}, tpuv4_cores(1), {}).compute_cycles, 1 + 256);
}

TEST(GemmCost, LatencyNeverGrowsWhenOnlyTheGlobalBufferGrows) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 50; ++trial) {
    const model::Gemm g{1 + static_cast<int64_t>(rng() % 8000), 1 + static_cast<int64_t>(rng() % 8000),
                        1 + static_cast<int64_t>(rng() % 8000), 1 + static_cast<int64_t>(rng() % 4)};
    hw::TensorCoreConfig c = tpuv4_cores(int64_t{1} << (rng() % 6));
    double previous = INFINITY;
    for (int64_t mib = 2; mib <= 128; mib *= 2) {
      c.glb_bytes = mib << 20;
      const double cycles = cost::map_gemm(g, c, {}).cycles;
      EXPECT_LE(cycles, previous);
      previous = cycles;
    }
  }
}

TEST(GemmCost, TheMappingIsDeterministic) {
  const model::Gemm g{2048, 4608, 12288, 1};
  const GemmMapping a = cost::map_gemm(g, tpuv4_cores(8), {});
  const GemmMapping b = cost::map_gemm(g, tpuv4_cores(8), {});
  EXPECT_EQ(a.cycles, b.cycles);
  EXPECT_EQ(a.energy_j, b.energy_j);
  EXPECT_EQ(a.split_m, b.split_m);
  EXPECT_EQ(a.sram.m, b.sram.m);
}

}  // namespace
