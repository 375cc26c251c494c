// The cores a layer's schedules can use at once: counted by hand on small DAGs, and checked against CBC
// (which schedules on every core of the problem as asked) on random ones.

#include "schedule/usable_cores.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "io/schedule_json.h"
#include "schedule/problem.h"

namespace {

using namespace phaze::schedule;

Task op(TaskKind kind, double single_s, double parallel_s) {
  static int next = 0;
  return Task{"op" + std::to_string(next++), kind, single_s, parallel_s, single_s, parallel_s};
}

// Vector operators v0 → v1, and v2, v3, v4 unordered with them and each other, around a tensor chain: at
// most 4 vector operators run at once ({v0 or v1, v2, v3, v4}), so 2 pairs + 4 unpaired vector cores.
TEST(UsableCores, WidestSetOfVectorOperatorsOnUnpairedCores) {
  Problem p;
  p.tensor_cores = 2;
  p.vector_cores = 64;
  for (int i = 0; i < 5; ++i) p.tasks.push_back(op(TaskKind::Vector, 1, 0.5));
  p.tasks.push_back(op(TaskKind::Tensor, 2, 1));
  p.tasks.push_back(op(TaskKind::Tensor, 2, 1));
  p.edges = {{0, 1}, {5, 6}};
  EXPECT_EQ(usable_cores(p).vector_cores, 6);
  EXPECT_EQ(usable_cores(p).tensor_cores, 2);
  // A layout task between two vector operators still orders them: {v0 → none → v1} leaves the width at 4.
  p.tasks.push_back(op(TaskKind::None, 0, 0));
  p.edges = {{0, 7}, {7, 1}, {5, 6}};
  EXPECT_EQ(usable_cores(p).vector_cores, 6);
  // Unordered, all five can run at once.
  p.edges = {{5, 6}};
  EXPECT_EQ(usable_cores(p).vector_cores, 7);
  // Fewer cores than that stay as they are; fused operators use pairs only.
  p.vector_cores = 5;
  EXPECT_EQ(usable_cores(p).vector_cores, 5);
  p.vector_cores = 64;
  for (Task& t : p.tasks)
    if (t.kind == TaskKind::Vector) t.kind = TaskKind::Fused;
  EXPECT_EQ(usable_cores(p).vector_cores, 2);
}

// Unpaired tensor cores shrink the same way; collectives on the link use no core, but as vector operators
// (the original's rule) they count.
TEST(UsableCores, TensorCoresAndCollectives) {
  Problem p;
  p.tensor_cores = 4096;
  p.vector_cores = 1;
  for (int i = 0; i < 3; ++i) p.tasks.push_back(op(TaskKind::Tensor, 4, 1));
  p.tasks.push_back(op(TaskKind::Comm, 1, 1));
  p.tasks.push_back(op(TaskKind::Comm, 1, 1));
  p.edges = {{0, 1}};
  EXPECT_EQ(usable_cores(p).tensor_cores, 3);
  EXPECT_EQ(usable_cores(p).vector_cores, 1);
  p.tensor_cores = 1;
  p.vector_cores = 16;
  EXPECT_EQ(usable_cores(p).vector_cores, 1);
  p.comm_as_vector = true;
  EXPECT_EQ(usable_cores(p).vector_cores, 3);
}

// On random DAGs with far more cores of one type than the other, the exact solver (which schedules on the
// usable cores) finds the optimum that CBC proves on all the cores, and its schedule is one of the problem
// as asked.
TEST(UsableCores, SameOptimumAsOnAllCores) {
  std::mt19937 rng(20261125);
  std::uniform_int_distribution<int> ops(3, 8), percent(0, 99);
  auto exact = make_exact_solver(), milp = make_milp_solver();
  int shrunk = 0;
  for (int trial = 0; trial < 120; ++trial) {
    Problem p;
    const bool more_vector = trial % 2 == 0;
    p.tensor_cores = more_vector ? 1 + trial % 3 : 12;
    p.vector_cores = more_vector ? 12 : 1 + trial % 3;
    p.comm_as_vector = percent(rng) < 20;
    const int n = ops(rng);
    for (int i = 0; i < n; ++i) {
      const int r = percent(rng);
      const TaskKind kind = r < 40   ? TaskKind::Tensor
                            : r < 80 ? TaskKind::Vector
                            : r < 90 ? TaskKind::Fused
                                     : TaskKind::Comm;
      const double single = std::round(2 * std::uniform_real_distribution<double>(0.5, 10)(rng)) / 2;
      const double parallel =
          kind == TaskKind::Comm ? single : std::max(0.5, std::round(single * (percent(rng) + 10) / 50.0) / 2);
      p.tasks.push_back(op(kind, single, parallel));
      for (int a = 0; a < i; ++a)
        if (percent(rng) < 20) p.edges.emplace_back(a, i);
    }
    SCOPED_TRACE(::testing::Message() << "trial " << trial << ": " << phaze::io::schedule_input_json(p).dump());
    const CoreCounts usable = usable_cores(p);
    shrunk += usable.tensor_cores < p.tensor_cores || usable.vector_cores < p.vector_cores;
    const Schedule a = exact->solve(p), b = milp->solve(p);
    ASSERT_TRUE(a.feasible && b.feasible && b.proven_optimal);
    EXPECT_TRUE(a.proven_optimal);
    EXPECT_NEAR(a.makespan_s, b.makespan_s, 1e-9 * b.makespan_s);
    EXPECT_EQ(check_schedule(p, a, 1e-9), "");
  }
  EXPECT_GT(shrunk, 100);
}

}  // namespace
