// The co-search's pricing seam (search/pricer.h): the question's execution and planner pick one pricer, and
// only the pricers that bound their points before scheduling their layers (PHAZE's execution, either planner)
// leave any out.

#include "search/pricer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "search/evaluate.h"
#include "small_design.h"
#include "tiny_question.h"

namespace {

using namespace phaze;

// A leave-out test that takes every point: the pricers of PHAZE's execution leave all 12 points of the tiny
// question out and schedule nothing for them; Megatron-LM's never asks it.
TEST(PricerSeam, OnlyThePricerThatBoundsItsPointsLeavesThemOut) {
  struct Case {
    search::Execution execution;
    search::PlannerChoice planner;
    bool bounds;
  };
  for (const Case& c : {Case{search::Execution::Phaze, search::PlannerChoice::Phaze, true},
                        Case{search::Execution::Phaze, search::PlannerChoice::Stagewise, true},
                        Case{search::Execution::Megatron, search::PlannerChoice::Phaze, false}}) {
    const search::SearchQuestion q = search::testing::tiny_question(c.execution, c.planner);
    SCOPED_TRACE(std::string(c.execution == search::Execution::Megatron ? "megatron" : "phaze") +
                 (c.planner == search::PlannerChoice::Stagewise ? " stagewise" : ""));
    EXPECT_EQ(search::make_pricer(q)->bounds_points(), c.bounds);
    const search::Workload w = search::prepare_workload(q);
    search::ScheduleCache cache;
    search::Evaluator evaluator(w, cache);
    int asked = 0;
    std::vector<search::LeftOutPoint> left_out;
    const std::vector<search::PointOutcome> points = evaluator.evaluate(
        search::testing::small_design(4, 32), [](const std::string&) { return true; },
        [&](const std::string&, const std::vector<std::optional<search::ModelBound>>&) { return ++asked > 0; },
        &left_out);
    EXPECT_EQ(points.size() + left_out.size(), 12u);
    if (c.bounds) {
      EXPECT_EQ(asked, 12);
      EXPECT_TRUE(points.empty());
      EXPECT_EQ(evaluator.unproven_passes(), 0);
    } else {
      EXPECT_EQ(asked, 0);
      EXPECT_TRUE(left_out.empty());
    }
  }
}

}  // namespace
