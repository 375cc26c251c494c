// A point's identity (design_point.h): the key's format, the canonical order against the enumeration's own
// order (hw/enumerate.h builds designs in nested loops, an independent source), equality and the CSV header.

#include "search/design_point.h"

#include <gtest/gtest.h>

#include "hw/enumerate.h"

namespace {

using namespace phaze;

hw::Architecture chip(int64_t tc, int64_t width, int64_t depth, int64_t vc, int64_t vc_width, int64_t glb,
                      int64_t hbm) {
  hw::Architecture a;
  a.num_tc = tc;
  a.tc_width = width;
  a.tc_depth = depth;
  a.num_vc = vc;
  a.vc_width = vc_width;
  a.glb_bytes = glb;
  a.hbm_bytes = hbm;
  return a;
}

TEST(DesignPoint, KeyNamesEveryField) {
  const hw::Architecture a = chip(8, 128, 64, 2, 32, 64ll << 20, 32ll << 30);
  EXPECT_EQ(search::point_key(a, 2, true), "tc8x128x64 vc2x32 glb67108864 bw1200000000000 hbm34359738368 mbs2 rc1");
  EXPECT_EQ(search::point_key({a, 4, false}), "tc8x128x64 vc2x32 glb67108864 bw1200000000000 hbm34359738368 mbs4 rc0");
}

TEST(DesignPoint, CanonicalOrderIsTheEnumerationsOrder) {
  // The untied enumeration runs every loop of the canonical order (vc_width included), largest first.
  hw::EnumerationOptions o;
  o.untie_vector_width = true;
  o.budget_um2 = 1e12;
  o.lower_fraction = 0;
  o.num_tc = {1, 4};
  o.num_vc = {1, 2};
  o.width = {64, 128};
  o.vc_width = {64, 128};
  o.depth = {64, 128};
  o.glb_bytes = {2ll << 20, 4ll << 20};
  const std::vector<hw::Design> designs = hw::enumerate_designs(o);
  ASSERT_EQ(designs.size(), 3u * 2 * 2 * 2 * 2 * 2);
  for (size_t i = 0; i < designs.size(); ++i)
    for (size_t j = 0; j < designs.size(); ++j)
      EXPECT_EQ(search::canonical_before({designs[i].arch, 1, false}, {designs[j].arch, 1, false}), i < j)
          << i << " " << j;
  // The same order on the designs' values, as the rows of the answer keep them.
  for (size_t i = 0; i < designs.size(); ++i)
    for (size_t j = 0; j < designs.size(); ++j)
      EXPECT_EQ(search::canonical_before(search::design_values(designs[i].arch), 1, false,
                                         search::design_values(designs[j].arch), 1, false),
                i < j)
          << i << " " << j;
}

TEST(DesignPoint, AfterTheChipSmallerHbmThenMicroBatchThenRecomputationOff) {
  const hw::Architecture small = chip(1, 8, 8, 1, 8, 2 << 20, 32ll << 30);
  hw::Architecture big = small;
  big.hbm_bytes = 64ll << 30;
  const std::vector<search::PointId> ordered = {{small, 1, false}, {small, 1, true}, {small, 2, false},
                                                {big, 1, false},   {big, 1, true},   {big, 4, true}};
  for (size_t i = 0; i < ordered.size(); ++i)
    for (size_t j = 0; j < ordered.size(); ++j) {
      EXPECT_EQ(search::canonical_before(ordered[i], ordered[j]), i < j) << i << " " << j;
      const search::PointId& a = ordered[i];
      const search::PointId& b = ordered[j];
      EXPECT_EQ(search::canonical_before(search::design_values(a.design), a.micro_batch, a.recompute,
                                         search::design_values(b.design), b.micro_batch, b.recompute),
                i < j)
          << i << " " << j;
    }
}

TEST(DesignPoint, ValuesRoundTripTheIdentityAndNothingElse) {
  const hw::Architecture a = chip(8, 128, 64, 2, 32, 64ll << 20, 32ll << 30);
  hw::Architecture b;
  b.clock_hz = 2e9;
  search::set_design_values(b, search::design_values(a));
  EXPECT_TRUE(search::same_design(a, b));
  EXPECT_EQ(search::point_key(b, 1, false), search::point_key(a, 1, false));
  EXPECT_EQ(b.clock_hz, 2e9);
}

TEST(DesignPoint, SameDesignComparesEveryFieldAndOnlyThem) {
  const hw::Architecture a = chip(8, 128, 64, 2, 32, 64ll << 20, 32ll << 30);
  hw::Architecture b = a;
  b.clock_hz *= 2;  // not part of the identity
  b.name = "other";
  EXPECT_TRUE(search::same_design(a, b));
  for (const search::DesignField& f : search::kDesignFields) {
    hw::Architecture c = a;
    f.set(c, 2 * f.get(c));
    EXPECT_FALSE(search::same_design(a, c)) << f.name;
    hw::Architecture d;
    search::copy_design(d, c);
    EXPECT_TRUE(search::same_design(c, d)) << f.name;
  }
}

TEST(DesignPoint, RecordAndTablesListTheFieldsInOneOrder) {
  const hw::Architecture a = chip(8, 128, 64, 2, 32, 64ll << 20, 32ll << 30);
  EXPECT_EQ(search::design_csv_header(), "num_tc,tc_width,tc_depth,num_vc,vc_width,glb_bytes,hbm_bandwidth,hbm_bytes");
  EXPECT_EQ(search::design_csv(a), "8,128,64,2,32,67108864,1200000000000,34359738368");
  EXPECT_EQ(search::chip_array(a).dump(), "[8,128,64,2,32,67108864,1200000000000]");
  EXPECT_EQ(search::design_object(a, false).dump(),
            R"({"num_tc":8,"tc_width":128,"tc_depth":64,"num_vc":2,"vc_width":32,"glb_bytes":67108864,)"
            R"("hbm_bandwidth":1200000000000})");
  hw::Architecture back;
  search::read_chip_array(search::chip_array(a), back);
  back.hbm_bytes = a.hbm_bytes;
  EXPECT_TRUE(search::same_design(a, back));
}

}  // namespace
