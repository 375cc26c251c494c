// The solver-independent parts of the layer schedule (layer-schedule.md): validate, the independent
// feasibility check of a schedule (one test per rule, on hand-made schedules of the worked examples of
// section 8), the outputs of section 5 (energy, utilisation, peaks) and the greedy core assignment.

#include <gtest/gtest.h>

#include <cmath>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "schedule/problem.h"

namespace {

using phaze::schedule::assign_cores;
using phaze::schedule::check_schedule;
using phaze::schedule::make_solver;
using phaze::schedule::Problem;
using phaze::schedule::Schedule;
using phaze::schedule::summarize;
using phaze::schedule::Task;
using phaze::schedule::TaskKind;
using phaze::schedule::TaskSlot;
using phaze::schedule::validate;

Task task(const std::string& id, TaskKind kind, double single, double parallel, double e = 0, double e_par = 0) {
  return Task{id, kind, single, parallel, e, e_par};
}

/// A slot: [start, finish), single-core on the given cores or parallel (cores -1).
TaskSlot slot(double start, double finish, bool parallel = false, int64_t tc = -1, int64_t vc = -1) {
  return TaskSlot{start, finish, parallel, tc, vc};
}

Schedule make_schedule(std::vector<TaskSlot> slots) {
  Schedule s;
  s.feasible = true;
  s.tasks = std::move(slots);
  for (const TaskSlot& t : s.tasks) s.makespan_s = std::max(s.makespan_s, t.finish_s);
  return s;
}

/// Expects the check to fail with a message naming every needle.
void expect_violation(const Problem& p, const Schedule& s, std::initializer_list<std::string> needles,
                      double tolerance = 1e-12) {
  const std::string reason = check_schedule(p, s, tolerance);
  ASSERT_FALSE(reason.empty()) << "accepted";
  EXPECT_EQ(reason.find('\n'), std::string::npos) << reason;
  for (const std::string& needle : needles)
    EXPECT_NE(reason.find(needle), std::string::npos) << "lacks '" << needle << "': " << reason;
}

// Example B forward: n_TC = 2, n_VC = 1; A TC 4/3; B TC 6/4; C VC 5/5; D VC 2/2; A→B, A→C, B→D, C→D.
Problem example_b() {
  Problem p;
  p.tensor_cores = 2;
  p.vector_cores = 1;
  p.tasks = {task("A", TaskKind::Tensor, 4, 3), task("B", TaskKind::Tensor, 6, 4), task("C", TaskKind::Vector, 5, 5),
             task("D", TaskKind::Vector, 2, 2)};
  p.edges = {{0, 1}, {0, 2}, {1, 3}, {2, 3}};
  return p;
}

// Its optimum (T = 11): A parallel [0,3); B on TC0 [3,9); C on VC0 [3,8); D on VC0 [9,11).
Schedule example_b_schedule() {
  return make_schedule({slot(0, 3, true), slot(3, 9, false, 0), slot(3, 8, false, -1, 0), slot(9, 11, false, -1, 0)});
}

// Example C: four independent TC operators 4/2.5 on n_TC = 2, n_VC = 1.
Problem example_c() {
  Problem p;
  p.tensor_cores = 2;
  p.vector_cores = 1;
  for (int k = 1; k <= 4; ++k)
    p.tasks.push_back(task(std::string("G").append(std::to_string(k)), TaskKind::Tensor, 4, 2.5));
  return p;
}

Schedule example_c_schedule() {
  return make_schedule({slot(0, 4, false, 0), slot(0, 4, false, 1), slot(4, 8, false, 0), slot(4, 8, false, 1)});
}

// Example D: F TCVC 5/4, V VC 3/3, T TC 6/3.5, independent, n_TC = 2, n_VC = 1.
Problem example_d() {
  Problem p;
  p.tensor_cores = 2;
  p.vector_cores = 1;
  p.tasks = {task("F", TaskKind::Fused, 5, 4), task("V", TaskKind::Vector, 3, 3), task("T", TaskKind::Tensor, 6, 3.5)};
  return p;
}

// Its optimum (T = 8): F on pair 0 [0,5); T on TC1 [0,6); V on VC0 [5,8).
Schedule example_d_schedule() {
  return make_schedule({slot(0, 5, false, 0, 0), slot(5, 8, false, -1, 0), slot(0, 6, false, 1)});
}

// Example E forward with energies e (single) and e' (parallel) chosen to tell every choice apart.
Problem example_e() {
  Problem p;
  p.tensor_cores = 2;
  p.vector_cores = 1;
  p.tasks = {task("Q", TaskKind::Tensor, 6, 4, 1, 10),   task("K", TaskKind::Tensor, 6, 4, 2, 20),
             task("V", TaskKind::Tensor, 6, 4, 4, 40),   task("S", TaskKind::Tensor, 4, 2.5, 8, 80),
             task("M", TaskKind::Vector, 3, 3, 16, 160), task("P", TaskKind::Tensor, 4, 2.5, 32, 320)};
  p.edges = {{0, 3}, {1, 3}, {3, 4}, {4, 5}, {2, 5}};
  return p;
}

// Its optimum (T = 15.5): Q TC0 [0,6); K TC1 [0,6); V TC0 [6,12); S TC1 [6,10); M VC0 [10,13); P parallel [13,15.5).
Schedule example_e_schedule() {
  return make_schedule({slot(0, 6, false, 0), slot(0, 6, false, 1), slot(6, 12, false, 0), slot(6, 10, false, 1),
                        slot(10, 13, false, -1, 0), slot(13, 15.5, true)});
}

// Example F: D1 TC 6/4; W1 TC 8/4; AR COMM 5/5; LN VC 2/2; D1 → AR → LN.
Problem example_f() {
  Problem p;
  p.tensor_cores = 2;
  p.vector_cores = 1;
  p.tasks = {task("D1", TaskKind::Tensor, 6, 4), task("W1", TaskKind::Tensor, 8, 4), task("AR", TaskKind::Comm, 5, 5),
             task("LN", TaskKind::Vector, 2, 2)};
  p.edges = {{0, 2}, {2, 3}};
  return p;
}

// ---------------------------------------------------------------------------------------------------------
// make_solver and validate

TEST(ScheduleCommon, MakeSolverKnowsTheThreeNames) {
  EXPECT_NE(make_solver("exact"), nullptr);
  EXPECT_NE(make_solver("ilp"), nullptr);
  EXPECT_NE(make_solver("list"), nullptr);
  EXPECT_EQ(make_solver("gurobi"), nullptr);
  EXPECT_EQ(make_solver(""), nullptr);
}

TEST(ScheduleCommon, ValidateAcceptsTheExamples) {
  EXPECT_EQ(validate(example_b()), "");
  EXPECT_EQ(validate(example_c()), "");
  EXPECT_EQ(validate(example_d()), "");
  EXPECT_EQ(validate(example_e()), "");
  EXPECT_EQ(validate(example_f()), "");
  EXPECT_EQ(validate(Problem{}), "");
}

void expect_invalid(const Problem& p, std::initializer_list<std::string> needles) {
  const std::string reason = validate(p);
  ASSERT_FALSE(reason.empty()) << "accepted";
  EXPECT_EQ(reason.find('\n'), std::string::npos) << reason;
  for (const std::string& needle : needles)
    EXPECT_NE(reason.find(needle), std::string::npos) << "lacks '" << needle << "': " << reason;
}

TEST(ScheduleCommon, ValidateRejectsBadEdges) {
  Problem p = example_b();
  p.edges.push_back({0, 4});
  expect_invalid(p, {"outside"});
  p = example_b();
  p.edges.push_back({-1, 2});
  expect_invalid(p, {"outside"});
  p = example_b();
  p.edges.push_back({2, 2});
  expect_invalid(p, {"self-loop", "'C'"});
  p = example_b();
  p.edges.push_back({1, 3});
  expect_invalid(p, {"duplicate", "'B'", "'D'"});
}

TEST(ScheduleCommon, ValidateNamesATaskOnTheCycle) {
  // X → A → B → C → A, C → D: only A, B and C lie on the cycle.
  Problem p;
  for (const char* id : {"X", "A", "B", "C", "D"}) p.tasks.push_back(task(id, TaskKind::Tensor, 1, 1));
  p.edges = {{0, 1}, {1, 2}, {2, 3}, {3, 1}, {3, 4}};
  const std::string reason = validate(p);
  ASSERT_NE(reason.find("cycle"), std::string::npos) << reason;
  EXPECT_TRUE(reason.find("'A'") != std::string::npos || reason.find("'B'") != std::string::npos ||
              reason.find("'C'") != std::string::npos)
      << reason;
  EXPECT_EQ(reason.find("'X'"), std::string::npos) << reason;
  EXPECT_EQ(reason.find("'D'"), std::string::npos) << reason;
  // A two-cycle (a reversed duplicate).
  Problem q = example_b();
  q.edges.push_back({3, 0});
  expect_invalid(q, {"cycle"});
}

TEST(ScheduleCommon, ValidateRejectsBadNumbersAndIds) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Problem p = example_b();
  p.tasks[1].single_s = -1;
  expect_invalid(p, {"'B'", "negative"});
  p = example_b();
  p.tasks[1].parallel_s = inf;
  expect_invalid(p, {"'B'", "finite"});
  p = example_b();
  p.tasks[2].single_s = nan;
  expect_invalid(p, {"'C'", "finite"});
  p = example_b();
  p.tasks[0].single_energy_j = -0.5;
  expect_invalid(p, {"'A'", "energy"});
  p = example_b();
  p.tasks[3].parallel_energy_j = inf;
  expect_invalid(p, {"'D'", "energy"});
  p = example_b();
  p.tensor_cores = 0;
  expect_invalid(p, {"tensor_cores"});
  p = example_b();
  p.vector_cores = -2;
  expect_invalid(p, {"vector_cores"});
  p = example_b();
  p.tasks[2].id = "A";
  expect_invalid(p, {"'A'", "twice"});
  p = example_b();
  p.tasks[2].id = "";
  expect_invalid(p, {"empty"});
}

// ---------------------------------------------------------------------------------------------------------
// check_schedule: feasible schedules of the worked examples, then one broken rule at a time

TEST(ScheduleCommon, CheckAcceptsTheWorkedExamplesOptima) {
  EXPECT_EQ(check_schedule(example_b(), example_b_schedule()), "");
  EXPECT_EQ(check_schedule(example_c(), example_c_schedule()), "");  // touching intervals on one core
  EXPECT_EQ(check_schedule(example_d(), example_d_schedule()), "");
  EXPECT_EQ(check_schedule(example_e(), example_e_schedule()), "");
  // Example F, our rules: D1 parallel [0,4); W1 parallel [4,8) while AR runs on the link [4,9); LN [9,11).
  EXPECT_EQ(check_schedule(example_f(),
                           make_schedule({slot(0, 4, true), slot(4, 8, true), slot(4, 9), slot(9, 11, false, -1, 0)})),
            "");
  // Example F, original rules: AR on VC0 [4,9); W1 single on a tensor core [4,12); LN on VC0 [9,11).
  Problem original = example_f();
  original.comm_as_vector = true;
  EXPECT_EQ(check_schedule(original, make_schedule({slot(0, 4, true), slot(4, 12, false, 1), slot(4, 9, false, -1, 0),
                                                    slot(9, 11, false, -1, 0)})),
            "");
  // Example E backward optimum (T = 29).
  Problem back = example_e();
  back.tasks[0].single_s = back.tasks[1].single_s = back.tasks[2].single_s = 12;
  back.tasks[0].parallel_s = back.tasks[1].parallel_s = back.tasks[2].parallel_s = 8;
  back.tasks[3].single_s = 8;
  back.tasks[3].parallel_s = 5;
  back.tasks[5].single_s = 8;
  back.tasks[5].parallel_s = 5;
  back.edges = {{3, 0}, {3, 1}, {4, 3}, {5, 4}, {5, 2}};
  EXPECT_EQ(check_schedule(back, make_schedule({slot(17, 29, false, 0), slot(16, 28, false, 1), slot(5, 17, false, 0),
                                                slot(8, 16, false, 1), slot(5, 8, false, -1, 0), slot(0, 5, true)})),
            "");
}

TEST(ScheduleCommon, CheckRejectsABrokenPrecedence) {
  // D moved to [8, 10): B (its predecessor) ends at 9.
  Schedule s = example_b_schedule();
  s.tasks[3] = slot(8, 10, false, -1, 0);
  s.makespan_s = 10;
  expect_violation(example_b(), s, {"'D'", "'B'", "predecessor"});
  // Example E: M starts at 9.5, before S finishes at 10.
  Schedule e = example_e_schedule();
  e.tasks[4] = slot(9.5, 12.5, false, -1, 0);
  expect_violation(example_e(), e, {"'M'", "'S'", "predecessor"});
}

TEST(ScheduleCommon, CheckRejectsAWrongDuration) {
  Schedule s = example_b_schedule();
  s.tasks[1].finish_s = 8;  // B single-core lasts 6
  expect_violation(example_b(), s, {"'B'", "duration"});
  // A single-core for 3: its single-core latency is 4.
  s = example_b_schedule();
  s.tasks[0] = slot(0, 3, false, 0);
  expect_violation(example_b(), s, {"'A'", "duration"});
  // A parallel for 4: its all-cores latency is 3.
  s = example_b_schedule();
  s.tasks[0] = slot(0, 4, true);
  s.tasks[1] = slot(4, 10, false, 0);
  s.tasks[2] = slot(4, 9, false, -1, 0);
  s.tasks[3] = slot(10, 12, false, -1, 0);
  s.makespan_s = 12;
  expect_violation(example_b(), s, {"'A'", "duration"});
}

TEST(ScheduleCommon, CheckToleranceIsAbsolute) {
  Schedule s = example_b_schedule();
  s.tasks[1].finish_s = 9 + 1e-10;
  EXPECT_NE(check_schedule(example_b(), s), "");
  EXPECT_EQ(check_schedule(example_b(), s, 1e-9), "");
}

TEST(ScheduleCommon, CheckRejectsTwoOperatorsOnOneCore) {
  Schedule s = example_c_schedule();
  s.tasks[2].tensor_core = 1;  // G3 and G4 both on TC1 during [4, 8)
  expect_violation(example_c(), s, {"tensor core 1", "'G3'", "'G4'"});
  s = example_c_schedule();
  s.tasks[2] = slot(3.9, 7.9, false, 0);  // G3 starts on TC0 before G1 ends
  expect_violation(example_c(), s, {"tensor core 0", "'G1'", "'G3'"});
  // Vector core: V during F (both on VC0).
  Schedule d = example_d_schedule();
  d.tasks[1] = slot(4, 7, false, -1, 0);
  d.makespan_s = 7;
  expect_violation(example_d(), d, {"vector core 0", "'F'", "'V'"});
  // A fused task and a tensor task on the same tensor core.
  d = example_d_schedule();
  d.tasks[2].tensor_core = 0;
  expect_violation(example_d(), d, {"tensor core 0", "'F'", "'T'"});
}

TEST(ScheduleCommon, CheckRejectsCoreIndicesOutOfRangeOrOfTheWrongType) {
  Schedule s = example_c_schedule();
  s.tasks[0].tensor_core = 2;
  expect_violation(example_c(), s, {"'G1'", "tensor core 2"});
  s = example_c_schedule();
  s.tasks[0].tensor_core = -1;
  expect_violation(example_c(), s, {"'G1'"});
  s = example_c_schedule();
  s.tasks[0].vector_core = 0;
  expect_violation(example_c(), s, {"'G1'", "vector core 0"});
  Schedule d = example_d_schedule();
  d.tasks[1].vector_core = 1;  // only VC0
  expect_violation(example_d(), d, {"'V'", "vector core 1"});
  d = example_d_schedule();
  d.tasks[1].tensor_core = 0;
  expect_violation(example_d(), d, {"'V'", "tensor core 0"});
  // A parallel task holds no index.
  Schedule b = example_b_schedule();
  b.tasks[0].tensor_core = 0;
  expect_violation(example_b(), b, {"'A'", "parallel"});
  // A collective holds no core.
  Schedule f = make_schedule({slot(0, 4, true), slot(4, 8, true), slot(4, 9, false, -1, 0), slot(9, 11, false, -1, 0)});
  expect_violation(example_f(), f, {"'AR'"});
}

TEST(ScheduleCommon, CheckRejectsAnUnpairedFusedTask) {
  // F on tensor core 1 and vector core 0: not a pair.
  Schedule d = example_d_schedule();
  d.tasks[0] = slot(0, 5, false, 1, 0);
  d.tasks[2] = slot(0, 6, false, 0);
  expect_violation(example_d(), d, {"'F'", "pair"});
  // F on pair 1: there is one pair only (n_VC = 1).
  Problem p = example_d();
  p.vector_cores = 2;
  Schedule ok = make_schedule({slot(0, 5, false, 1, 1), slot(0, 3, false, -1, 0), slot(0, 6, false, 0)});
  EXPECT_EQ(check_schedule(p, ok), "");
  p.vector_cores = 1;
  ok.tasks[1].vector_core = 0;
  expect_violation(p, ok, {"'F'"});
  // A fused task with one index missing.
  d = example_d_schedule();
  d.tasks[0].vector_core = -1;
  expect_violation(example_d(), d, {"'F'"});
}

TEST(ScheduleCommon, CheckRejectsAParallelTaskOverlappingAnyComputeTask) {
  // X parallel TC [0,2); Y single VC [1,4).
  Problem p;
  p.tensor_cores = 2;
  p.vector_cores = 2;
  p.tasks = {task("X", TaskKind::Tensor, 3, 2), task("Y", TaskKind::Vector, 3, 2), task("Z", TaskKind::Fused, 3, 2),
             task("L", TaskKind::Comm, 3, 3)};
  Schedule s = make_schedule({slot(0, 2, true), slot(1, 4, false, -1, 1), slot(4, 7, false, 0, 0), slot(0, 3)});
  expect_violation(p, s, {"parallel", "'X'", "'Y'"});
  // Touching is fine (half-open intervals); a collective on the link may overlap a parallel task.
  s.tasks[1] = slot(2, 5, false, -1, 1);
  EXPECT_EQ(check_schedule(p, s), "");
  // The variant S7: a parallel tensor task may overlap a vector task, not a fused one.
  s.tasks[1] = slot(1, 4, false, -1, 1);
  p.overlap_across_types = true;
  EXPECT_EQ(check_schedule(p, s), "");
  s.tasks[2] = slot(1, 4, false, 0, 0);
  expect_violation(p, s, {"parallel", "'X'", "'Z'"});
  // Under the variant, two parallel tasks of different types may overlap, of one type may not.
  s = make_schedule({slot(0, 2, true), slot(0, 2, true), slot(2, 5, false, 0, 0), slot(0, 3)});
  EXPECT_EQ(check_schedule(p, s), "");
  p.overlap_across_types = false;
  expect_violation(p, s, {"parallel", "'X'", "'Y'"});
  // With comm_as_vector a collective is a vector operator: blocked by a parallel task.
  p.comm_as_vector = true;
  s = make_schedule({slot(0, 2, true), slot(2, 5, false, -1, 1), slot(5, 8, false, 0, 0), slot(1, 4, false, -1, 0)});
  expect_violation(p, s, {"parallel", "'X'", "'L'"});
}

TEST(ScheduleCommon, CheckRejectsTwoOverlappingCollectives) {
  Problem p;
  p.tensor_cores = 1;
  p.vector_cores = 2;
  p.tasks = {task("C1", TaskKind::Comm, 5, 5), task("C2", TaskKind::Comm, 5, 5)};
  Schedule s = make_schedule({slot(0, 5), slot(3, 8)});
  expect_violation(p, s, {"link", "'C1'", "'C2'"});
  s = make_schedule({slot(0, 5), slot(5, 10)});
  EXPECT_EQ(check_schedule(p, s), "");
  // A collective is never parallel.
  s.tasks[1].parallel = true;
  expect_violation(p, s, {"'C2'", "parallel"});
  // Typed as vector operators they may overlap on two vector cores, not on one.
  p.comm_as_vector = true;
  s = make_schedule({slot(0, 5, false, -1, 0), slot(3, 8, false, -1, 1)});
  EXPECT_EQ(check_schedule(p, s), "");
  s.tasks[1].vector_core = 0;
  expect_violation(p, s, {"vector core 0", "'C1'", "'C2'"});
}

TEST(ScheduleCommon, CheckRejectsAWrongMakespan) {
  Schedule s = example_b_schedule();
  s.makespan_s = 12;
  expect_violation(example_b(), s, {"makespan"});
  s.makespan_s = 10;
  expect_violation(example_b(), s, {"makespan"});
  s.makespan_s = std::numeric_limits<double>::quiet_NaN();
  expect_violation(example_b(), s, {"makespan"});
  // The empty problem: makespan 0.
  Schedule empty;
  empty.feasible = true;
  EXPECT_EQ(check_schedule(Problem{}, empty), "");
  empty.makespan_s = -1;
  expect_violation(Problem{}, empty, {"makespan"});
}

TEST(ScheduleCommon, CheckRejectsMalformedSchedules) {
  Schedule s = example_b_schedule();
  s.tasks.pop_back();
  expect_violation(example_b(), s, {"3", "4"});
  s = example_b_schedule();
  s.feasible = false;
  expect_violation(example_b(), s, {"infeasible"});
  // A negative start.
  Problem one;
  one.tasks = {task("G", TaskKind::Tensor, 1, 1)};
  Schedule g = make_schedule({slot(-1, 0, false, 0)});
  expect_violation(one, g, {"'G'"});
}

TEST(ScheduleCommon, CheckNoOpsTakeNoTimeAndCarryPrecedence) {
  // Example E with a no-op KT between K and S.
  Problem p = example_e();
  p.tasks.push_back(task("KT", TaskKind::None, 0, 0));
  p.edges = {{0, 3}, {1, 6}, {6, 3}, {3, 4}, {4, 5}, {2, 5}};
  Schedule s = example_e_schedule();
  s.tasks.push_back(slot(6, 6));
  EXPECT_EQ(check_schedule(p, s), "");
  s.tasks[6] = slot(6, 7);  // a no-op lasts 0
  expect_violation(p, s, {"'KT'", "duration"});
  s.tasks[6] = slot(5, 5);  // before K ends
  expect_violation(p, s, {"'KT'", "'K'"});
  s.tasks[6] = slot(6, 6, false, 0);  // no core
  expect_violation(p, s, {"'KT'"});
}

// ---------------------------------------------------------------------------------------------------------
// summarize (layer-schedule.md 5)

TEST(ScheduleCommon, SummarizeExampleE) {
  const Problem p = example_e();
  Schedule s = example_e_schedule();
  summarize(p, s);
  // TC busy 6 + 6 + 6 + 4 + 2·2.5 = 27; VC busy 3.
  EXPECT_NEAR(s.tensor_utilisation, 27.0 / (2 * 15.5), 1e-12);
  EXPECT_NEAR(s.tensor_utilisation, 0.870968, 1e-6);
  EXPECT_NEAR(s.vector_utilisation, 3.0 / 15.5, 1e-12);
  EXPECT_NEAR(s.vector_utilisation, 0.193548, 1e-6);
  EXPECT_DOUBLE_EQ(s.tensor_peak, 1.0);
  EXPECT_DOUBLE_EQ(s.vector_peak, 1.0);
  // e_Q + e_K + e_V + e_S + e_M + e'_P.
  EXPECT_DOUBLE_EQ(s.energy_j, 1 + 2 + 4 + 8 + 16 + 320);
  EXPECT_DOUBLE_EQ(s.makespan_s, 15.5);
}

TEST(ScheduleCommon, SummarizeCountsFinishesBeforeStarts) {
  // Example C: two rounds of two; at t = 4 two finish and two start: the peak is 2 of 2, not 4.
  Schedule s = example_c_schedule();
  summarize(example_c(), s);
  EXPECT_DOUBLE_EQ(s.tensor_peak, 1.0);
  EXPECT_DOUBLE_EQ(s.vector_peak, 0.0);
  EXPECT_DOUBLE_EQ(s.tensor_utilisation, 1.0);
  EXPECT_DOUBLE_EQ(s.vector_utilisation, 0.0);
  // Example D: TC0 and TC1 in [0,5), VC0 throughout.
  Schedule d = example_d_schedule();
  summarize(example_d(), d);
  EXPECT_DOUBLE_EQ(d.tensor_peak, 1.0);
  EXPECT_DOUBLE_EQ(d.vector_peak, 1.0);
  EXPECT_DOUBLE_EQ(d.tensor_utilisation, 11.0 / 16);
  EXPECT_DOUBLE_EQ(d.vector_utilisation, 1.0);
}

TEST(ScheduleCommon, SummarizeParallelFusedUsesAllTensorCoresAndThePairedVectorCores) {
  // n_TC = 2, n_VC = 4: a parallel fused task holds 2 tensor cores and n_P = 2 vector cores.
  Problem p;
  p.tensor_cores = 2;
  p.vector_cores = 4;
  p.tasks = {task("F", TaskKind::Fused, 8, 2, 1, 3), task("V", TaskKind::Vector, 4, 1, 5, 7)};
  Schedule s = make_schedule({slot(0, 2, true), slot(2, 3, true)});
  summarize(p, s);
  EXPECT_DOUBLE_EQ(s.tensor_peak, 1.0);
  EXPECT_DOUBLE_EQ(s.vector_peak, 1.0);  // V parallel: all 4
  EXPECT_DOUBLE_EQ(s.tensor_utilisation, 2.0 * 2 / (2 * 3));
  EXPECT_DOUBLE_EQ(s.vector_utilisation, (2.0 * 2 + 4.0 * 1) / (4 * 3));
  EXPECT_DOUBLE_EQ(s.energy_j, 3 + 7);
  // Without V: the vector peak is n_P / n_VC = 0.5.
  p.tasks.pop_back();
  Schedule f = make_schedule({slot(0, 2, true)});
  summarize(p, f);
  EXPECT_DOUBLE_EQ(f.tensor_peak, 1.0);
  EXPECT_DOUBLE_EQ(f.vector_peak, 0.5);
  // n_TC = 4, n_VC = 2: all 4 tensor cores (our choice, not n_P = 2) and both vector cores.
  p.tensor_cores = 4;
  p.vector_cores = 2;
  summarize(p, f);
  EXPECT_DOUBLE_EQ(f.tensor_peak, 1.0);
  EXPECT_DOUBLE_EQ(f.vector_peak, 1.0);
  EXPECT_DOUBLE_EQ(f.tensor_utilisation, 1.0);
}

TEST(ScheduleCommon, SummarizeCollectivesUseNoCoreUnlessTypedAsVector) {
  // Example F, our rules: AR on the link [4,9); T = 11.
  Problem p = example_f();
  p.tasks[2].single_energy_j = p.tasks[2].parallel_energy_j = 0.25;
  Schedule s = make_schedule({slot(0, 4, true), slot(4, 8, true), slot(4, 9), slot(9, 11, false, -1, 0)});
  summarize(p, s);
  EXPECT_DOUBLE_EQ(s.tensor_utilisation, (2.0 * 4 + 2.0 * 4) / (2 * 11));
  EXPECT_DOUBLE_EQ(s.vector_utilisation, 2.0 / 11);
  EXPECT_DOUBLE_EQ(s.vector_peak, 1.0);
  EXPECT_DOUBLE_EQ(s.energy_j, 0.25);
  // Original rules: AR on VC0 [4,9), W1 single [4,12); T = 12.
  p.comm_as_vector = true;
  Schedule o =
      make_schedule({slot(0, 4, true), slot(4, 12, false, 1), slot(4, 9, false, -1, 0), slot(9, 11, false, -1, 0)});
  summarize(p, o);
  EXPECT_DOUBLE_EQ(o.tensor_utilisation, (2.0 * 4 + 8) / (2 * 12));
  EXPECT_DOUBLE_EQ(o.vector_utilisation, 7.0 / 12);
  EXPECT_DOUBLE_EQ(o.tensor_peak, 1.0);
  EXPECT_DOUBLE_EQ(o.vector_peak, 1.0);
}

TEST(ScheduleCommon, SummarizeEmptyScheduleIsZero) {
  Problem p;
  p.tasks = {task("N", TaskKind::None, 0, 0, 9, 9)};
  Schedule s = make_schedule({slot(0, 0)});
  s.tensor_utilisation = s.energy_j = 5;  // overwritten
  summarize(p, s);
  EXPECT_EQ(s.energy_j, 0.0);  // a no-op costs nothing
  EXPECT_EQ(s.tensor_utilisation, 0.0);
  EXPECT_EQ(s.vector_utilisation, 0.0);
  EXPECT_EQ(s.tensor_peak, 0.0);
  EXPECT_EQ(s.vector_peak, 0.0);
}

// ---------------------------------------------------------------------------------------------------------
// assign_cores (the greedy interval rule of section 5)

Schedule without_cores(Schedule s) {
  for (TaskSlot& t : s.tasks) t.tensor_core = t.vector_core = 7;  // garbage the rule must overwrite
  return s;
}

TEST(ScheduleCommon, AssignCoresExampleD) {
  const Problem p = example_d();
  Schedule s = without_cores(example_d_schedule());
  ASSERT_TRUE(assign_cores(p, s));
  // F takes pair 0; T the highest free tensor core, TC1; V (after F) the vector core VC0.
  EXPECT_EQ(s.tasks[0].tensor_core, 0);
  EXPECT_EQ(s.tasks[0].vector_core, 0);
  EXPECT_EQ(s.tasks[2].tensor_core, 1);
  EXPECT_EQ(s.tasks[2].vector_core, -1);
  EXPECT_EQ(s.tasks[1].tensor_core, -1);
  EXPECT_EQ(s.tasks[1].vector_core, 0);
  EXPECT_EQ(check_schedule(p, s), "");
  // V first then F also gives 8: V [0,3) on VC0, F [3,8) on pair 0, T on TC1.
  Schedule other = without_cores(make_schedule({slot(3, 8), slot(0, 3), slot(0, 6)}));
  ASSERT_TRUE(assign_cores(p, other));
  EXPECT_EQ(other.tasks[0].tensor_core, 0);
  EXPECT_EQ(other.tasks[0].vector_core, 0);
  EXPECT_EQ(other.tasks[2].tensor_core, 1);
  EXPECT_EQ(check_schedule(p, other), "");
}

TEST(ScheduleCommon, AssignCoresFailsWithoutAFreePair) {
  // Phase 1 of example D: all three at once needs two vector cores.
  Schedule s = make_schedule({slot(0, 5), slot(0, 3), slot(0, 6)});
  EXPECT_FALSE(assign_cores(example_d(), s));
  // T and T2 hold both tensor cores when F starts: no pair is free.
  Problem p = example_d();
  p.tasks.push_back(task("T2", TaskKind::Tensor, 6, 3.5));
  Schedule t = make_schedule({slot(1, 6), slot(6, 9), slot(0, 6), slot(0, 6)});
  EXPECT_FALSE(assign_cores(p, t));
  // Three tensor tasks at once on two tensor cores.
  Schedule c = make_schedule({slot(0, 4), slot(0, 4), slot(3, 7), slot(7, 11)});
  EXPECT_FALSE(assign_cores(example_c(), c));
}

TEST(ScheduleCommon, AssignCoresParallelTasksTakeEveryCore) {
  const Problem p = example_b();
  Schedule s = without_cores(example_b_schedule());
  ASSERT_TRUE(assign_cores(p, s));
  EXPECT_EQ(s.tasks[0].tensor_core, -1);
  EXPECT_EQ(s.tasks[0].vector_core, -1);
  EXPECT_EQ(s.tasks[1].tensor_core, 1);  // the highest free tensor core
  EXPECT_EQ(s.tasks[2].vector_core, 0);
  EXPECT_EQ(s.tasks[3].vector_core, 0);
  EXPECT_EQ(check_schedule(p, s), "");
  // A parallel task cannot start while a core of its type is busy.
  Schedule busy = make_schedule({slot(0, 3, true), slot(2, 8), slot(3, 8), slot(9, 11)});
  EXPECT_FALSE(assign_cores(p, busy));
}

TEST(ScheduleCommon, AssignCoresExampleEAndF) {
  const Problem e = example_e();
  Schedule s = without_cores(example_e_schedule());
  ASSERT_TRUE(assign_cores(e, s));
  EXPECT_EQ(check_schedule(e, s), "");
  EXPECT_EQ(s.tasks[5].tensor_core, -1);  // P parallel
  // Example F: the collective gets no core; typed as a vector operator it gets VC0.
  Problem f = example_f();
  Schedule ours = without_cores(make_schedule({slot(0, 4, true), slot(4, 8, true), slot(4, 9), slot(9, 11)}));
  ASSERT_TRUE(assign_cores(f, ours));
  EXPECT_EQ(ours.tasks[2].tensor_core, -1);
  EXPECT_EQ(ours.tasks[2].vector_core, -1);
  EXPECT_EQ(check_schedule(f, ours), "");
  f.comm_as_vector = true;
  Schedule original = without_cores(make_schedule({slot(0, 4, true), slot(4, 12), slot(4, 9), slot(9, 11)}));
  ASSERT_TRUE(assign_cores(f, original));
  EXPECT_EQ(original.tasks[2].vector_core, 0);
  EXPECT_EQ(original.tasks[3].vector_core, 0);
  EXPECT_EQ(original.tasks[1].tensor_core, 1);
  EXPECT_EQ(check_schedule(f, original), "");
}

TEST(ScheduleCommon, AssignCoresGivesFusedTasksTheirPairFirstAtOneInstant) {
  // n_TC = 3, n_VC = 2. X holds TC2 (highest free) in [0,10); V1 takes VC1 in [0,2), V2 VC0 in [0,10).
  // At t = 3 a tensor task T and a fused task F start with TC0, TC1 and VC1 free: only pair 1 fits F, and
  // it stays free only if F chooses before T (which would take TC1).
  Problem p;
  p.tensor_cores = 3;
  p.vector_cores = 2;
  p.tasks = {task("X", TaskKind::Tensor, 10, 10), task("V1", TaskKind::Vector, 2, 2),
             task("V2", TaskKind::Vector, 10, 10), task("T", TaskKind::Tensor, 4, 4), task("F", TaskKind::Fused, 4, 4)};
  Schedule s = make_schedule({slot(0, 10), slot(0, 2), slot(0, 10), slot(3, 7), slot(3, 7)});
  ASSERT_TRUE(assign_cores(p, s));
  EXPECT_EQ(s.tasks[0].tensor_core, 2);
  EXPECT_EQ(s.tasks[1].vector_core, 1);
  EXPECT_EQ(s.tasks[2].vector_core, 0);
  EXPECT_EQ(s.tasks[4].tensor_core, 1);
  EXPECT_EQ(s.tasks[4].vector_core, 1);
  EXPECT_EQ(s.tasks[3].tensor_core, 0);
  EXPECT_EQ(check_schedule(p, s), "");
}

}  // namespace
