// The dynamic program over segments between parallel runs (segment_dp.cpp) against the exact solver's
// branch and bound alone (two independent exact methods), on a hand-worked example, random DAGs without
// collectives and every seed model's backward transformer layer at t = 1.

#include "schedule/segment_dp.h"

#include <gtest/gtest.h>

#include <random>

#include "cost/operator_cost.h"
#include "hw/presets.h"
#include "model/layer_graph.h"
#include "model/presets.h"
#include "schedule/layer_problem.h"

namespace {

using namespace phaze;
using namespace phaze::schedule;

/// Single-core segment schedules by the branch and bound alone (the segment's tasks cannot run parallel).
detail::SegmentSchedule segment_by_search(const Problem& segment, double cutoff_s) {
  detail::SegmentSchedule out;
  const Schedule s = detail::solve_by_search(segment, 4'000'000);
  out.proven = s.proven_optimal;
  out.found = s.makespan_s < cutoff_s;
  if (out.found) out.schedule = s;
  return out;
}

Task task(const std::string& id, TaskKind kind, double single_s, double parallel_s) {
  return Task{id, kind, single_s, parallel_s, single_s, parallel_s};
}

// p runs parallel (8 → 2 on both tensor cores); then a and b run single-core side by side (4 each, where
// parallel one after another takes 2.5 + 2.5) while the vector operator v (3, one vector core) runs beside
// them; c follows a and b: 2 + max(4, 4, 3) + 1 = 7. Every other choice is longer: p single-core takes 8
// alone, and a parallel run of a or b (2.5) excludes v (3), so it takes at least 2 + 2.5 + 3 + 1 = 8.5.
TEST(SegmentDp, HandWorkedSegmentBetweenParallelRuns) {
  Problem p;
  p.tensor_cores = 2;
  p.vector_cores = 1;
  p.tasks = {task("p", TaskKind::Tensor, 8, 2), task("a", TaskKind::Tensor, 4, 2.5),
             task("b", TaskKind::Tensor, 4, 2.5), task("v", TaskKind::Vector, 3, 3), task("c", TaskKind::Vector, 1, 1)};
  p.edges = {{0, 1}, {0, 2}, {0, 3}, {1, 4}, {2, 4}};
  const std::optional<Schedule> dp = detail::solve_by_segments(p, detail::prepare(p), segment_by_search);
  ASSERT_TRUE(dp.has_value());
  EXPECT_DOUBLE_EQ(dp->makespan_s, 7.0);
  EXPECT_TRUE(dp->tasks[0].parallel);
  EXPECT_FALSE(dp->tasks[1].parallel);
  EXPECT_FALSE(dp->tasks[2].parallel);
  const Schedule exact = make_exact_solver()->solve(p);
  EXPECT_TRUE(exact.proven_optimal);
  EXPECT_DOUBLE_EQ(exact.makespan_s, 7.0);
  EXPECT_EQ(check_schedule(p, exact), "");
  EXPECT_DOUBLE_EQ(detail::solve_by_search(p, 4'000'000).makespan_s, 7.0);
}

TEST(SegmentDp, NotForCollectivesOnTheLinkOrOverlapAcrossTypes) {
  Problem p;
  p.tasks = {task("a", TaskKind::Tensor, 2, 1), task("c", TaskKind::Comm, 1, 1)};
  p.edges = {{0, 1}};
  EXPECT_FALSE(detail::segments_apply(p));
  EXPECT_FALSE(detail::solve_by_segments(p, detail::prepare(p), segment_by_search).has_value());
  p.comm_as_vector = true;  // then a collective is a vector operator that cannot run parallel
  EXPECT_TRUE(detail::segments_apply(p));
  p.overlap_across_types = true;
  EXPECT_FALSE(detail::segments_apply(p));
}

Problem random_problem(std::mt19937& rng, int ops) {
  Problem p;
  const int64_t most = rng() % 3 == 0 ? 8 : 3;
  p.tensor_cores = 1 + static_cast<int64_t>(rng() % most);
  p.vector_cores = 1 + static_cast<int64_t>(rng() % most);
  std::uniform_int_distribution<int> kind(0, 9);
  std::uniform_real_distribution<double> latency(0.5, 10.0), speedup(0.8, 8.0);
  for (int i = 0; i < ops; ++i) {
    const int k = kind(rng);
    const TaskKind what = k < 5   ? TaskKind::Tensor
                          : k < 8 ? TaskKind::Vector
                          : k < 9 ? TaskKind::Fused
                                  : TaskKind::None;
    // A grid of 0.5: ties between segments and parallel runs are exercised.
    const double single = what == TaskKind::None ? 0 : std::round(2 * latency(rng)) / 2;
    const double parallel = what == TaskKind::None ? 0 : std::max(0.5, std::round(2 * single / speedup(rng)) / 2);
    p.tasks.push_back(task("op" + std::to_string(i), what, single, parallel));
  }
  std::bernoulli_distribution edge(0.3);
  for (int a = 0; a < ops; ++a)
    for (int b = a + 1; b < ops; ++b)
      if (edge(rng)) p.edges.emplace_back(a, b);
  return p;
}

TEST(SegmentDp, EqualsTheBranchAndBoundOnRandomDags) {
  std::mt19937 rng(2026);
  int solved_by_segments = 0;
  for (int trial = 0; trial < 80; ++trial) {
    const Problem p = random_problem(rng, 6 + trial % 11);
    SCOPED_TRACE(::testing::Message() << "trial " << trial << ": " << p.tasks.size() << " ops, " << p.tensor_cores
                                      << " TC, " << p.vector_cores << " VC");
    ASSERT_EQ(validate(p), "");
    const Schedule search = detail::solve_by_search(p, 4'000'000);
    const std::optional<Schedule> dp = detail::solve_by_segments(p, detail::prepare(p), segment_by_search);
    if (!search.proven_optimal) {
      // Then the dynamic program's optimum lies between the search's bound and its best schedule.
      if (dp) {
        EXPECT_LE(dp->makespan_s, search.makespan_s * (1 + 1e-9));
        EXPECT_GE(dp->makespan_s, search.lower_bound_s * (1 - 1e-9));
      }
      continue;
    }
    if (dp) {
      ++solved_by_segments;
      EXPECT_NEAR(dp->makespan_s, search.makespan_s, 1e-9 * search.makespan_s);
    }
    const Schedule exact = make_exact_solver()->solve(p);
    EXPECT_TRUE(exact.proven_optimal);
    EXPECT_NEAR(exact.makespan_s, search.makespan_s, 1e-9 * search.makespan_s);
    EXPECT_EQ(check_schedule(p, exact), "");
  }
  EXPECT_GT(solved_by_segments, 60);  // the dynamic program, not its fallback, is what is compared
}

TEST(SegmentDp, BackwardLayersOfSeedModelsEqualTheBranchAndBound) {
  const hw::Architecture arch = *hw::find_preset("tpuv4-like");
  cost::Estimator estimator;
  for (const char* name : {"llama2-7b", "bert-large", "opt-350m", "gpt3-175b"}) {
    SCOPED_TRACE(name);
    const model::ModelSpec spec = *model::find_preset(name);
    const Problem p =
        layer_problem(model::build_transformer_layer(spec, {spec.default_seq, 1, 1}, {}).backward, arch, estimator);
    const Schedule search = detail::solve_by_search(p, 4'000'000);
    ASSERT_TRUE(search.proven_optimal);
    const std::optional<Schedule> dp = detail::solve_by_segments(p, detail::prepare(p), segment_by_search);
    ASSERT_TRUE(dp.has_value());
    EXPECT_NEAR(dp->makespan_s, search.makespan_s, 1e-9 * search.makespan_s);
    const Schedule exact = make_exact_solver()->solve(p);
    EXPECT_TRUE(exact.proven_optimal);
    EXPECT_NEAR(exact.makespan_s, search.makespan_s, 1e-9 * search.makespan_s);
    EXPECT_EQ(check_schedule(p, exact, 1e-15), "");
  }
}

}  // namespace
