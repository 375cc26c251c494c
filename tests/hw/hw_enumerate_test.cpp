// The design-space enumeration against accelerator.md section 2 and 3.1: the kept count, the canonical
// order (index rows), the statistics of the kept set, and the options (untied vector width, lower fraction,
// exemption, budget, ranges) against a brute force written from the doc's formula in doc_area.h.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <numeric>
#include <set>
#include <tuple>
#include <vector>

#include "doc_area.h"
#include "hw/area.h"
#include "hw/enumerate.h"
#include "hw/presets.h"
#include "util/input_error.h"

namespace {

using namespace phaze::hw;
using hw_test::doc_area;

/// (num_tc, num_vc, width, depth, width_vc, GLB MiB)
using Key = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t>;

Key key_of(const Architecture& a) {
  return {a.num_tc, a.num_vc, a.tc_width, a.tc_depth, a.vc_width, a.glb_bytes >> 20};
}

const std::vector<Design>& default_designs() {
  static const std::vector<Design> designs = enumerate_designs();
  return designs;
}

/// The brute force: the doc's loop nest and keep rule with the test's own area formula. `untie` adds the
/// vc_width loop just inside width; `exemption` is the single-core rule; every core pays `per_tc` or `per_vc`.
std::vector<std::pair<Key, double>> brute_force(bool untie, double lower_fraction, bool exemption, double budget,
                                                double per_tc = 0, double per_vc = 0) {
  std::vector<std::pair<Key, double>> out;
  for (int ltc = 12; ltc >= 0; --ltc)
    for (int lvc = 12; lvc >= 0; --lvc)
      for (int lw = 8; lw >= 1; --lw)
        for (int lwv = untie ? 8 : lw; lwv >= (untie ? 1 : lw); --lwv)
          for (int ld = 8; ld >= 1; --ld)
            for (int lg = 7; lg >= 1; --lg) {
              const int64_t tc = int64_t{1} << ltc, vc = int64_t{1} << lvc, w = int64_t{1} << lw,
                            wv = int64_t{1} << lwv, d = int64_t{1} << ld, g = int64_t{1} << lg;
              const double area =
                  doc_area(tc, vc, w, d, wv, g) + static_cast<double>(tc) * per_tc + static_cast<double>(vc) * per_vc;
              const double lo = (exemption && (tc == 1 || vc == 1)) ? 0.0 : lower_fraction * budget;
              if (area >= lo && area <= budget) out.push_back({Key{tc, vc, w, d, wv, g}, area});
            }
  return out;
}

/// The test's own budget: its formula on the reference chip (equal to the doc's A_max).
double doc_budget() {
  return doc_area(8, 2, 128, 128, 128, 128);
}

void expect_same_list(const std::vector<Design>& got, const std::vector<std::pair<Key, double>>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(key_of(got[i].arch), want[i].first) << "index " << i;
    ASSERT_NEAR(got[i].area_um2, want[i].second, 1e-6) << "index " << i;
  }
}

TEST(HwEnumerate, KeepsTheDocumentedCount) {
  EXPECT_EQ(default_designs().size(), 29360u);
  EXPECT_EQ(count_designs(), 29360);
  EXPECT_EQ(candidate_count(), 75712);
}

TEST(HwEnumerate, IndexRowsOfTheDoc) {
  struct IndexRow {
    size_t index;
    Key key;
    double area;
  };
  const std::vector<IndexRow> rows = {
      {0, {4096, 4096, 16, 2, 16, 32}, 246416424.736},      {4, {4096, 4096, 16, 2, 16, 2}, 203003744.736},
      {1000, {2048, 4096, 4, 32, 4, 4}, 259785449.819136},  {5000, {512, 4, 32, 2, 32, 64}, 116773127.269632},
      {10000, {64, 2048, 8, 2, 8, 64}, 114787902.146816},   {14680, {16, 2048, 8, 32, 8, 64}, 116931942.564608},
      {18578, {8, 2, 128, 128, 128, 128}, 278826676.31216}, {20000, {4, 256, 8, 64, 8, 64}, 93377242.489472},
      {22222, {2, 512, 4, 4, 4, 64}, 93339006.295296},      {25000, {1, 512, 64, 128, 64, 128}, 209892528.809216},
      {27000, {1, 32, 8, 4, 8, 2}, 3759477.57072},          {29000, {1, 1, 128, 16, 128, 8}, 13677809.041712},
      {29355, {1, 1, 2, 2, 2, 32}, 46767727.77325},         {29359, {1, 1, 2, 2, 2, 2}, 3355047.77325},
  };
  const auto& designs = default_designs();
  ASSERT_EQ(designs.size(), 29360u);
  for (const IndexRow& r : rows) {
    EXPECT_EQ(key_of(designs[r.index].arch), r.key) << "index " << r.index;
    EXPECT_NEAR(designs[r.index].area_um2, r.area, 1e-6) << "index " << r.index;
  }
  // The reference chip is exactly the budget.
  EXPECT_EQ(designs[18578].area_um2, default_area_budget_um2());
}

TEST(HwEnumerate, DesignsCarryTheTemplateDefaults) {
  const Architecture ref = tpuv4_like();
  for (const Design& d : default_designs()) {
    ASSERT_TRUE(d.arch.name.empty());
    ASSERT_EQ(d.arch.tc_sram_bytes, 0);
    ASSERT_EQ(d.arch.vc_sram_bytes, 0);
    ASSERT_EQ(d.arch.vc_width, d.arch.tc_width);
    ASSERT_EQ(d.arch.hbm_bytes, ref.hbm_bytes);
    ASSERT_EQ(d.arch.hbm_bandwidth, ref.hbm_bandwidth);
    ASSERT_EQ(d.arch.clock_hz, ref.clock_hz);
    ASSERT_EQ(d.area_um2, area_um2(d.arch));
  }
}

TEST(HwEnumerate, AreaStatisticsOfTheKeptSet) {
  const auto& designs = default_designs();
  std::vector<double> areas;
  for (const Design& d : designs) areas.push_back(d.area_um2);
  std::sort(areas.begin(), areas.end());
  EXPECT_NEAR(areas.front(), 3355047.77325, 1e-6);
  EXPECT_NEAR(areas.back(), 278826676.31216, 1e-6);
  const double median = (areas[areas.size() / 2 - 1] + areas[areas.size() / 2]) / 2;
  EXPECT_NEAR(median, 127644525.86, 0.006);
  const double mean = std::accumulate(areas.begin(), areas.end(), 0.0) / static_cast<double>(areas.size());
  EXPECT_NEAR(mean, 134140281.22, 0.006);

  // Distinct areas. The doc's 29,194 counts the original's floating-point values, where mathematically
  // equal areas (for example width and depth swapped with the same vector cores) differ in the last bits
  // depending on the order of the additions; no summation order of the five terms reproduces it exactly
  // (orders give 29,130 … 29,251). Counted as real numbers (rounded to 1e-4 µm²; the doc's constants have at
  // most six decimals, so the count is stable from 1e-2 to 1e-7 µm²) the kept set has 29,114 distinct areas,
  // the same as the test's independent formula; the doc's figure can only be larger than that and smaller
  // than the number of designs.
  auto distinct_rounded = [](const std::vector<double>& values) {
    std::set<int64_t> distinct;
    for (double a : values) distinct.insert(std::llround(a * 1e4));
    return distinct.size();
  };
  std::vector<double> doc_areas;
  for (const Design& d : designs) {
    const Architecture& a = d.arch;
    doc_areas.push_back(doc_area(a.num_tc, a.num_vc, a.tc_width, a.tc_depth, a.vc_width, a.glb_bytes >> 20));
  }
  const size_t distinct = distinct_rounded(areas);
  EXPECT_EQ(distinct, distinct_rounded(doc_areas));
  EXPECT_LE(distinct, 29194u);
  std::set<double> exact(areas.begin(), areas.end());
  EXPECT_GE(exact.size(), distinct);
  EXPECT_LE(exact.size(), 29360u);
  std::set<int64_t> buckets;
  for (double a : areas) buckets.insert(static_cast<int64_t>(std::floor(a / 10000.0)));
  EXPECT_EQ(buckets.size(), 13506u);
}

TEST(HwEnumerate, CoreCountStatistics) {
  int64_t tc_only = 0, vc_only = 0, both = 0, neither = 0;
  std::set<std::pair<int64_t, int64_t>> pairs;
  std::set<std::tuple<int64_t, int64_t, int64_t, int64_t>> tc_configs;
  std::set<std::tuple<int64_t, int64_t, int64_t>> vc_configs;
  for (const Design& d : default_designs()) {
    const Architecture& a = d.arch;
    const bool one_tc = a.num_tc == 1, one_vc = a.num_vc == 1;
    if (one_tc && one_vc) {
      ++both;
    } else if (one_tc) {
      ++tc_only;
    } else if (one_vc) {
      ++vc_only;
    } else {
      ++neither;
    }
    pairs.insert({a.num_tc, a.num_vc});
    tc_configs.insert({a.num_tc, a.tc_width, a.tc_depth, a.glb_bytes});
    vc_configs.insert({a.num_vc, a.vc_width, a.glb_bytes});
  }
  EXPECT_EQ(tc_only, 5122);
  EXPECT_EQ(vc_only, 3738);
  EXPECT_EQ(both, 448);
  EXPECT_EQ(neither, 20052);
  EXPECT_EQ(pairs.size(), 169u);
  EXPECT_EQ(tc_configs.size(), 4186u);
  EXPECT_EQ(vc_configs.size(), 697u);
}

TEST(HwEnumerate, CountsPerValue) {
  std::map<int64_t, int64_t> tc, vc, width, depth, glb;
  for (const Design& d : default_designs()) {
    ++tc[d.arch.num_tc];
    ++vc[d.arch.num_vc];
    ++width[d.arch.tc_width];
    ++depth[d.arch.tc_depth];
    ++glb[d.arch.glb_bytes >> 20];
  }
  auto values = [](const std::map<int64_t, int64_t>& m) {
    std::vector<int64_t> out;
    for (const auto& [value, count] : m) out.push_back(count);
    return out;
  };
  EXPECT_EQ(values(tc),
            (std::vector<int64_t>{5570, 2300, 2352, 2386, 2398, 2362, 2297, 2202, 2049, 1793, 1468, 1223, 960}));
  EXPECT_EQ(values(vc),
            (std::vector<int64_t>{4186, 2039, 2034, 2032, 2031, 2030, 2043, 2072, 2129, 2217, 2242, 2163, 2142}));
  EXPECT_EQ(values(width), (std::vector<int64_t>{4100, 4118, 4068, 4087, 3909, 3555, 3024, 2499}));
  EXPECT_EQ(values(depth), (std::vector<int64_t>{4240, 4173, 4067, 3897, 3670, 3393, 3108, 2812}));
  EXPECT_EQ(values(glb), (std::vector<int64_t>{2968, 3010, 3066, 3224, 3918, 7029, 6145}));
  EXPECT_EQ(tc.begin()->first, 1);
  EXPECT_EQ(tc.rbegin()->first, 4096);
  EXPECT_EQ(glb.begin()->first, 2);
  EXPECT_EQ(glb.rbegin()->first, 128);
}

TEST(HwEnumerate, EverySingleCoreTwinIsKept) {
  std::set<Key> kept;
  for (const Design& d : default_designs()) kept.insert(key_of(d.arch));
  for (const Design& d : default_designs()) {
    const Architecture& a = d.arch;
    ASSERT_TRUE(kept.count(Key{1, 1, a.tc_width, a.tc_depth, a.tc_width, a.glb_bytes >> 20}))
        << "twin of index " << (&d - default_designs().data());
  }
}

TEST(HwEnumerate, CanonicalOrderMatchesTheBruteForce) {
  EXPECT_NEAR(doc_budget(), hw_test::kDocAmax, 1e-6);
  expect_same_list(default_designs(), brute_force(false, 0.3, true, doc_budget()));
}

TEST(HwEnumerate, UntiedVectorWidthGivesTheBruteForceList) {
  EnumerationOptions o;
  o.untie_vector_width = true;
  const auto want = brute_force(true, 0.3, true, doc_budget());
  const auto got = enumerate_designs(o);
  EXPECT_GT(got.size(), 29360u);
  expect_same_list(got, want);
  EXPECT_EQ(count_designs(o), static_cast<int64_t>(want.size()));
  EXPECT_EQ(candidate_count(o), 75712 * 8);
  // The tied designs are a subsequence of the untied ones.
  size_t j = 0;
  for (const Design& d : got) {
    if (j < default_designs().size() && key_of(d.arch) == key_of(default_designs()[j].arch)) ++j;
  }
  EXPECT_EQ(j, default_designs().size());
}

TEST(HwEnumerate, CoreOverheadsAreChargedToEveryDesignAndTheBudget) {
  // 0.05 mm² per tensor core and 0.02 mm² per vector core: the budget is the reference chip's area with its
  // own 8 and 2 cores' overheads, and each design's area carries its own.
  EnumerationOptions o;
  o.core_overheads = {50000, 20000};
  const double budget = doc_budget() + 8 * 50000 + 2 * 20000;
  EXPECT_NEAR(default_area_budget_um2(o.core_overheads), budget, 1e-6);
  EXPECT_NEAR(area_um2(tpuv4_like(), o.core_overheads), budget, 1e-6);
  const auto want = brute_force(false, 0.3, true, budget, 50000, 20000);
  expect_same_list(enumerate_designs(o), want);
  // The many-core designs no longer fit: 4,096 tensor cores alone now take 204.8 mm².
  const auto many = [](const auto& designs, auto tc_of) {
    return std::count_if(designs.begin(), designs.end(), [&](const auto& d) { return tc_of(d) == 4096; });
  };
  EXPECT_LT(many(want, [](const auto& d) { return std::get<0>(d.first); }),
            many(default_designs(), [](const Design& d) { return d.arch.num_tc; }) / 5);
  EXPECT_EQ(area_um2(tpuv4_like(), CoreOverheads{}), area_um2(tpuv4_like()));  // none: PHAZE's to the bit
}

TEST(HwEnumerate, LowerFractionAndExemptionOptions) {
  for (const double fraction : {0.0, 0.1, 0.5, 0.9, 1.0}) {
    for (const bool exemption : {true, false}) {
      EnumerationOptions o;
      o.lower_fraction = fraction;
      o.single_core_exemption = exemption;
      const auto want = brute_force(false, fraction, exemption, doc_budget());
      SCOPED_TRACE(testing::Message() << "fraction " << fraction << " exemption " << exemption);
      expect_same_list(enumerate_designs(o), want);
    }
  }
  EnumerationOptions half;
  half.lower_fraction = 0.5;
  EXPECT_LT(count_designs(half), 29360);
  EnumerationOptions none;
  none.lower_fraction = 0.0;
  EXPECT_GT(count_designs(none), 29360);
  EnumerationOptions strict;
  strict.single_core_exemption = false;
  EXPECT_LT(count_designs(strict), 29360);
}

TEST(HwEnumerate, BudgetOption) {
  EnumerationOptions o;
  o.budget_um2 = 0;
  EXPECT_TRUE(enumerate_designs(o).empty());
  // Just above the minimum area only the smallest single-core design fits.
  o.budget_um2 = 3355048;
  const auto smallest = enumerate_designs(o);
  ASSERT_EQ(smallest.size(), 1u);
  EXPECT_EQ(key_of(smallest[0].arch), (Key{1, 1, 2, 2, 2, 2}));
  // An explicit budget equal to the default keeps the same designs.
  o.budget_um2 = default_area_budget_um2();
  EXPECT_EQ(count_designs(o), 29360);
  // A larger budget against the brute force.
  o.budget_um2 = 2 * hw_test::kDocAmax;
  expect_same_list(enumerate_designs(o), brute_force(false, 0.3, true, 2 * hw_test::kDocAmax));
}

TEST(HwEnumerate, RangesRestrictEachDimension) {
  EnumerationOptions o;
  o.num_tc = {8, 8};
  o.num_vc = {2, 2};
  o.width = {128, 128};
  o.depth = {64, 128};
  o.glb_bytes = {64ll << 20, 128ll << 20};
  EXPECT_EQ(candidate_count(o), 4);
  const auto designs = enumerate_designs(o);
  std::vector<Key> keys;
  for (const Design& d : designs) keys.push_back(key_of(d.arch));
  // All four are within [0.3·A_max, A_max] by the doc's formula, in canonical order.
  std::vector<Key> want;
  for (const int64_t d : {128, 64})
    for (const int64_t g : {128, 64}) {
      const double area = doc_area(8, 2, 128, d, 128, g);
      if (area >= hw_test::kDocLowerBound && area <= hw_test::kDocAmax) want.push_back(Key{8, 2, 128, d, 128, g});
    }
  EXPECT_EQ(keys, want);
  EXPECT_EQ(want.size(), 4u);

  // A sub-range of the full space keeps exactly the designs of the full list inside it.
  EnumerationOptions sub;
  sub.num_tc = {4, 64};
  sub.width = {8, 32};
  std::vector<Key> expected;
  for (const Design& d : default_designs()) {
    const auto& a = d.arch;
    if (a.num_tc >= 4 && a.num_tc <= 64 && a.tc_width >= 8 && a.tc_width <= 32) expected.push_back(key_of(a));
  }
  std::vector<Key> got;
  for (const Design& d : enumerate_designs(sub)) got.push_back(key_of(d.arch));
  EXPECT_EQ(got, expected);
}

TEST(HwEnumerate, InvalidOptionsAreInputErrors) {
  auto rejects = [](auto&& edit) {
    EnumerationOptions o;
    edit(o);
    EXPECT_THROW(validate(o), phaze::InputError);
    EXPECT_THROW(enumerate_designs(o), phaze::InputError);
    EXPECT_THROW(count_designs(o), phaze::InputError);
  };
  rejects([](EnumerationOptions& o) { o.budget_um2 = -1; });
  rejects([](EnumerationOptions& o) { o.budget_um2 = std::nan(""); });
  rejects([](EnumerationOptions& o) { o.budget_um2 = INFINITY; });
  rejects([](EnumerationOptions& o) { o.lower_fraction = -0.1; });
  rejects([](EnumerationOptions& o) { o.lower_fraction = 1.5; });
  rejects([](EnumerationOptions& o) { o.lower_fraction = std::nan(""); });
  rejects([](EnumerationOptions& o) { o.num_tc = {3, 8}; });
  rejects([](EnumerationOptions& o) { o.num_tc = {16, 8}; });
  rejects([](EnumerationOptions& o) { o.num_vc = {1, 8192}; });
  rejects([](EnumerationOptions& o) { o.width = {1, 256}; });
  rejects([](EnumerationOptions& o) { o.depth = {2, 512}; });
  rejects([](EnumerationOptions& o) {
    o.untie_vector_width = true;
    o.vc_width = {0, 4};
  });
  rejects([](EnumerationOptions& o) { o.glb_bytes = {1 << 20, 128ll << 20}; });
  EnumerationOptions ok;
  ok.lower_fraction = 1.0;
  EXPECT_NO_THROW(validate(ok));
}

}  // namespace
