// The area-bucket search's pieces (method.md 7, D23): the stop rule on hand-made sequences of bucket maxima,
// the visiting order of hand-made areas and of the real default space (figures from method.md 5 and 7), the
// combinations, and a replay over a hand-made score table.

#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "hw/enumerate.h"
#include "search/buckets.h"
#include "search/question.h"

namespace {

using phaze::search::CombinationState;
using phaze::search::search_buckets;
using phaze::search::stop_rule_fires;
using Maxima = std::vector<std::optional<double>>;
constexpr std::nullopt_t kNone = std::nullopt;  // a bucket where no design is feasible

TEST(SearchBuckets, StopRuleWantsTheLastWindowNonIncreasing) {
  EXPECT_TRUE(stop_rule_fires({5, 4, 3, 2, 1}, 5));
  EXPECT_TRUE(stop_rule_fires({3, 3, 3, 3, 3}, 5));  // equal maxima count as non-increasing
  EXPECT_TRUE(stop_rule_fires({5, 4, 4, 2, 2}, 5));
  EXPECT_TRUE(stop_rule_fires({1, 9, 5, 4, 3, 2}, 5));  // only the last five count
  EXPECT_FALSE(stop_rule_fires({5, 4, 3, 2, 3}, 5));    // the last one rises
  EXPECT_FALSE(stop_rule_fires({4, 5, 3, 2, 1}, 5));    // the first pair rises
  EXPECT_FALSE(stop_rule_fires({5, 4, 3, 2}, 5));       // fewer than the window
  EXPECT_FALSE(stop_rule_fires({}, 5));
  EXPECT_TRUE(stop_rule_fires({7}, 1));  // a window of one fires at the first feasible bucket
  EXPECT_TRUE(stop_rule_fires({1, 2, 2}, 2));
}

TEST(SearchBuckets, SearchStopsAtTheFirstNonIncreasingWindow) {
  // Rises to 9, then 9 ≥ 8 ≥ 8 ≥ 7 ≥ 6 is complete at the 8th bucket; the 9th is never visited.
  const CombinationState s = search_buckets({1, 2, 3, 9, 8, 8, 7, 6, 100}, 5);
  EXPECT_TRUE(s.stop_fired);
  EXPECT_EQ(s.buckets_visited, 8);
  EXPECT_EQ(s.maxima, (std::vector<double>{1, 2, 3, 9, 8, 8, 7, 6}));
  // Never five non-increasing in a row: every bucket is visited.
  const CombinationState all = search_buckets({5, 4, 3, 2, 3, 2, 1, 0.5, 0.6}, 5);
  EXPECT_FALSE(all.stop_fired);
  EXPECT_EQ(all.buckets_visited, 9);
}

TEST(SearchBuckets, BucketsWithoutAFeasibleDesignStayOutOfTheWindow) {
  // The original gave such buckets the maximum -1, which would fire at the 5th bucket (9 ≥ -1 ≥ -1 ≥ -1 ≥ -1);
  // skipped, the window fills at the 9th bucket with 9 ≥ 8 ≥ 7 ≥ 6 ≥ 5.
  const CombinationState s = search_buckets({9, kNone, kNone, kNone, kNone, 8, 7, 6, 5, 4}, 5);
  EXPECT_TRUE(s.stop_fired);
  EXPECT_EQ(s.buckets_visited, 9);
  EXPECT_EQ(s.maxima, (std::vector<double>{9, 8, 7, 6, 5}));
  // The original's -1 would complete 5 ≥ 4 ≥ 3 ≥ 1 ≥ -1 at the fifth bucket; skipped, 1 < 2 follows and
  // the rule never fires.
  const CombinationState rising = search_buckets({5, 4, 3, 1, kNone, 2, 1}, 5);
  EXPECT_FALSE(rising.stop_fired);
  EXPECT_EQ(rising.buckets_visited, 7);
  // Nothing feasible anywhere: every bucket is visited, the rule never fires.
  const CombinationState none = search_buckets({kNone, kNone, kNone, kNone, kNone, kNone}, 5);
  EXPECT_FALSE(none.stop_fired);
  EXPECT_EQ(none.buckets_visited, 6);
  EXPECT_TRUE(none.maxima.empty());
}

TEST(SearchBuckets, FewerFeasibleBucketsThanTheWindowVisitEverything) {
  const CombinationState s = search_buckets({4, 3, 2, kNone, 1}, 5);
  EXPECT_FALSE(s.stop_fired);
  EXPECT_EQ(s.buckets_visited, 5);
  const CombinationState two = search_buckets({4, 3}, 5);
  EXPECT_FALSE(two.stop_fired);
  EXPECT_EQ(two.buckets_visited, 2);
  // The same sequence stops at once with a window of 2.
  EXPECT_EQ(search_buckets({4, 3, 2, kNone, 1}, 2).buckets_visited, 2);
}

TEST(SearchBuckets, FinishBucketWithoutWindowNeverStops) {
  CombinationState s;
  for (double m : {5.0, 4.0, 3.0, 2.0, 1.0, 0.5}) EXPECT_TRUE(phaze::search::finish_bucket(s, m, 3, std::nullopt));
  EXPECT_FALSE(s.stop_fired);
  EXPECT_EQ(s.buckets_visited, 6);
  EXPECT_EQ(s.designs_visited, 18);
}

phaze::hw::Design design_of_area(double area_um2, int64_t num_tc) {
  phaze::hw::Design d;
  d.arch.num_tc = num_tc;
  d.area_um2 = area_um2;
  return d;
}

TEST(SearchBuckets, VisitingOrderIsLargestBucketFirstCanonicalInside) {
  // Canonical order 0..5; with 10,000 µm² buckets: 0, 2, 4 in bucket 2; 3, 5 in bucket 1; 1 in bucket 0.
  const std::vector<phaze::hw::Design> designs = {design_of_area(25'000, 0),   design_of_area(5'000, 1),
                                                  design_of_area(29'999.9, 2), design_of_area(12'000, 3),
                                                  design_of_area(20'000, 4),   design_of_area(10'000, 5)};
  const phaze::search::BucketOrder order = phaze::search::bucket_order(designs, 10'000);
  EXPECT_EQ(order.designs, (std::vector<size_t>{0, 2, 4, 3, 5, 1}));
  EXPECT_EQ(order.start, (std::vector<size_t>{0, 3, 5, 6}));
  EXPECT_EQ(order.buckets(), 3u);
  EXPECT_EQ(order.bucket_of(0), 0u);
  EXPECT_EQ(order.bucket_of(2), 0u);
  EXPECT_EQ(order.bucket_of(3), 1u);
  EXPECT_EQ(order.bucket_of(5), 2u);
  // A wider bucket merges them all; the canonical order stays.
  EXPECT_EQ(phaze::search::bucket_order(designs, 1e6).designs, (std::vector<size_t>{0, 1, 2, 3, 4, 5}));
}

TEST(SearchBuckets, DefaultSpaceHasTheDocumentedBuckets) {
  // method.md 5 and 7: 29,360 designs in 13,506 buckets of 0.01 mm²; the top bucket 27,882 holds the
  // TPUv4-like chip, visited first, and (8, 1, 256, 64, 256, 128 MiB), 3,886.36 µm² smaller.
  const std::vector<phaze::hw::Design> designs = phaze::hw::enumerate_designs();
  const phaze::search::BucketOrder order = phaze::search::bucket_order(designs, 10'000);
  ASSERT_EQ(designs.size(), 29'360u);
  EXPECT_EQ(order.buckets(), 13'506u);
  ASSERT_EQ(order.start[1], 2u);
  const phaze::hw::Design& first = designs[order.designs[0]];
  const phaze::hw::Design& second = designs[order.designs[1]];
  EXPECT_EQ(phaze::search::area_bucket(first.area_um2, 10'000), 27'882);
  EXPECT_EQ(first.arch.num_tc, 8);
  EXPECT_EQ(first.arch.tc_width, 128);
  EXPECT_EQ(first.arch.tc_depth, 128);
  EXPECT_EQ(first.arch.num_vc, 2);
  EXPECT_EQ(first.arch.glb_bytes, 128ll << 20);
  EXPECT_NEAR(first.area_um2, 278'826'676.31216, 1e-4);  // A_max, method.md 5
  EXPECT_EQ(second.arch.num_tc, 8);
  EXPECT_EQ(second.arch.num_vc, 1);
  EXPECT_EQ(second.arch.tc_width, 256);
  EXPECT_EQ(second.arch.tc_depth, 64);
  EXPECT_EQ(second.arch.glb_bytes, 128ll << 20);
  EXPECT_NEAR(first.area_um2 - second.area_um2, 3'886.36, 0.005);
}

TEST(SearchBuckets, CombinationsInQuestionOrder) {
  phaze::search::SearchQuestion q;
  q.micro_batches = {4, 1};
  q.hbm_bytes = {80ll << 30, 32ll << 30};
  const std::vector<phaze::search::Combination> c = phaze::search::combinations(q);
  ASSERT_EQ(c.size(), 8u);
  EXPECT_EQ(c[0], (phaze::search::Combination{4, 80ll << 30, false}));
  EXPECT_EQ(c[1], (phaze::search::Combination{4, 80ll << 30, true}));
  EXPECT_EQ(c[2], (phaze::search::Combination{4, 32ll << 30, false}));
  EXPECT_EQ(c[7], (phaze::search::Combination{1, 32ll << 30, true}));
  q.recompute = phaze::search::RecomputeChoice::On;
  EXPECT_EQ(phaze::search::combinations(q).size(), 4u);
}

TEST(SearchBuckets, ReplayAsksOnlyForTheBucketsVisited) {
  // Six buckets of one design each (areas 60k down to 10k). Combination 0: 6, 5 (window 2 fires after two
  // buckets); combination 1: rising, visits all six; combination 2: infeasible in the first three buckets,
  // then 3, 3 fires after five.
  std::vector<phaze::hw::Design> designs;
  for (int k = 6; k >= 1; --k) designs.push_back(design_of_area(k * 10'000.0 + 1, k));
  const phaze::search::BucketOrder order = phaze::search::bucket_order(designs, 10'000);
  const std::vector<std::vector<std::optional<double>>> table = {
      {6, 5, 4, 3, 2, 1}, {1, 2, 3, 4, 5, 6}, {kNone, kNone, kNone, 3, 3, 1}};
  std::vector<std::vector<bool>> asked(3, std::vector<bool>(6, false));
  const std::vector<CombinationState> states = phaze::search::replay(
      order, 3,
      [&](size_t position, size_t c) {
        asked[c][position] = true;
        return table[c][position];
      },
      2);
  ASSERT_EQ(states.size(), 3u);
  EXPECT_TRUE(states[0].stop_fired);
  EXPECT_EQ(states[0].buckets_visited, 2);
  EXPECT_FALSE(states[1].stop_fired);
  EXPECT_EQ(states[1].buckets_visited, 6);
  EXPECT_TRUE(states[2].stop_fired);
  EXPECT_EQ(states[2].buckets_visited, 5);
  EXPECT_EQ(states[2].designs_visited, 5);
  EXPECT_EQ(asked[0], (std::vector<bool>{true, true, false, false, false, false}));
  EXPECT_EQ(asked[2], (std::vector<bool>{true, true, true, true, true, false}));
}

}  // namespace
