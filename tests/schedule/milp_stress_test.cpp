// The MILP solver on thousands of small random questions against the exact solver. CBC and Clp run in a
// forked child per question: Debian's Clp is built with assertions, and an abort inside it (as the
// feasibility pump once caused on about 1 in 300 of these questions) must fail this test, not end the run.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "io/schedule_json.h"
#include "schedule/milp_solver.h"
#include "schedule/problem.h"
#include "support/child_process.h"

namespace {

using phaze::schedule::Problem;
using phaze::schedule::Schedule;
using phaze::schedule::Task;
using phaze::schedule::TaskKind;

/// Latencies with three decimals, as a user writes them; parallel variants 15-100 % of the single-core one.
double millis(std::mt19937& rng, double lo, double hi) {
  return std::round(std::uniform_real_distribution<double>(lo, hi)(rng) * 1000) / 1000;
}

/// 2-6 operators of random units on 1-4 cores of each type, each later operator depending on each earlier
/// one with probability 0.3; sometimes collectives as vector operators.
Problem random_question(std::mt19937& rng) {
  std::uniform_int_distribution<int> ops(2, 6), cores(1, 4), percent(0, 99);
  Problem p;
  p.tensor_cores = cores(rng);
  p.vector_cores = cores(rng);
  p.comm_as_vector = percent(rng) < 10;
  const int n = ops(rng);
  for (int i = 0; i < n; ++i) {
    // Tensor 35 %, vector 35 %, fused 10 %, collective 10 %, layout 10 %.
    const int r = percent(rng);
    Task t;
    t.id = "op" + std::to_string(i);
    t.kind = r < 35   ? TaskKind::Tensor
             : r < 70 ? TaskKind::Vector
             : r < 80 ? TaskKind::Fused
             : r < 90 ? TaskKind::Comm
                      : TaskKind::None;
    if (t.kind != TaskKind::None) {
      t.single_s = millis(rng, 0.1, 12);
      t.parallel_s = t.kind == TaskKind::Comm ? t.single_s : std::max(0.001, millis(rng, 0.15, 1) * t.single_s);
      t.parallel_s = std::round(t.parallel_s * 1000) / 1000;
    }
    p.tasks.push_back(t);
  }
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j)
      if (percent(rng) < 30) p.edges.emplace_back(i, j);
  return p;
}

/// The MILP solver's answer, made in a child: "makespan proven violation".
std::string solve_in_child(const Problem& p) {
  const Schedule s = phaze::schedule::make_milp_solver()->solve(p);
  char line[64];
  std::snprintf(line, sizeof line, "%.17g %d ", s.makespan_s, s.proven_optimal ? 1 : 0);
  return line + phaze::schedule::check_schedule(p, s, 1e-9 * std::max(1.0, s.makespan_s));
}

TEST(MilpStress, FeasibilityPumpAbortExample) {
  // One of the questions on which Clp aborted. Its optimum runs every operator parallel, one after another
  // (the two chains leave nothing to overlap with a parallel run): 1.021 + 2.801 + 4.002 + 2.457.
  Problem p;
  p.tensor_cores = 3;
  p.vector_cores = 4;
  p.tasks = {Task{"op0", TaskKind::Vector, 1.888, 1.021}, Task{"op1", TaskKind::Vector, 8.24, 2.801},
             Task{"op2", TaskKind::Tensor, 10.083, 4.002}, Task{"op3", TaskKind::Tensor, 4.77, 2.457}};
  p.edges = {{0, 2}, {1, 3}};
  const phaze_test::ChildReport child =
      phaze_test::finish_child(phaze_test::start_reporting_child([&p] { return solve_in_child(p); }));
  ASSERT_EQ(child.exit_code, 0) << "the ilp solver's process did not finish";
  double makespan = 0;
  int proven = 0;
  int used = 0;
  ASSERT_EQ(std::sscanf(child.text.c_str(), "%lf %d %n", &makespan, &proven, &used), 2) << child.text;
  EXPECT_EQ(proven, 1);
  EXPECT_NEAR(makespan, 1.021 + 2.801 + 4.002 + 2.457, 1e-9);
  EXPECT_EQ(child.text.substr(static_cast<size_t>(used)), "") << "the schedule check failed";
}

TEST(MilpStress, ThousandsOfSmallQuestionsMatchTheExactSolver) {
  constexpr int kQuestions = 3000;
  constexpr int kInFlight = 2;  // children at once: the test machines have two cores
  std::mt19937 rng(20250301);
  std::vector<Problem> questions;
  for (int q = 0; q < kQuestions; ++q) {
    questions.push_back(random_question(rng));
    // Every third question in the overlap_across_types variant (by its index, which leaves the draws alone).
    questions.back().overlap_across_types = q % 3 == 2;
  }

  int aborted = 0;
  int wrong = 0;
  const auto report = [&](int q, const phaze_test::ChildReport& child) {
    const Problem& p = questions[static_cast<size_t>(q)];
    const std::string question = phaze::io::schedule_input_json(p).dump();
    if (child.exit_code != 0) {
      ++aborted;
      ADD_FAILURE() << "question " << q << ": the ilp solver's process exited with " << child.exit_code << ": "
                    << question;
      return;
    }
    const Schedule exact = phaze::schedule::make_exact_solver()->solve(p);
    ASSERT_TRUE(exact.proven_optimal) << question;
    double makespan = 0;
    int proven = 0;
    int used = 0;
    ASSERT_EQ(std::sscanf(child.text.c_str(), "%lf %d %n", &makespan, &proven, &used), 2) << child.text;
    const std::string violation = child.text.substr(static_cast<size_t>(used));
    const bool ok =
        proven == 1 && violation.empty() && std::abs(makespan - exact.makespan_s) <= 1e-9 * exact.makespan_s;
    if (!ok) {
      ++wrong;
      ADD_FAILURE() << "question " << q << ": ilp " << makespan << (proven ? " proven" : " unproven") << ", exact "
                    << exact.makespan_s << (violation.empty() ? "" : "; " + violation) << ": " << question;
    }
  };

  std::vector<std::pair<int, phaze_test::ReportingChild>> running;
  int started = 0;
  for (int q = 0; q < kQuestions; ++q) {
    ++started;
    running.emplace_back(
        q, phaze_test::start_reporting_child([&p = questions[static_cast<size_t>(q)]] { return solve_in_child(p); }));
    ASSERT_GE(running.back().second.pid, 0) << "fork failed";
    if (static_cast<int>(running.size()) == kInFlight || q + 1 == kQuestions) {
      for (const auto& [index, child] : running) report(index, phaze_test::finish_child(child));
      running.clear();
    }
    if (aborted + wrong >= 10) break;  // enough to diagnose; keep the log short
  }
  for (const auto& [index, child] : running) report(index, phaze_test::finish_child(child));
  std::printf("%d random questions: %d aborted, %d differ from the exact solver\n", started, aborted, wrong);
}

}  // namespace
