// A design evaluated with its micro-batches and layer passes shared among idle threads gives the points of
// an evaluation on one thread, exactly: which thread schedules a pass or plans a micro-batch changes nothing.

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "model/presets.h"
#include "search/evaluate.h"
#include "search/point.h"
#include "small_design.h"
#include "util/work_sharing.h"

namespace {

using namespace phaze;

search::SearchQuestion question() {
  search::ModelCase m;
  m.source = "tiny";
  m.spec = model::megatron_gpt("tiny", "test GPT", 6, 64, 4, 64);
  m.seq = 64;
  m.widths = {1, 2, 4};
  search::ModelCase wide = m;
  wide.spec = model::megatron_gpt("wide", "test GPT", 4, 128, 8, 64);
  search::SearchQuestion q;
  q.models = {m, wide};
  q.devices = 12;
  q.global_batch = 24;
  q.micro_batches = {1, 2, 4};
  q.hbm_bytes = {int64_t{3} << 20, int64_t{8} << 20, int64_t{1} << 30};
  return q;
}

TEST(SharedEvaluation, PointsAreThoseOfOneThread) {
  const search::SearchQuestion q = question();
  const search::Workload workload = search::prepare_workload(q);
  const auto all = [](const std::string&) { return true; };
  // Separate caches: the shared evaluation schedules every pass again rather than finding it cached.
  search::ScheduleCache alone_cache, shared_cache;
  search::Evaluator alone(workload, alone_cache), shared(workload, shared_cache);
  WorkSharing sharing;
  shared.share_work(sharing);
  std::atomic<bool> stop{false};
  std::vector<std::thread> helpers;
  for (int k = 0; k < 3; ++k) helpers.emplace_back([&] { sharing.help_until([&] { return stop.load(); }); });
  int points = 0;
  for (const hw::Design& d : {search::testing::small_design(4, 32), search::testing::small_design(16, 16),
                              search::testing::small_design(2, 64)}) {
    const std::vector<search::PointOutcome> one = alone.evaluate(d, all), many = shared.evaluate(d, all);
    ASSERT_EQ(one.size(), many.size());
    for (size_t k = 0; k < one.size(); ++k) {
      SCOPED_TRACE(one[k].key);
      EXPECT_EQ(one[k], many[k]);
      EXPECT_EQ(search::to_record(one[k]).dump(), search::to_record(many[k]).dump());
      points += one[k].feasible ? 1 : 0;
    }
  }
  stop = true;
  sharing.wake();
  for (std::thread& t : helpers) t.join();
  EXPECT_GT(points, 10);
  EXPECT_EQ(alone.unproven_passes(), shared.unproven_passes());
}

// A point dropped while its design is under way (the search's combination stopped meanwhile) is not returned,
// and the points kept are those of an evaluation that never asked for it.
TEST(SharedEvaluation, PointsDroppedMidwayLeaveTheOthersAsAskedAlone) {
  const search::SearchQuestion q = question();
  const search::Workload workload = search::prepare_workload(q);
  // Kept: micro-batch 2 and every point with 1 GiB of HBM.
  const auto kept = [](const std::string& key) {
    return key.find(" mbs2 ") != std::string::npos || key.find(" hbm1073741824 ") != std::string::npos;
  };
  int asked_again = 0;
  std::set<std::string> listed;
  const auto changing = [&](const std::string& key) {
    if (listed.insert(key).second) return true;  // every point is asked for at first
    ++asked_again;
    return kept(key);
  };
  search::ScheduleCache changing_cache, alone_cache;
  search::Evaluator dropping(workload, changing_cache), alone(workload, alone_cache);
  size_t returned = 0;
  for (const hw::Design& d : {search::testing::small_design(4, 32), search::testing::small_design(2, 64)}) {
    listed.clear();
    const std::vector<search::PointOutcome> got = dropping.evaluate(d, changing), want = alone.evaluate(d, kept);
    ASSERT_EQ(got.size(), want.size());
    for (size_t k = 0; k < got.size(); ++k) {
      SCOPED_TRACE(want[k].key);
      EXPECT_TRUE(kept(got[k].key));
      EXPECT_EQ(search::to_record(got[k]).dump(), search::to_record(want[k]).dump());
    }
    returned += got.size();
    EXPECT_LT(got.size(), listed.size());
  }
  EXPECT_GT(returned, 4u);
  EXPECT_GT(asked_again, 0);
}

}  // namespace
