// The MILP solver on CBC (layer-schedule.md 3-4): the worked examples A-F of section 8 with their phase-1
// and final makespans, the outputs of example E, edge cases, instances on which a CBC setting went wrong,
// and small random instances against an independent enumeration (section 7).

#include "schedule/milp_solver.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "schedule/problem.h"
#include "util/input_error.h"

namespace {

using phaze::schedule::check_schedule;
using phaze::schedule::make_milp_solver;
using phaze::schedule::Problem;
using phaze::schedule::Schedule;
using phaze::schedule::Task;
using phaze::schedule::TaskKind;
using phaze::schedule::detail::MilpReport;
using phaze::schedule::detail::solve_milp;

constexpr double kTol = 1e-9;

Task task(std::string id, TaskKind kind, double single, double parallel, double e_single = 0, double e_parallel = 0) {
  return Task{std::move(id), kind, single, parallel, e_single, e_parallel};
}

/// prefix + i (appending avoids GCC 12's false -Wrestrict on `"literal" + std::string`).
std::string numbered(const char* prefix, int i) {
  std::string s = prefix;
  s += std::to_string(i);
  return s;
}

Problem chip(int64_t tc, int64_t vc) {
  Problem p;
  p.tensor_cores = tc;
  p.vector_cores = vc;
  return p;
}

/// Solves through the two-phase scheme of the documented model (no valid inequalities), checks the schedule
/// independently and the phase-1 / final values; then solves with the valid inequalities, which change the
/// phases (phase 1 sees the core counts) but not the optimum.
Schedule solve_and_check(const Problem& p, double phase1, double final_t, MilpReport* report_out = nullptr) {
  phaze::schedule::detail::MilpOptions with_cuts;
  const Schedule cut = solve_milp(p, with_cuts);
  EXPECT_TRUE(cut.proven_optimal);
  EXPECT_NEAR(cut.makespan_s, final_t, kTol);
  EXPECT_EQ(check_schedule(p, cut, 1e-9), "");
  phaze::schedule::detail::MilpOptions documented;
  documented.valid_inequalities = false;
  MilpReport report;
  const Schedule s = solve_milp(p, documented, &report);
  EXPECT_TRUE(s.feasible);
  EXPECT_TRUE(s.proven_optimal);
  EXPECT_EQ(check_schedule(p, s, 1e-9), "");
  EXPECT_FALSE(report.phases.empty());
  if (!report.phases.empty()) {
    EXPECT_NEAR(report.phases.front().objective_s, phase1, kTol);
    EXPECT_NEAR(report.phases.front().replay_makespan_s, phase1, kTol);
    EXPECT_NEAR(report.phases.back().objective_s, final_t, kTol);
  }
  EXPECT_LE(report.phases.size(), 3u);
  EXPECT_NEAR(s.makespan_s, final_t, kTol);
  if (report_out != nullptr) *report_out = report;
  return s;
}

// ---------------------------------------------------------------------------------------------------
// Example A: a chain, every operator parallel.

TEST(MilpExamples, AChain) {
  Problem p = chip(4, 2);
  p.tasks = {task("G1", TaskKind::Tensor, 5, 2), task("SM", TaskKind::Vector, 3, 1.5),
             task("G2", TaskKind::Fused, 4, 3)};
  p.edges = {{0, 1}, {1, 2}};
  MilpReport report;
  const Schedule s = solve_and_check(p, 6.5, 6.5, &report);
  ASSERT_EQ(report.phases.size(), 1u);
  EXPECT_EQ(report.phases[0].tensor_peak, 4);
  EXPECT_EQ(report.phases[0].vector_peak, 2);
  ASSERT_EQ(s.tasks.size(), 3u);
  EXPECT_NEAR(s.tasks[0].start_s, 0, kTol);
  EXPECT_NEAR(s.tasks[1].start_s, 2, kTol);
  EXPECT_NEAR(s.tasks[2].start_s, 3.5, kTol);
  for (const auto& slot : s.tasks) EXPECT_TRUE(slot.parallel);
}

// ---------------------------------------------------------------------------------------------------
// Example B: fork/join, forward and backward.

TEST(MilpExamples, BForward) {
  Problem p = chip(2, 1);
  p.tasks = {task("A", TaskKind::Tensor, 4, 3), task("B", TaskKind::Tensor, 6, 4), task("C", TaskKind::Vector, 5, 5),
             task("D", TaskKind::Vector, 2, 2)};
  p.edges = {{0, 1}, {0, 2}, {1, 3}, {2, 3}};
  MilpReport report;
  const Schedule s = solve_and_check(p, 11, 11, &report);
  ASSERT_EQ(report.phases.size(), 1u);
  EXPECT_EQ(report.phases[0].tensor_peak, 2);
  EXPECT_EQ(report.phases[0].vector_peak, 1);
  EXPECT_TRUE(s.tasks[0].parallel);
  EXPECT_FALSE(s.tasks[1].parallel);
  EXPECT_NEAR(s.tasks[1].start_s, 3, kTol);
  EXPECT_NEAR(s.tasks[3].start_s, 9, kTol);
}

TEST(MilpExamples, BBackward) {
  Problem p = chip(2, 1);
  p.tasks = {task("A", TaskKind::Tensor, 8, 6), task("B", TaskKind::Tensor, 12, 8), task("C", TaskKind::Vector, 5, 5),
             task("D", TaskKind::Vector, 2, 2)};
  p.edges = {{3, 1}, {3, 2}, {1, 0}, {2, 0}};
  MilpReport report;
  const Schedule s = solve_and_check(p, 20, 20, &report);
  ASSERT_EQ(report.phases.size(), 1u);
  EXPECT_EQ(report.phases[0].tensor_peak, 2);
  EXPECT_EQ(report.phases[0].vector_peak, 1);
  EXPECT_TRUE(s.tasks[0].parallel);
  EXPECT_NEAR(s.tasks[0].start_s, 14, kTol);
}

// ---------------------------------------------------------------------------------------------------
// Example C: the core limit triggers phase 2.

Problem example_c(double parallel) {
  Problem p = chip(2, 1);
  for (int i = 1; i <= 4; ++i) p.tasks.push_back(task(numbered("G", i), TaskKind::Tensor, 4, parallel));
  return p;
}

TEST(MilpExamples, CCoreLimit) {
  MilpReport report;
  solve_and_check(example_c(2.5), 4, 8, &report);
  ASSERT_EQ(report.phases.size(), 2u);
  EXPECT_EQ(report.phases[0].tensor_peak, 4);
  EXPECT_EQ(report.phases[0].vector_peak, 0);
  EXPECT_TRUE(report.phases[1].tensor_constraints);
  EXPECT_FALSE(report.phases[1].vector_constraints);
}

TEST(MilpExamples, CFastParallel) {
  MilpReport report;
  const Schedule s = solve_and_check(example_c(1.9), 4, 7.6, &report);
  EXPECT_EQ(report.phases.size(), 2u);
  for (const auto& slot : s.tasks) EXPECT_TRUE(slot.parallel);
}

TEST(MilpExamples, CTie) {
  solve_and_check(example_c(2.0), 4, 8);
}

// ---------------------------------------------------------------------------------------------------
// Example D: a fused operator and the pairing.

TEST(MilpExamples, DFusedPairing) {
  Problem p = chip(2, 1);
  p.tasks = {task("F", TaskKind::Fused, 5, 4), task("V", TaskKind::Vector, 3, 3), task("T", TaskKind::Tensor, 6, 3.5)};
  MilpReport report;
  const Schedule s = solve_and_check(p, 6, 8, &report);
  ASSERT_GE(report.phases.size(), 2u);
  EXPECT_EQ(report.phases[0].tensor_peak, 2);
  EXPECT_EQ(report.phases[0].vector_peak, 2);
  EXPECT_FALSE(report.phases[1].tensor_constraints);
  EXPECT_TRUE(report.phases[1].vector_constraints);
  EXPECT_FALSE(s.tasks[0].parallel);
  EXPECT_EQ(s.tasks[0].tensor_core, 0);
  EXPECT_EQ(s.tasks[0].vector_core, 0);
  EXPECT_EQ(s.tasks[2].tensor_core, 1);
}

// ---------------------------------------------------------------------------------------------------
// Example E: the attention block.

Problem example_e_forward() {
  Problem p = chip(2, 1);
  // Energies: single 1, 2, 4, 8, 16, 32; parallel 100, 200, ... (powers of two identify the choices).
  p.tasks = {task("Q", TaskKind::Tensor, 6, 4, 1, 100),   task("K", TaskKind::Tensor, 6, 4, 2, 200),
             task("V", TaskKind::Tensor, 6, 4, 4, 400),   task("S", TaskKind::Tensor, 4, 2.5, 8, 800),
             task("M", TaskKind::Vector, 3, 3, 16, 1600), task("P", TaskKind::Tensor, 4, 2.5, 32, 3200)};
  p.edges = {{0, 3}, {1, 3}, {3, 4}, {4, 5}, {2, 5}};
  return p;
}

TEST(MilpExamples, EForward) {
  const Problem p = example_e_forward();
  MilpReport report;
  const Schedule s = solve_and_check(p, 14, 15.5, &report);
  ASSERT_EQ(report.phases.size(), 2u);
  EXPECT_EQ(report.phases[0].tensor_peak, 3);
  EXPECT_EQ(report.phases[0].vector_peak, 1);
  EXPECT_TRUE(report.phases[1].tensor_constraints);
  EXPECT_FALSE(report.phases[1].vector_constraints);
  EXPECT_NEAR(s.tensor_utilisation, 0.870968, 1e-6);
  EXPECT_NEAR(s.vector_utilisation, 0.193548, 1e-6);
  EXPECT_DOUBLE_EQ(s.tensor_peak, 1.0);
  EXPECT_DOUBLE_EQ(s.vector_peak, 1.0);
  EXPECT_DOUBLE_EQ(s.energy_j, 1 + 2 + 4 + 8 + 16 + 3200);
  EXPECT_TRUE(s.tasks[5].parallel);
  EXPECT_NEAR(s.tasks[5].start_s, 13, kTol);
}

TEST(MilpExamples, EForwardWithNop) {
  Problem p = example_e_forward();
  // A transpose between K and S: K -> N -> S instead of K -> S.
  p.tasks.push_back(task("N", TaskKind::None, 0, 0));
  p.edges = {{0, 3}, {1, 6}, {6, 3}, {3, 4}, {4, 5}, {2, 5}};
  const Schedule s = solve_and_check(p, 14, 15.5);
  ASSERT_EQ(s.tasks.size(), 7u);
  EXPECT_NEAR(s.tasks[6].start_s, s.tasks[1].finish_s, kTol);
  EXPECT_NEAR(s.tasks[6].finish_s, s.tasks[6].start_s, 0);
  EXPECT_FALSE(s.tasks[6].parallel);
  EXPECT_EQ(s.tasks[6].tensor_core, -1);
  EXPECT_EQ(s.tasks[6].vector_core, -1);
  EXPECT_NEAR(s.tensor_utilisation, 0.870968, 1e-6);
}

TEST(MilpExamples, EBackward) {
  Problem p = chip(2, 1);
  p.tasks = {task("Q", TaskKind::Tensor, 12, 8), task("K", TaskKind::Tensor, 12, 8), task("V", TaskKind::Tensor, 12, 8),
             task("S", TaskKind::Tensor, 8, 5),  task("M", TaskKind::Vector, 3, 3),  task("P", TaskKind::Tensor, 8, 5)};
  p.edges = {{3, 0}, {3, 1}, {4, 3}, {5, 4}, {5, 2}};
  MilpReport report;
  solve_and_check(p, 25, 29, &report);
  ASSERT_EQ(report.phases.size(), 2u);
  EXPECT_EQ(report.phases[0].tensor_peak, 3);
  EXPECT_EQ(report.phases[0].vector_peak, 1);
}

// ---------------------------------------------------------------------------------------------------
// Example F: a collective on the link, or (original rules) on a vector core.

Problem example_f(bool comm_as_vector) {
  Problem p = chip(2, 1);
  p.tasks = {task("D1", TaskKind::Tensor, 6, 4), task("W1", TaskKind::Tensor, 8, 4), task("AR", TaskKind::Comm, 5, 5),
             task("LN", TaskKind::Vector, 2, 2)};
  p.edges = {{0, 2}, {2, 3}};
  p.comm_as_vector = comm_as_vector;
  return p;
}

TEST(MilpExamples, FCollectiveOnLink) {
  MilpReport report;
  const Schedule s = solve_and_check(example_f(false), 11, 11, &report);
  ASSERT_EQ(report.phases.size(), 1u);
  EXPECT_LE(report.phases[0].tensor_peak, 2);
  EXPECT_LE(report.phases[0].vector_peak, 1);
  EXPECT_TRUE(s.tasks[1].parallel);
  EXPECT_FALSE(s.tasks[2].parallel);
  EXPECT_EQ(s.tasks[2].vector_core, -1);
}

TEST(MilpExamples, FCollectiveAsVector) {
  MilpReport report;
  const Schedule s = solve_and_check(example_f(true), 12, 12, &report);
  ASSERT_EQ(report.phases.size(), 1u);
  EXPECT_FALSE(s.tasks[1].parallel);
  EXPECT_FALSE(s.tasks[2].parallel);
  EXPECT_EQ(s.tasks[2].vector_core, 0);
}

// ---------------------------------------------------------------------------------------------------
// The public solver, units and edge cases.

TEST(MilpSolver, NameAndPublicEntryPoint) {
  const auto solver = make_milp_solver();
  ASSERT_NE(solver, nullptr);
  EXPECT_EQ(solver->name(), "ilp");
  const Problem p = example_e_forward();
  const Schedule s = solver->solve(p);
  EXPECT_TRUE(s.feasible);
  EXPECT_TRUE(s.proven_optimal);
  EXPECT_NEAR(s.makespan_s, 15.5, kTol);
  EXPECT_EQ(check_schedule(p, s), "");
}

TEST(MilpSolver, SecondsScaleLatencies) {
  // Example E in microseconds and example D in tenths of seconds: the internal scaling keeps them exact.
  Problem p = example_e_forward();
  for (Task& t : p.tasks) {
    t.single_s *= 1e-6;
    t.parallel_s *= 1e-6;
  }
  Schedule s = make_milp_solver()->solve(p);
  EXPECT_NEAR(s.makespan_s, 15.5e-6, 1e-15);
  EXPECT_EQ(check_schedule(p, s), "");

  Problem d = chip(2, 1);
  d.tasks = {task("F", TaskKind::Fused, 5e-1, 4e-1), task("V", TaskKind::Vector, 3e-1, 3e-1),
             task("T", TaskKind::Tensor, 6e-1, 3.5e-1)};
  s = make_milp_solver()->solve(d);
  EXPECT_NEAR(s.makespan_s, 0.8, 1e-12);
  EXPECT_EQ(check_schedule(d, s), "");
}

TEST(MilpSolver, TinyDifferencesAgainstALargeLatency) {
  // Example C in microseconds with ℓ' = 1.99 µs (all four parallel: 7.96 µs, 40 ns better than 8 µs), next to
  // a task whose unused single-core variant takes 0.1 s. That variant once set the internal time unit (the
  // two candidate makespans then differed by 4e-7 units, below CBC's default cutoff increment of 1e-5);
  // being longer than the serial schedule it is now dropped, and the answer must not change.
  Problem p = example_c(1.99);
  for (Task& t : p.tasks) {
    t.single_s *= 1e-6;
    t.parallel_s *= 1e-6;
  }
  p.tasks.push_back(task("X", TaskKind::Vector, 0.1, 1e-6));
  p.edges.push_back({0, 4});
  const Schedule s = make_milp_solver()->solve(p);
  EXPECT_NEAR(s.makespan_s, 7.96e-6 + 1e-6, 1e-13);
  EXPECT_EQ(check_schedule(p, s), "");
}

TEST(MilpSolver, ImprovementBelowDefaultCutoffIncrement) {
  // Serially 0.1 s + 0.2 µs; both single-core side by side 0.1 s. The improvement, 2e-6 internal units, is
  // below CBC's default cutoff increment (1e-5) and is lost when the serial schedule is handed to CbcMain1
  // as a first incumbent.
  Problem p = chip(2, 1);
  p.tasks = {task("A", TaskKind::Tensor, 0.1, 0.1), task("B", TaskKind::Tensor, 2e-7, 3e-7)};
  const Schedule s = make_milp_solver()->solve(p);
  EXPECT_NEAR(s.makespan_s, 0.1, 1e-12);
  EXPECT_EQ(check_schedule(p, s), "");
}

TEST(MilpSolver, NonFiniteOrNegativeLatencyIsInfeasible) {
  Problem p = example_e_forward();
  p.tasks[2].parallel_s = std::numeric_limits<double>::infinity();
  EXPECT_FALSE(make_milp_solver()->solve(p).feasible);
  p = example_e_forward();
  p.tasks[4].single_s = std::nan("");
  EXPECT_FALSE(make_milp_solver()->solve(p).feasible);
  p = example_e_forward();
  p.tasks[0].single_s = -1;
  EXPECT_FALSE(make_milp_solver()->solve(p).feasible);
}

TEST(MilpSolver, MalformedProblemThrows) {
  Problem p = example_e_forward();
  p.edges.push_back({5, 0});  // cycle Q -> S -> M -> P -> Q
  EXPECT_THROW(make_milp_solver()->solve(p), std::invalid_argument);
  p = example_e_forward();
  p.edges.push_back({0, 9});
  EXPECT_THROW(make_milp_solver()->solve(p), std::invalid_argument);
}

TEST(MilpSolver, EmptyAndZeroLatencyProblems) {
  Problem empty = chip(2, 1);
  Schedule s = make_milp_solver()->solve(empty);
  EXPECT_TRUE(s.feasible);
  EXPECT_EQ(s.makespan_s, 0);
  EXPECT_TRUE(s.tasks.empty());

  Problem zero = chip(2, 1);
  zero.tasks = {task("A", TaskKind::Tensor, 0, 3), task("N", TaskKind::None, 0, 0), task("B", TaskKind::Fused, 2, 0),
                task("C", TaskKind::Comm, 0, 0)};
  zero.edges = {{0, 1}, {1, 2}};
  s = make_milp_solver()->solve(zero);
  EXPECT_TRUE(s.feasible);
  EXPECT_EQ(s.makespan_s, 0);
  EXPECT_FALSE(s.tasks[0].parallel);
  EXPECT_TRUE(s.tasks[2].parallel);
  EXPECT_EQ(check_schedule(zero, s), "");
}

TEST(MilpSolver, OnlyNops) {
  Problem p = chip(1, 1);
  p.tasks = {task("a", TaskKind::None, 0, 0), task("b", TaskKind::None, 0, 0)};
  p.edges = {{0, 1}};
  const Schedule s = make_milp_solver()->solve(p);
  EXPECT_TRUE(s.feasible);
  EXPECT_EQ(s.makespan_s, 0);
  EXPECT_EQ(check_schedule(p, s), "");
}

TEST(MilpSolver, OverlapAcrossTypesVariant) {
  // A parallel GEMM may overlap a vector operator in the variant: max(2, 3) = 3 instead of 2 + 3 (or the
  // single-core GEMM alongside the vector operator, max(4, 3) = 4).
  Problem p = chip(2, 1);
  p.tasks = {task("G", TaskKind::Tensor, 4, 2), task("V", TaskKind::Vector, 3, 3)};
  Schedule s = make_milp_solver()->solve(p);
  EXPECT_NEAR(s.makespan_s, 4, kTol);
  EXPECT_EQ(check_schedule(p, s), "");
  p.overlap_across_types = true;
  s = make_milp_solver()->solve(p);
  EXPECT_NEAR(s.makespan_s, 3, kTol);
  EXPECT_TRUE(s.tasks[0].parallel);
  EXPECT_EQ(check_schedule(p, s), "");
}

TEST(MilpSolver, CollectivesShareTheLink) {
  // Two independent collectives of 3 and one GEMM: the link serialises them (6), the GEMM runs alongside.
  Problem p = chip(1, 1);
  p.tasks = {task("AR1", TaskKind::Comm, 3, 3), task("AR2", TaskKind::Comm, 3, 3), task("G", TaskKind::Tensor, 5, 5)};
  const Schedule s = make_milp_solver()->solve(p);
  EXPECT_NEAR(s.makespan_s, 6, kTol);
  EXPECT_EQ(check_schedule(p, s), "");
}

TEST(MilpSolver, PairingNeedsBothCoreTypes) {
  // Two tensor and two vector cores; fused operators need a pair index. Four independent fused operators of
  // 4 (parallel 3.9) fit two at a time on the two pairs: 8.
  Problem p = chip(2, 2);
  for (int i = 0; i < 4; ++i) p.tasks.push_back(task(numbered("F", i), TaskKind::Fused, 4, 3.9));
  const Schedule s = make_milp_solver()->solve(p);
  EXPECT_NEAR(s.makespan_s, 8, kTol);
  EXPECT_EQ(check_schedule(p, s), "");
}

TEST(MilpSolver, PairingCheckFailureResolvesWithBothTypes) {
  // Two pairs. The only schedule of length 10: A [0,10), X [0,1), D [1,10), C [0,5), F [5,10) (every chain is
  // critical; the all-cores variants are slower). Peaks are 2 and 2, but the greedy rule puts A on TC1, X on
  // TC0, C on VC1, D on VC0, so at 5 no pair is free for F: TC0 and VC1 are. Both core types are enabled and
  // the re-solve pairs F on index 1 (X on TC1, C on VC1).
  Problem p = chip(2, 2);
  p.tasks = {task("A", TaskKind::Tensor, 10, 20), task("X", TaskKind::Tensor, 1, 2), task("C", TaskKind::Vector, 5, 10),
             task("D", TaskKind::Vector, 9, 18), task("F", TaskKind::Fused, 5, 10)};
  p.edges = {{1, 3}, {2, 4}};
  MilpReport report;
  const Schedule s = solve_and_check(p, 10, 10, &report);
  EXPECT_TRUE(report.pairing_failed);
  EXPECT_TRUE(report.cores_from_z);
  ASSERT_EQ(report.phases.size(), 2u);
  EXPECT_TRUE(report.phases[1].tensor_constraints);
  EXPECT_TRUE(report.phases[1].vector_constraints);
  EXPECT_EQ(s.tasks[4].tensor_core, s.tasks[4].vector_core);
}

// ---------------------------------------------------------------------------------------------------
// Regressions: instances on which a CBC setting returned a wrong "optimal" makespan.

TEST(MilpRegression, Llama2ForwardLayerAtWidthEight) {
  // The llama2-7b forward layer at t = 8 on the TPUv4-like chip (8 tensor, 2 vector cores). With CBC's
  // integer preprocessing, root cuts raised the bound above the optimum and 0.0309902 s came back as
  // optimal. The optimum is the serial schedule of fastest variants, H itself.
  Problem p = chip(8, 2);
  p.tasks = {task("F1", TaskKind::Vector, 0.00037525333333333335, 0.00018762666666666668),
             task("F2", TaskKind::None, 0, 0),
             task("F3q", TaskKind::Tensor, 0.00049956571428571434, 6.3390476190476185e-05),
             task("F3k", TaskKind::Tensor, 0.00049956571428571434, 6.3390476190476185e-05),
             task("F3v", TaskKind::Tensor, 0.00049956571428571434, 6.3390476190476185e-05),
             task("F4q", TaskKind::Vector, 6.2415238095238097e-05, 3.1207619047619048e-05),
             task("F4k", TaskKind::Vector, 6.2415238095238097e-05, 3.1207619047619048e-05),
             task("F5", TaskKind::Fused, 0.00099888761904761911, 0.00049944380952380955),
             task("F6", TaskKind::Vector, 0.0024978285714285712, 0.0012489142857142856),
             task("F8", TaskKind::Tensor, 0.00049956571428571434, 0.00011883861333333333),
             task("F9", TaskKind::None, 0, 0),
             task("F10", TaskKind::Tensor, 0.00049956571428571434, 6.2659047619047619e-05),
             task("F11", TaskKind::Comm, 0.013671875, 0.013671875),
             task("F12", TaskKind::Vector, 0.00012483047619047619, 8.3886079999999995e-05),
             task("F13", TaskKind::Vector, 0.00037525333333333335, 0.00018762666666666668),
             task("F14", TaskKind::None, 0, 0),
             task("F15g", TaskKind::Tensor, 0.0013733790476190477, 0.00017231238095238095),
             task("F15u", TaskKind::Tensor, 0.0013733790476190477, 0.00017231238095238095),
             task("F15s", TaskKind::Vector, 0.00012580571428571428, 6.2902857142857141e-05),
             task("F16", TaskKind::Tensor, 0.0013733790476190477, 0.00017188571428571427),
             task("F17", TaskKind::Comm, 0.013671875, 0.013671875),
             task("F18", TaskKind::Vector, 0.00012483047619047619, 8.3886079999999995e-05)};
  p.edges = {{0, 1},   {1, 2},   {1, 3},   {1, 4},   {2, 5},   {3, 6},   {5, 7},   {6, 7},   {7, 8},
             {4, 9},   {8, 9},   {9, 10},  {10, 11}, {11, 12}, {12, 13}, {13, 14}, {14, 15}, {15, 16},
             {15, 17}, {16, 18}, {17, 18}, {18, 19}, {19, 20}, {13, 21}, {20, 21}};
  double serial = 0;
  for (const Task& t : p.tasks)
    if (t.kind != TaskKind::None) serial += t.kind == TaskKind::Comm ? t.single_s : std::min(t.single_s, t.parallel_s);
  const Schedule s = make_milp_solver()->solve(p);
  EXPECT_TRUE(s.proven_optimal);
  EXPECT_NEAR(s.makespan_s, serial, 1e-12 * serial);
  EXPECT_EQ(check_schedule(p, s, 1e-12), "");
}

TEST(MilpRegression, LatenciesOverFiveDecades) {
  // Latencies from 0.8 µs to 0.097 s (3 tensor, 2 vector cores). With CBC's default dual tolerance (1e-7)
  // the root LP bound came out 8e-6 internal units too high and a schedule 0.8 µs longer than the optimum
  // (t1 single, t7 parallel, t8 parallel) was reported as optimal.
  Problem p = chip(3, 2);
  p.tasks = {task("t0", TaskKind::Tensor, 0.0035477359982782233, 0.0032920130453872841),
             task("t1", TaskKind::Tensor, 0.090251434429989175, 0.097103719709596942),
             task("t2", TaskKind::Tensor, 5.4578100043431904e-05, 4.3019625666483957e-05),
             task("t3", TaskKind::Tensor, 0.059331981690086952, 0.042384704217866435),
             task("t4", TaskKind::Vector, 0.0017774318692900346, 0.0017900961999748675),
             task("t5", TaskKind::Vector, 0.00016602688579783038, 5.9864058664902873e-05),
             task("t6", TaskKind::Tensor, 1.4099209386671903e-06, 7.7366395122031782e-07),
             task("t7", TaskKind::Fused, 0.046550085572311231, 0.014012429154543413),
             task("t8", TaskKind::Tensor, 2.3566870954551435e-06, 1.5510311298983149e-06)};
  p.edges = {{0, 4}, {0, 6}, {0, 8}, {1, 7}, {1, 8}, {2, 3}, {3, 4}, {3, 8}, {4, 5}, {5, 6}, {7, 8}};
  const double optimum = p.tasks[1].single_s + p.tasks[7].parallel_s + p.tasks[8].parallel_s;
  const Schedule s = make_milp_solver()->solve(p);
  EXPECT_TRUE(s.proven_optimal);
  EXPECT_NEAR(s.makespan_s, optimum, 1e-15);
  EXPECT_EQ(check_schedule(p, s, 1e-12), "");
}

TEST(MilpRegression, ClpAssertionWithDefaultTolerances) {
  // Latencies from 0.3 µs to 43 ms: with Clp's default tolerances the LP solver aborted
  // (ClpNonLinearCost::checkInfeasibilities: lowerValue <= upperValue). The optimum runs every compute
  // operator parallel, one after another, with the collective on the link alongside the last one.
  Problem p = chip(3, 1);
  p.tasks = {task("t0", TaskKind::Vector, 0.00029369430855293304, 9.4935122205286335e-05),
             task("t1", TaskKind::Tensor, 0.0025712656969337461, 0.00079151819284400677),
             task("t2", TaskKind::Vector, 1.4582366839786657e-06, 2.9109703933490667e-07),
             task("t3", TaskKind::Vector, 8.5765757560638789e-06, 3.2932849304163731e-06),
             task("t4", TaskKind::Vector, 0.0015542060187185701, 0.00024389161771656885),
             task("t5", TaskKind::Vector, 4.3967043918327086e-05, 2.9829187486623871e-05),
             task("t6", TaskKind::Comm, 9.7294916832453263e-06, 9.7294916832453263e-06),
             task("t7", TaskKind::Tensor, 0.042896509194133244, 0.0046600532716278408)};
  p.edges = {{0, 3}, {0, 5}, {1, 2}, {2, 5}, {2, 6}, {4, 7}, {5, 6}, {5, 7}};
  double optimum = 0;
  for (const Task& t : p.tasks)
    if (t.kind != TaskKind::Comm) optimum += t.parallel_s;
  const Schedule s = make_milp_solver()->solve(p);
  EXPECT_TRUE(s.proven_optimal);
  EXPECT_NEAR(s.makespan_s, optimum, 1e-15);
  EXPECT_EQ(check_schedule(p, s, 1e-12), "");
}

// ---------------------------------------------------------------------------------------------------
// Random small instances against the enumeration of section 7.

struct Enumeration {
  const Problem& p;
  std::vector<int> v;                    // non-NOP task indices
  std::vector<std::vector<char>> reach;  // over task indices
  std::vector<TaskKind> kind;            // effective kind per task index
  double best = std::numeric_limits<double>::infinity();

  explicit Enumeration(const Problem& problem) : p(problem) {
    const size_t n = p.tasks.size();
    reach.assign(n, std::vector<char>(n, 0));
    for (const auto& [a, b] : p.edges) reach[a][b] = 1;
    for (size_t k = 0; k < n; ++k)
      for (size_t i = 0; i < n; ++i)
        for (size_t j = 0; j < n; ++j)
          if (reach[i][k] && reach[k][j]) reach[i][j] = 1;
    for (size_t i = 0; i < n; ++i) {
      TaskKind k = p.tasks[i].kind;
      if (k == TaskKind::Comm && p.comm_as_vector) k = TaskKind::Vector;
      kind.push_back(k);
      if (k != TaskKind::None) v.push_back(static_cast<int>(i));
    }
  }
  static bool compute(TaskKind k) { return k == TaskKind::Tensor || k == TaskKind::Vector || k == TaskKind::Fused; }
  bool may_parallel(int i) const { return compute(kind[i]) && p.tasks[i].kind != TaskKind::Comm; }
  int64_t choices(int i) const {
    switch (kind[i]) {
      case TaskKind::Tensor: return p.tensor_cores;
      case TaskKind::Vector: return p.vector_cores;
      case TaskKind::Fused: return p.pairs();
      default: return 1;
    }
  }

  double run() {
    const int m = static_cast<int>(v.size());
    std::vector<char> y(m, 0);
    std::vector<int64_t> core(m, 0);
    modes(0, y, core);
    return m == 0 ? 0 : best;
  }

  void modes(int k, std::vector<char>& y, std::vector<int64_t>& core) {
    if (k == static_cast<int>(v.size())) return orders(y, core);
    y[k] = 0;
    for (int64_t c = 0; c < choices(v[k]); ++c) {
      core[k] = c;
      modes(k + 1, y, core);
    }
    if (may_parallel(v[k])) {
      y[k] = 1;
      core[k] = -1;
      modes(k + 1, y, core);
    }
  }

  bool conflict(int a, int b, const std::vector<char>& y, const std::vector<int64_t>& core) const {
    const int i = v[a], j = v[b];
    const TaskKind ki = kind[i], kj = kind[j];
    if (ki == TaskKind::Comm && kj == TaskKind::Comm) return true;
    if (!compute(ki) || !compute(kj)) return false;
    if (y[a] || y[b]) {
      if (!p.overlap_across_types) return true;
      return ki == kj || ki == TaskKind::Fused || kj == TaskKind::Fused;
    }
    const bool tc_i = ki != TaskKind::Vector, tc_j = kj != TaskKind::Vector;
    const bool vc_i = ki != TaskKind::Tensor, vc_j = kj != TaskKind::Tensor;
    return core[a] == core[b] && ((tc_i && tc_j) || (vc_i && vc_j));
  }

  void orders(const std::vector<char>& y, const std::vector<int64_t>& core) {
    const int m = static_cast<int>(v.size());
    std::vector<int> perm(m);
    std::iota(perm.begin(), perm.end(), 0);
    do {
      bool extension = true;
      for (int x = 0; x < m && extension; ++x)
        for (int z = x + 1; z < m && extension; ++z)
          if (reach[v[perm[z]]][v[perm[x]]]) extension = false;
      if (!extension) continue;
      std::vector<double> finish(m, 0);
      double makespan = 0;
      for (int x = 0; x < m; ++x) {
        const int b = perm[x];
        double start = 0;
        for (int w = 0; w < x; ++w) {
          const int a = perm[w];
          if (reach[v[a]][v[b]] || conflict(a, b, y, core)) start = std::max(start, finish[a]);
        }
        const Task& t = p.tasks[v[b]];
        finish[b] = start + (y[b] ? t.parallel_s : t.single_s);
        makespan = std::max(makespan, finish[b]);
      }
      best = std::min(best, makespan);
    } while (std::next_permutation(perm.begin(), perm.end()));
  }
};

/// Random DAG of n tasks; latencies small integers, or (in_seconds) log-uniform in [1e-6, 1e-1] seconds.
Problem random_problem(std::mt19937& rng, int n, bool in_seconds = false) {
  static const int64_t kChips[][2] = {{1, 1}, {2, 1}, {2, 2}, {3, 2}, {1, 2}};
  std::uniform_int_distribution<int> pick_chip(0, 4), pick_kind(0, 9), latency(0, 9), percent(0, 99);
  const int c = pick_chip(rng);
  Problem p = chip(kChips[c][0], kChips[c][1]);
  p.comm_as_vector = percent(rng) < 30;
  p.overlap_across_types = percent(rng) < 30;
  for (int i = 0; i < n; ++i) {
    // Tensor 40 %, vector 20 %, fused 20 %, collective 10 %, layout 10 %.
    const int r = pick_kind(rng);
    const TaskKind kind = r < 4   ? TaskKind::Tensor
                          : r < 6 ? TaskKind::Vector
                          : r < 8 ? TaskKind::Fused
                          : r < 9 ? TaskKind::Comm
                                  : TaskKind::None;
    double single = kind == TaskKind::None ? 0 : 1 + latency(rng);
    if (kind != TaskKind::None && percent(rng) < 5) single = 0;
    double parallel = kind == TaskKind::Comm ? single : std::max(0.0, single - latency(rng) * 0.5);
    if (kind == TaskKind::None) parallel = 0;
    if (in_seconds && kind != TaskKind::None) {
      std::uniform_real_distribution<double> exponent(-6, -1), factor(0.2, 1.2);
      single = std::pow(10.0, exponent(rng));
      parallel = kind == TaskKind::Comm ? single : single * factor(rng);
    }
    p.tasks.push_back(task(numbered("t", i), kind, single, parallel, single, parallel));
  }
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j)
      if (percent(rng) < 25) p.edges.emplace_back(i, j);
  return p;
}

TEST(MilpRegression, UnusableVariantDoesNotSetTheTimeScale) {
  // X's single-core run (1e10 s) is longer than the serial schedule (H = 6.2 s), so no optimal schedule uses
  // it. When it set the time unit, every other latency fell below CBC's tolerances and 5.1 s came back as
  // proven optimal. The optimum: X parallel alone (1.2 s), then o0, o1 and o2 single-core side by side
  // (two tensor cores, one vector core; the longest 3.5 s), 4.7 s.
  Problem p = chip(2, 1);
  p.tasks = {task("X", TaskKind::Vector, 1e10, 1.2), task("o0", TaskKind::Tensor, 2.3, 1.9),
             task("o1", TaskKind::Vector, 1.6, 1.0), task("o2", TaskKind::Tensor, 3.5, 2.1)};
  const double expected = Enumeration(p).run();
  EXPECT_NEAR(expected, 1.2 + 3.5, 1e-12);
  const Schedule exact = phaze::schedule::make_exact_solver()->solve(p);
  EXPECT_NEAR(exact.makespan_s, expected, 1e-12);
  const Schedule s = make_milp_solver()->solve(p);
  EXPECT_TRUE(s.proven_optimal);
  EXPECT_NEAR(s.makespan_s, expected, 1e-12);
  EXPECT_TRUE(s.tasks[0].parallel);
  EXPECT_EQ(check_schedule(p, s, 1e-12), "");
}

TEST(MilpSolver, LatenciesTooFarApartAreRefused) {
  // 10 s next to 1 µs (1e7 times less): beyond what CBC's tolerances resolve once times are scaled by the
  // longest latency. The message names the short operator.
  Problem p = chip(1, 1);
  p.tasks = {task("long", TaskKind::Tensor, 10, 6), task("short", TaskKind::Vector, 1e-6, 1e-6)};
  try {
    make_milp_solver()->solve(p);
    ADD_FAILURE() << "no InputError";
  } catch (const phaze::InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("'short'"), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  // Within the span (1e5) it solves: both parallel one after another, or both single side by side (6 and
  // 1e-4 on different core types overlap), whichever is shorter: 6.
  p.tasks[1] = task("short", TaskKind::Vector, 1e-4, 1e-4);
  const Schedule s = make_milp_solver()->solve(p);
  EXPECT_TRUE(s.proven_optimal);
  EXPECT_NEAR(s.makespan_s, Enumeration(p).run(), 1e-12);
  // A variant longer than the serial schedule does not count: 1e12 s single-core is never used.
  p.tasks[0] = task("long", TaskKind::Tensor, 1e12, 6);
  EXPECT_NEAR(make_milp_solver()->solve(p).makespan_s, Enumeration(p).run(), 1e-12);
}

TEST(MilpRandom, SmallInstancesMatchEnumeration) {
  std::mt19937 rng(20240607);
  for (int instance = 0; instance < 60; ++instance) {
    const int n = 3 + instance % 4;  // 3..6 tasks
    const Problem p = random_problem(rng, n);
    const double expected = Enumeration(p).run();
    MilpReport report;
    const Schedule s = solve_milp(p, {}, &report);
    SCOPED_TRACE(numbered("instance ", instance));
    ASSERT_TRUE(s.feasible);
    EXPECT_TRUE(s.proven_optimal);
    EXPECT_NEAR(s.makespan_s, expected, kTol);
    EXPECT_EQ(check_schedule(p, s, 1e-9), "");
    EXPECT_LE(report.phases.size(), 3u);
  }
}

TEST(MilpRandom, SecondsScaleInstancesMatchEnumeration) {
  std::mt19937 rng(77);
  for (int instance = 0; instance < 40; ++instance) {
    const int n = 3 + instance % 4;
    const Problem p = random_problem(rng, n, true);
    const double expected = Enumeration(p).run();
    const Schedule s = make_milp_solver()->solve(p);
    SCOPED_TRACE(numbered("instance ", instance));
    ASSERT_TRUE(s.feasible);
    EXPECT_TRUE(s.proven_optimal);
    EXPECT_NEAR(s.makespan_s, expected, 1e-12 * expected);
    EXPECT_EQ(check_schedule(p, s), "");
  }
}

TEST(MilpRandom, Deterministic) {
  std::mt19937 rng(5);
  for (int instance = 0; instance < 5; ++instance) {
    const Problem p = random_problem(rng, 7);
    const Schedule a = make_milp_solver()->solve(p);
    const Schedule b = make_milp_solver()->solve(p);
    ASSERT_EQ(a.tasks.size(), b.tasks.size());
    EXPECT_EQ(a.makespan_s, b.makespan_s);
    for (size_t i = 0; i < a.tasks.size(); ++i) {
      EXPECT_EQ(a.tasks[i].start_s, b.tasks[i].start_s);
      EXPECT_EQ(a.tasks[i].parallel, b.tasks[i].parallel);
      EXPECT_EQ(a.tasks[i].tensor_core, b.tasks[i].tensor_core);
      EXPECT_EQ(a.tasks[i].vector_core, b.tasks[i].vector_core);
    }
  }
}

/// A 12-task instance (µs) whose final solve takes CBC tens of seconds to prove without the valid inequalities.
Problem hard_twelve_tasks() {
  Problem p = chip(2, 1);
  p.tasks = {task("t0", TaskKind::Tensor, 5, 3.81),  task("t1", TaskKind::Tensor, 9, 7.938),
             task("t2", TaskKind::Vector, 10, 10),   task("t3", TaskKind::Vector, 6, 6),
             task("t4", TaskKind::Tensor, 9, 4.104), task("t5", TaskKind::Tensor, 10, 6.12),
             task("t6", TaskKind::Vector, 18, 18),   task("t7", TaskKind::Tensor, 8, 2.688),
             task("t8", TaskKind::Vector, 6, 4.212), task("t9", TaskKind::Vector, 5, 5),
             task("t10", TaskKind::Comm, 19, 19),    task("t11", TaskKind::Tensor, 1, 0.75)};
  for (Task& t : p.tasks) {
    t.single_s *= 1e-6;
    t.parallel_s *= 1e-6;
  }
  p.edges = {{0, 11}, {1, 10}, {3, 11}, {4, 6}};
  return p;
}

TEST(MilpRandom, TimeLimitStillGivesAValidSchedule) {
  const Problem p = hard_twelve_tasks();
  phaze::schedule::detail::MilpOptions options;
  options.time_limit_s = 0.3;
  options.valid_inequalities = false;  // with them CBC proves this instance within the limit
  MilpReport report;
  const Schedule s = solve_milp(p, options, &report);
  ASSERT_TRUE(s.feasible);
  EXPECT_FALSE(s.proven_optimal);
  EXPECT_EQ(check_schedule(p, s), "");
  EXPECT_LE(report.phases.size(), 3u);
}

TEST(MilpRandom, TwelveTaskDag) {
  std::mt19937 rng(12);
  Problem p = random_problem(rng, 12);
  p.tensor_cores = 2;
  p.vector_cores = 1;
  MilpReport report;
  const auto started = std::chrono::steady_clock::now();
  const Schedule s = solve_milp(p, {}, &report);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ASSERT_TRUE(s.feasible);
  EXPECT_TRUE(s.proven_optimal);
  EXPECT_EQ(check_schedule(p, s, 1e-9), "");
  std::printf("12-task DAG: makespan %g, %zu solves, %.3f s total\n", s.makespan_s, report.phases.size(), seconds);
  for (const auto& phase : report.phases)
    std::printf("  solve (TC %d, VC %d): T = %g, peaks %lld/%lld, %d columns, %d rows, %.3f s\n",
                phase.tensor_constraints ? 1 : 0, phase.vector_constraints ? 1 : 0, phase.objective_s,
                static_cast<long long>(phase.tensor_peak), static_cast<long long>(phase.vector_peak), phase.columns,
                phase.rows, phase.seconds);
}

// ---------------------------------------------------------------------------------------------------
// Valid inequalities: the LP relaxation reaches closed-form lower bounds.

/// The LP bound of the first solve and the final makespan, with the valid inequalities.
std::pair<double, Schedule> root_and_solution(const Problem& p) {
  phaze::schedule::detail::MilpOptions options;
  options.root_bound = true;
  MilpReport report;
  const Schedule s = solve_milp(p, options, &report);
  EXPECT_FALSE(report.phases.empty());
  return {report.phases.empty() ? 0.0 : report.phases.front().root_bound_s, s};
}

TEST(MilpCuts, WorkBoundMakesAllParallelTheRootBound) {
  // Two tensor cores, four independent tensor operators of 6 (parallel 2.5). At most two run single-core at
  // once, so the time without a parallel operator is at least Σ (1 − y)·6/2 and T ≥ Σ (2.5·y + 3·(1 − y)) ≥ 10
  // for any y in [0, 1]: all parallel, 10, and the LP bound is 10 already.
  Problem p = chip(2, 1);
  for (int i = 0; i < 4; ++i) p.tasks.push_back(task(numbered("G", i), TaskKind::Tensor, 6, 2.5));
  const auto [root, s] = root_and_solution(p);
  EXPECT_GE(root, 10 - kTol);
  EXPECT_TRUE(s.proven_optimal);
  EXPECT_NEAR(s.makespan_s, 10, kTol);
  EXPECT_NEAR(Enumeration(p).run(), 10, kTol);
}

TEST(MilpCuts, WidthBoundsConcurrency) {
  // Eight tensor cores but only three independent operators of 9 (parallel 2): at most three run single-core
  // at once, so each costs at least 9/3 = 3 > 2 of time without parallel operators; a vector operator of 4
  // (parallel 2.5; one vector core) after all of them. T ≥ 3·2 + 2.5 = 8.5 for any fractional y.
  Problem p = chip(8, 1);
  for (int i = 0; i < 3; ++i) p.tasks.push_back(task(numbered("G", i), TaskKind::Tensor, 9, 2));
  p.tasks.push_back(task("V", TaskKind::Vector, 4, 2.5));
  p.edges = {{0, 3}, {1, 3}, {2, 3}};
  const auto [root, s] = root_and_solution(p);
  EXPECT_GE(root, 8.5 - kTol);
  EXPECT_NEAR(s.makespan_s, 8.5, kTol);
  EXPECT_NEAR(Enumeration(p).run(), 8.5, kTol);
}

TEST(MilpCuts, CapacityRowsKeepPhaseOneWithinTheCores) {
  // Example C: four independent tensor operators on two tensor cores. Without the rows phase 1 runs all four
  // at once (T = 4); with them no three overlap, so phase 1 already gives the documented optimum 8.
  Problem p = chip(2, 1);
  for (int i = 0; i < 4; ++i) p.tasks.push_back(task(numbered("G", i), TaskKind::Tensor, 4, 2.5));
  MilpReport report;
  const Schedule s = solve_milp(p, {}, &report);
  EXPECT_TRUE(s.proven_optimal);
  EXPECT_NEAR(s.makespan_s, 8, kTol);
  ASSERT_EQ(report.phases.size(), 1u);
  EXPECT_LE(report.phases[0].tensor_peak, 2);
  EXPECT_EQ(check_schedule(p, s, 1e-9), "");
}

TEST(MilpCuts, EveryLpBoundIsAtMostTheEnumeratedOptimum) {
  // Each phase's LP relaxation, valid inequalities included, is a relaxation of the full problem: its bound
  // never exceeds the optimum found by enumeration (a cut that removed the optimum would show here, or in
  // the final makespan).
  std::mt19937 rng(424242);
  for (int instance = 0; instance < 80; ++instance) {
    const Problem p = random_problem(rng, 3 + instance % 4);
    const double expected = Enumeration(p).run();
    phaze::schedule::detail::MilpOptions options;
    options.root_bound = true;
    MilpReport report;
    const Schedule s = solve_milp(p, options, &report);
    SCOPED_TRACE(numbered("instance ", instance));
    EXPECT_TRUE(s.proven_optimal);
    EXPECT_NEAR(s.makespan_s, expected, kTol);
    for (const auto& phase : report.phases) EXPECT_LE(phase.root_bound_s, expected + kTol);
  }
}

}  // namespace
