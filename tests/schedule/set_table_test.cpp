// The exact search's table of task sets (set_table.h) against std::unordered_map on the same random finds,
// inserts and clears, through growth and many clears.

#include "schedule/set_table.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <unordered_map>

namespace {

using phaze::schedule::detail::SetTable;

TEST(SetTable, AgreesWithAHashMapThroughGrowthAndClears) {
  std::mt19937_64 rng(99);
  SetTable<double> table;
  std::unordered_map<uint64_t, double> reference;
  int hits = 0, clears = 0;
  for (int step = 0; step < 200000; ++step) {
    // Few distinct keys, so that finds hit, with the empty set and the full set among them.
    uint64_t key = rng() % 3000;
    if (key == 1) key = ~uint64_t{0};
    if (key % 7 == 0) key <<= 40;  // high bits only
    const auto known = reference.find(key);
    const double* found = table.find(key);
    ASSERT_EQ(found != nullptr, known != reference.end()) << step;
    if (found) {
      ASSERT_EQ(*found, known->second) << step;
      ++hits;
    } else {
      const double value = static_cast<double>(rng() % 1000);
      table.insert(key, value);
      reference.emplace(key, value);
    }
    ASSERT_EQ(table.size(), reference.size());
    if (rng() % 20000 == 0) {
      table.clear();
      reference.clear();
      ++clears;
    }
  }
  EXPECT_GT(hits, 100000);
  EXPECT_GT(clears, 3);
}

TEST(SetTable, IndexingInsertsTheDefaultOnce) {
  struct Count {
    int n = 0;
  };
  SetTable<Count> table;
  for (uint64_t key = 0; key < 1000; ++key) ++table[key % 100].n;
  EXPECT_EQ(table.size(), 100u);
  for (uint64_t key = 0; key < 100; ++key) EXPECT_EQ(table[key].n, 10);
  table.clear();
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(table.find(5), nullptr);
  EXPECT_EQ(table[5].n, 0);
}

}  // namespace
