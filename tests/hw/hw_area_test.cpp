// The area model against accelerator.md section 3: constants, A_max and its breakdown, every test row of
// section 3.1 with its area and whether the budget keeps it.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "doc_area.h"
#include "hw/area.h"
#include "hw/enumerate.h"
#include "hw/presets.h"

namespace {

using namespace phaze::hw;

Architecture design(int64_t num_tc, int64_t num_vc, int64_t width, int64_t depth, int64_t width_vc, int64_t glb_mib) {
  Architecture a;
  a.num_tc = num_tc;
  a.num_vc = num_vc;
  a.tc_width = width;
  a.tc_depth = depth;
  a.vc_width = width_vc;
  a.glb_bytes = glb_mib << 20;
  return a;
}

/// One row of accelerator.md 3.1 (index -1 for the rows without one).
struct Row {
  int64_t index;
  int64_t num_tc, num_vc, width, depth, width_vc, glb_mib;
  double area;
  bool kept;
};

const std::vector<Row> kRows = {
    {0, 4096, 4096, 16, 2, 16, 32, 246416424.736, true},
    {4, 4096, 4096, 16, 2, 16, 2, 203003744.736, true},
    {1000, 2048, 4096, 4, 32, 4, 4, 259785449.819136, true},
    {5000, 512, 4, 32, 2, 32, 64, 116773127.269632, true},
    {10000, 64, 2048, 8, 2, 8, 64, 114787902.146816, true},
    {14680, 16, 2048, 8, 32, 8, 64, 116931942.564608, true},
    {18578, 8, 2, 128, 128, 128, 128, 278826676.31216, true},
    {20000, 4, 256, 8, 64, 8, 64, 93377242.489472, true},
    {22222, 2, 512, 4, 4, 4, 64, 93339006.295296, true},
    {25000, 1, 512, 64, 128, 64, 128, 209892528.809216, true},
    {27000, 1, 32, 8, 4, 8, 2, 3759477.57072, true},
    {29000, 1, 1, 128, 16, 128, 8, 13677809.041712, true},
    {29355, 1, 1, 2, 2, 2, 32, 46767727.77325, true},
    {29359, 1, 1, 2, 2, 2, 2, 3355047.77325, true},
    {-1, 8, 2, 128, 128, 128, 64, 192009376.31216, true},
    {-1, 4, 4, 256, 256, 256, 8, 218557710.717056, true},
    {-1, 2, 2, 2, 2, 2, 2, 3371875.5465, false},
    {-1, 8, 8, 128, 128, 128, 128, 279459711.611264, false},
    {-1, 16, 2, 128, 128, 128, 64, 295202040.857952, false},
    {-1, 1, 4096, 256, 256, 256, 2, 903168086.756224, false},
};

TEST(HwArea, PerPeConstantsComposeAsDocumented) {
  EXPECT_NEAR(kMacAreaUm2, 3632 * 0.5 * 0.418333, 1e-3);  // 0.418333 is itself rounded
  EXPECT_NEAR(kRegisterEntryAreaUm2, 0.104 * 0.5 * 0.418333, 1e-7);
  EXPECT_NEAR(kTensorPeAreaUm2, kMacAreaUm2 + 16 * kRegisterEntryAreaUm2, 1e-6);
  EXPECT_NEAR(kVectorLaneAreaUm2, kMacAreaUm2 + 6 * kRegisterEntryAreaUm2, 1e-6);
  EXPECT_EQ(kTensorPeAreaUm2, 760.041386);
  EXPECT_EQ(kVectorLaneAreaUm2, 759.823853);
}

TEST(HwArea, TablesMatchTheDoc) {
  for (const auto& [kib, um2] : hw_test::doc_sram_table()) {
    EXPECT_EQ(sram_area_um2(kib << 10), um2) << kib << " KiB";
    EXPECT_TRUE(sram_size_in_table(kib << 10));
  }
  for (const auto& [mib, um2] : hw_test::doc_glb_table()) {
    EXPECT_EQ(glb_area_um2(mib << 20), um2) << mib << " MiB";
    EXPECT_TRUE(glb_size_in_table(mib << 20));
  }
  EXPECT_FALSE(sram_size_in_table(512));
  EXPECT_FALSE(sram_size_in_table(3 << 10));
  EXPECT_FALSE(sram_size_in_table(2 << 20));
  EXPECT_FALSE(glb_size_in_table(1 << 20));
  EXPECT_FALSE(glb_size_in_table(256ll << 20));
}

TEST(HwArea, OffTableSizesFollowTheDocumentedRule) {
  // At or below the smallest entry: the smallest entry.
  EXPECT_EQ(sram_area_um2(1), 6133.98);
  EXPECT_EQ(sram_area_um2(1000), 6133.98);
  EXPECT_EQ(glb_area_um2(1 << 20), 3338220);
  // Between entries: linear in bytes.
  EXPECT_NEAR(sram_area_um2(3 << 10), (8248.43 + 12610.5) / 2, 1e-9);
  EXPECT_NEAR(glb_area_um2(96ll << 20), (88605700.0 + 175423000.0) / 2, 1e-6);
  // Above the largest: proportional to size.
  EXPECT_NEAR(sram_area_um2(4 << 20), 4 * 1634130.0, 1e-6);
  EXPECT_NEAR(glb_area_um2(256ll << 20), 2 * 175423000.0, 1e-6);
  // Monotone across the whole range.
  double previous = 0;
  for (int64_t bytes = 512; bytes <= (8 << 20); bytes += 512) {
    const double a = sram_area_um2(bytes);
    EXPECT_GE(a, previous) << bytes;
    previous = a;
  }
}

TEST(HwArea, ReferenceChipIsAmaxWithTheDocBreakdown) {
  const Architecture ref = tpuv4_like();
  EXPECT_EQ(tensor_core_sram_bytes(ref), 256 << 10);
  EXPECT_EQ(vector_core_sram_bytes(ref), 2 << 10);
  const AreaBreakdown b = area_breakdown(ref);
  EXPECT_NEAR(b.tc_pes_um2, 99620144.545792, 1e-6);
  EXPECT_NEAR(b.tc_srams_um2, 3572520, 1e-6);
  EXPECT_NEAR(b.vc_lanes_um2, 194514.906368, 1e-6);
  EXPECT_NEAR(b.vc_srams_um2, 16496.86, 1e-6);
  EXPECT_NEAR(b.glb_um2, 175423000, 1e-6);
  EXPECT_NEAR(b.total_um2(), 278826676.31216, 1e-6);
  EXPECT_EQ(area_um2(ref), b.total_um2());
  EXPECT_NEAR(b.glb_um2 / b.total_um2(), 0.63, 0.005);  // "63 % of the chip"
  EXPECT_EQ(default_area_budget_um2(), area_um2(ref));
  EXPECT_NEAR(0.3 * default_area_budget_um2(), 83648002.893648, 1e-6);
}

TEST(HwArea, PublishedTpuv4VectorUnitsAreSixteenTimesTheLanes) {
  // TPU v4's two vector units, 128 lanes × 8 sublanes × 2 ALUs each, in place of the TPUv4-like chip's two
  // 128-lane vector cores: 2 · (2048 − 128) lanes more at 759.823853 µm², and 32 KiB vector-core SRAMs
  // (16 bytes per lane) at 63,338.4 µm² in place of 2 KiB ones at 8,248.43 µm²; nothing else changes.
  const Architecture ref = tpuv4_like(), published = tpuv4_published();
  EXPECT_EQ(published.num_vc * published.vc_width, 16 * ref.num_vc * ref.vc_width);
  EXPECT_EQ(vector_core_sram_bytes(published), 32 << 10);
  EXPECT_NEAR(area_um2(published) - area_um2(ref), 2 * 1920 * 759.823853 + 2 * (63338.4 - 8248.43), 1e-6);
  EXPECT_EQ(peak_tensor_macs_per_s(published), peak_tensor_macs_per_s(ref));
  EXPECT_EQ(find_preset("tpuv4-published"), published);
  EXPECT_EQ(find_preset("tpuv4"), ref);  // the alias keeps naming the TPUv4-like chip
}

TEST(HwArea, DerivedSramExamples) {
  // accelerator.md 1.1: 2×2 → 1 KiB, 128×128 → 256 KiB, 256×256 → 1 MiB; 2…64 lanes → 1 KiB, 128 → 2 KiB,
  // 256 → 4 KiB.
  const std::vector<std::pair<int64_t, int64_t>> tc = {{2, 1 << 10}, {128, 256 << 10}, {256, 1 << 20}};
  for (const auto& [side, bytes] : tc) {
    EXPECT_EQ(tensor_core_sram_bytes(design(1, 1, side, side, 2, 2)), bytes) << side;
  }
  const std::vector<std::pair<int64_t, int64_t>> vc = {{2, 1 << 10}, {64, 1 << 10}, {128, 2 << 10}, {256, 4 << 10}};
  for (const auto& [lanes, bytes] : vc) {
    EXPECT_EQ(vector_core_sram_bytes(design(1, 1, 2, 2, lanes, 2)), bytes) << lanes;
  }
}

TEST(HwArea, EveryTestRowHasItsAreaAndKeptFlag) {
  const double budget = default_area_budget_um2();
  for (const Row& r : kRows) {
    const Architecture a = design(r.num_tc, r.num_vc, r.width, r.depth, r.width_vc, r.glb_mib);
    const double area = area_um2(a);
    EXPECT_NEAR(area, r.area, 1e-6) << "row " << r.num_tc << "," << r.num_vc << "," << r.width << "," << r.depth << ","
                                    << r.width_vc << "," << r.glb_mib;
    EXPECT_NEAR(area, r.area, 1e-12 * r.area + 6e-8);
    EXPECT_EQ(within_budget(a, area, budget, 0.3), r.kept) << "row index " << r.index << " area " << r.area;
  }
}

TEST(HwArea, SingleCoreExemptionDecidesTheLowAreaRows) {
  const double budget = default_area_budget_um2();
  // (1, 32, 8, 4, 8, 2 MiB) is below 0.3·A_max and kept only through the num_tc = 1 exemption.
  const Architecture low = design(1, 32, 8, 4, 8, 2);
  EXPECT_LT(area_um2(low), 0.3 * budget);
  EXPECT_TRUE(within_budget(low, area_um2(low), budget, 0.3, true));
  EXPECT_FALSE(within_budget(low, area_um2(low), budget, 0.3, false));
  // (2, 2, 2, 2, 2, 2 MiB) is too small and has no single core.
  const Architecture small = design(2, 2, 2, 2, 2, 2);
  EXPECT_FALSE(within_budget(small, area_um2(small), budget, 0.3, true));
  EXPECT_TRUE(within_budget(small, area_um2(small), budget, 0.0, true));
  // The upper bound applies to single-core designs too.
  const Architecture huge = design(1, 4096, 256, 256, 256, 2);
  EXPECT_FALSE(within_budget(huge, area_um2(huge), budget, 0.3, true));
}

TEST(HwArea, ExplicitSramSizesOverrideTheDerivation) {
  Architecture a = tpuv4_like();
  a.tc_sram_bytes = 512 << 10;
  a.vc_sram_bytes = 4 << 10;
  const AreaBreakdown b = area_breakdown(a);
  EXPECT_NEAR(b.tc_srams_um2, 8 * 897890.0, 1e-6);
  EXPECT_NEAR(b.vc_srams_um2, 2 * 12610.5, 1e-6);
}

TEST(HwArea, IndependentFormulaAgreesOnTheRows) {
  for (const Row& r : kRows) {
    EXPECT_NEAR(hw_test::doc_area(r.num_tc, r.num_vc, r.width, r.depth, r.width_vc, r.glb_mib), r.area, 1e-6);
  }
}

}  // namespace
