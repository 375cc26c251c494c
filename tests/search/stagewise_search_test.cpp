// The co-search under the stagewise planner: on a small question every point's plan is never slower than
// PHAZE's planner's at the same point, re-evaluates to its own time with the placement evaluator from the
// same layer schedules, and keeps each stage's own width, degree and recomputed layers through the record
// round trip.

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "hw/presets.h"
#include "placement/stagewise_plan.h"
#include "search/evaluate.h"
#include "search/point.h"
#include "small_design.h"
#include "tiny_question.h"

namespace {

using namespace phaze;

search::SearchQuestion tiny_question(search::PlannerChoice planner) {
  return search::testing::tiny_question(search::Execution::Phaze, planner);
}

hw::Design design(int64_t cores, int64_t array) {
  return search::testing::small_design(cores, array);
}

TEST(StagewiseSearch, NeverSlowerThanPhazeAndSelfConsistent) {
  const search::SearchQuestion piper = tiny_question(search::PlannerChoice::Stagewise);
  const search::SearchQuestion phaze = tiny_question(search::PlannerChoice::Phaze);
  const search::Workload wp = search::prepare_workload(piper), wq = search::prepare_workload(phaze);
  search::ScheduleCache cache;
  search::Evaluator ep(wp, cache), eq(wq, cache);
  int feasible = 0, faster = 0, mixed = 0;
  for (const hw::Design& d : {design(4, 32), design(16, 16)}) {
    const auto all = [](const std::string&) { return true; };
    const std::vector<search::PointOutcome> general = ep.evaluate(d, all), uniform = eq.evaluate(d, all);
    ASSERT_EQ(general.size(), uniform.size());
    for (size_t k = 0; k < general.size(); ++k) {
      const search::ModelOutcome &g = general[k].models[0], &u = uniform[k].models[0];
      SCOPED_TRACE(general[k].key);
      // Every plan PHAZE's planner finds is one of the stagewise planner's, which may also fit where it
      // does not (a stage at its own width).
      if (u.feasible) {
        ASSERT_TRUE(g.feasible);
        EXPECT_LE(g.time_per_batch_s, u.time_per_batch_s);
        faster += g.time_per_batch_s < u.time_per_batch_s ? 1 : 0;
      }
      if (!g.feasible) continue;
      ++feasible;
      const auto* settings = std::get_if<search::StagewiseSettings>(&g.settings);
      ASSERT_NE(settings, nullptr);
      const std::vector<search::StageSettings>& stagewise = settings->stages;
      ASSERT_EQ(stagewise.size(), g.stages.size());
      int64_t devices = 0;
      for (size_t s = 0; s < g.stages.size(); ++s) {
        devices += g.stages[s].devices * stagewise[s].data_parallel;
        EXPECT_TRUE(general[k].recompute || stagewise[s].recomputed.empty());
        mixed += stagewise[s].width != stagewise[0].width || stagewise[s].data_parallel != stagewise[0].data_parallel;
      }
      EXPECT_LE(devices, piper.devices);
      EXPECT_DOUBLE_EQ(g.samples_per_s * g.time_per_batch_s, static_cast<double>(piper.global_batch));
      // The record keeps the stagewise settings.
      const nlohmann::json text = nlohmann::json::parse(search::to_record(general[k]).dump());
      EXPECT_EQ(search::from_record(general[k].key, text).models, general[k].models);
      EXPECT_FALSE(search::to_record(uniform[k]).at("models").at(0).contains("stagewise"));
    }
  }
  EXPECT_GT(feasible, 10);
  EXPECT_GT(faster, 0);
  EXPECT_GT(mixed, 0);
}

}  // namespace
