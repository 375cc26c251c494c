// Hand-worked placement examples (placement.md). Every expected number is derived in the comments from
// the definitions in placement.md ("Stage load", "Dynamic program", "Hand-set strategy").

#include <gtest/gtest.h>

#include <vector>

#include "placement/chain.h"
#include "placement/corrected_planner.h"
#include "placement/plan_check.h"
#include "placement/reference_planner.h"
#include "placement/stage_costs.h"
#include "placement/test_clusters.h"

namespace {

using phaze::placement::Chain;
using phaze::placement::ChainEdge;
using phaze::placement::ChainNode;
using phaze::placement::Cluster;
using phaze::placement::CorrectedPlanner;
using phaze::placement::HandSetPlan;
using phaze::placement::Optimizer;
using phaze::placement::Plan;
using phaze::placement::PlanCheck;
using phaze::placement::ReferencePlanner;
using phaze::placement::Stage;
using phaze::placement::testing::cluster;
using phaze::placement::testing::with_corrected;

ChainNode node(double fw, double bw, double params, double acts, bool tp = false) {
  ChainNode v;
  v.forward_time = fw;
  v.backward_time = bw;
  v.parameter_bytes = params;
  v.activation_bytes = acts;
  v.tensor_parallel = tp;
  return v;
}

/// A chain 0 -> 1 -> ... -> n-1 with `bytes` on every edge.
Chain simple_chain(int64_t width, std::vector<ChainNode> nodes, double bytes) {
  Chain c;
  c.width = width;
  c.nodes = std::move(nodes);
  for (int i = 0; i + 1 < static_cast<int>(c.nodes.size()); ++i) c.edges.push_back(ChainEdge{i, i + 1, bytes});
  return c;
}

void expect_stages(const Plan& plan, const std::vector<std::pair<int, int>>& ranges,
                   const std::vector<int64_t>& devices) {
  ASSERT_EQ(plan.stages.size(), ranges.size());
  for (size_t q = 0; q < ranges.size(); ++q) {
    EXPECT_EQ(plan.stages[q].first, ranges[q].first) << "stage " << q;
    EXPECT_EQ(plan.stages[q].last, ranges[q].second) << "stage " << q;
    EXPECT_EQ(plan.stages[q].devices, devices[q]) << "stage " << q;
  }
}

// Example 1. Three nodes fw 1, bw 2, 10 parameter bytes, 5 activation bytes; edges 0->1, 1->2 of 10 bytes;
// bandwidth 10 (so every transfer takes 1); K = 4, N = 8, M = 100, SGD, no recomputation.
std::vector<Chain> example1() {
  return {simple_chain(1, {node(1, 2, 10, 5), node(1, 2, 10, 5), node(1, 2, 10, 5)}, 10)};
}

// Loads of the stages (plain, no recomputation):
//   {0,1,2}: F = 1+1+1 = 3, B = 2+2+2 = 6                       -> 9
//   {0}:     F = 1, B = 10/10 + 2 = 3                           -> 4
//   {1,2}:   F = 10/10 + 1 + 1 = 3, B = 2 + 2 = 4               -> 7
//   {0,1}:   F = 2, B = (10/10 + 2) + 2 = 5                     -> 7
//   {2}:     F = 10/10 + 1 = 2, B = 2                           -> 4
//   {1}:     F = 10/10 + 1 = 2, B = 10/10 + 2 = 3               -> 5
// Memory (SGD): {0,1,2} needs 2*30 + 15 = 75 <= 100; every smaller stage fits even with 3 in flight.
// One stage: d = 1: 9*8 = 72; d = 2: 9*4 + 4*1*30/(10*2) = 36 + 6 = 42;
//            d = 3: 9*ceil(8/3) + 4*2*30/(10*3) = 27 + 8 = 35; d = 4: 9*2 + 4*3*30/(10*4) = 18 + 9 = 27.
// Two stages (2 devices, d <= 2): {0},{1,2}: max 7 -> d = 2: 7*(4+1) + 4*1*10/20 = 35 + 2 = 37;
//            {0,1},{2}: 7*(4+1) + 4*1*20/20 = 39; d = 1 is worse (7*9 = 63).
// Three stages (d = 1): max(4,5,4) = 5 -> 5*(8+2) = 50.
// Best: one stage on d = 4, time 27.
TEST(PlacementExamples, ThreeNodeChainBestIsOneStageOnFourReplicas) {
  ReferencePlanner planner;
  const Plan plan = planner.solve(example1(), cluster(4, 8, 100, 10, false));
  ASSERT_TRUE(plan.feasible);
  EXPECT_DOUBLE_EQ(plan.time_per_batch, 27.0);
  EXPECT_EQ(plan.data_parallel, 4);
  EXPECT_EQ(plan.width, 1);
  expect_stages(plan, {{0, 3}}, {1});
}

// Hand-set p = 2, t = 1, d = 2, L = 2: ceil(L/p) = 1, node 0 -> stage 0, node 1 -> stage 1, node 2 (>= L)
// -> last stage 1. Stages {0} (load 4) and {1,2} (load 7): 7*(ceil(8/2) + 2 - 1) + 4*1*10/(10*2) = 35 + 2 = 37.
TEST(PlacementExamples, ThreeNodeChainHandSet) {
  const Cluster c = cluster(4, 8, 100, 10, false);
  const PlanCheck hand = evaluate_hand_set(example1(), c, HandSetPlan{2, 1, 2}, 2);
  ASSERT_TRUE(hand.feasible) << hand.reason;
  EXPECT_DOUBLE_EQ(hand.time_per_batch, 37.0);

  // p = 2, L = 4: ceil(4/2) = 2, nodes 0,1 -> stage 0, node 2 -> stage 1: loads 7 and 4; d = 1:
  // 7*(8 + 1) + 0 = 63.
  const PlanCheck wide_l = evaluate_hand_set(example1(), c, HandSetPlan{2, 1, 1}, 4);
  ASSERT_TRUE(wide_l.feasible) << wide_l.reason;
  EXPECT_DOUBLE_EQ(wide_l.time_per_batch, 63.0);

  // p = 1, d = 4: the whole chain, 9*2 + 4*3*30/(10*4) = 27 (the planner's answer).
  const PlanCheck single = evaluate_hand_set(example1(), c, HandSetPlan{1, 1, 4}, 3);
  ASSERT_TRUE(single.feasible) << single.reason;
  EXPECT_DOUBLE_EQ(single.time_per_batch, 27.0);
}

TEST(PlacementExamples, ThreeNodeChainHandSetInfeasible) {
  const Cluster c = cluster(4, 8, 100, 10, false);
  // p*t*d = 2*1*3 = 6 > 4.
  EXPECT_FALSE(evaluate_hand_set(example1(), c, HandSetPlan{2, 1, 3}, 2).feasible);
  // Width 2 is not in the input.
  EXPECT_FALSE(evaluate_hand_set(example1(), c, HandSetPlan{1, 2, 1}, 3).feasible);
  // d = 4 > N = 3.
  EXPECT_FALSE(evaluate_hand_set(example1(), cluster(4, 3, 100, 10, false), HandSetPlan{1, 1, 4}, 3).feasible);
  // p = 3, L = 1: ceil(1/3) = 1, node 0 -> stage 0, nodes 1 and 2 -> stage 2: stage 1 is empty.
  EXPECT_FALSE(evaluate_hand_set(example1(), c, HandSetPlan{3, 1, 1}, 1).feasible);
  // p = 2, L = 6: ceil(6/2) = 3, all three nodes -> stage 0: stage 1 is empty.
  EXPECT_FALSE(evaluate_hand_set(example1(), c, HandSetPlan{2, 1, 1}, 6).feasible);
  // Memory: p = 1 needs 75 bytes, M = 74.
  EXPECT_FALSE(evaluate_hand_set(example1(), cluster(4, 8, 74, 10, false), HandSetPlan{1, 1, 1}, 3).feasible);
  // Memory with stashing: p = 3, L = 3: stage 0 = {0} holds 2*10 + 5 + 2*5 = 35 (3 in flight) <= 35 fits;
  // with M = 34 it does not.
  EXPECT_TRUE(evaluate_hand_set(example1(), cluster(4, 8, 35, 10, false), HandSetPlan{3, 1, 1}, 3).feasible);
  EXPECT_FALSE(evaluate_hand_set(example1(), cluster(4, 8, 34, 10, false), HandSetPlan{3, 1, 1}, 3).feasible);
}

// Example 2, recomputation. Nodes: n0 fw 3 bw 1, n1 fw 1 bw 1, n2 fw 1 bw 1, each 10 parameter and 10
// activation bytes; edges 0->1 and 1->2 of 2 bytes, bandwidth 1 (a transfer takes 2); K = 2, N = 1 (so d = 1),
// M = 80, SGD.
std::vector<Chain> example2() {
  return {simple_chain(1, {node(3, 1, 10, 10), node(1, 1, 10, 10), node(1, 1, 10, 10)}, 2)};
}

// With recomputation:
//   One stage {0,1,2}: 2*30 + 30 = 90 > 80, does not fit.
//   {0},{1,2}: stage {0} (s = 2): memory 2*10 + 10 + 1*0 (no edge enters it) = 30 <= 80.
//              F = 3; F0 = 3; recomputing backward: start(n0) = max(F0 = 3, 2/1 = 2) = 3, R = 3 + 1 = 4;
//              load = F + R = 7 (without the F0 floor it would be 3 + 3 = 6).
//              stage {1,2} (last, s = 1): memory 2*20 + 20 = 60 <= 80; F = 2 + 1 + 1 = 4, B = 1 + 1 = 2,
//              load 6.  time = max(7, 6) * (1 + 2 - 1) = 14.
//   {0,1},{2}: stage {0,1}: F = 4, F0 = 4, R: n1 starts at max(4, 2) = 4 -> 5, n0 -> 6; load 10.
//              stage {2}: F = 2 + 1 = 3, B = 1, load 4. time = 10 * 2 = 20.
//   Three stages need 3 devices > K = 2.
// Best 14 (with the floor ignored it would be 12).
TEST(PlacementExamples, RecomputingBackwardIsFlooredByForward) {
  ReferencePlanner planner;
  const Plan plan = planner.solve(example2(), cluster(2, 1, 80, 1, true));
  ASSERT_TRUE(plan.feasible);
  EXPECT_DOUBLE_EQ(plan.time_per_batch, 14.0);
  EXPECT_EQ(plan.data_parallel, 1);
  expect_stages(plan, {{0, 1}, {1, 3}}, {1, 1});
}

// The same without recomputation (stash = activation bytes):
//   {0},{1,2}: stage {0} memory 30 + 1*10 = 40 <= 80, load F + B = 3 + (2 + 1) = 6; stage {1,2} load 6.
//              time = 6 * 2 = 12.
//   {0,1},{2}: stage {0,1} memory 60 + 1*20 = 80 <= 80 (exactly), load F + B = 4 + (2 + 1 + 1) = 8;
//              time = 8 * 2 = 16.
// Best 12.
TEST(PlacementExamples, SameChainWithoutRecomputation) {
  ReferencePlanner planner;
  const Plan plan = planner.solve(example2(), cluster(2, 1, 80, 1, false));
  ASSERT_TRUE(plan.feasible);
  EXPECT_DOUBLE_EQ(plan.time_per_batch, 12.0);
  expect_stages(plan, {{0, 1}, {1, 3}}, {1, 1});
}

// Example 3, memory forces more stages. Four nodes fw 1 bw 1, no parameters, 10 activation bytes each,
// 0-byte edges, bandwidth 1, K = 4, N = 4, SGD, no recomputation (stash = activations).
std::vector<Chain> example3() {
  return {simple_chain(1, {node(1, 1, 0, 10), node(1, 1, 0, 10), node(1, 1, 0, 10), node(1, 1, 0, 10)}, 0)};
}

// M = 40: one stage needs 40 <= 40, load 4 + 4 = 8; d = 4: 8 * ceil(4/4) + 0 = 8, which no pipeline beats
// (two stages on d = 2: at least 4 * 3 = 12; d = 1 pipelines: at least 2 * 7 = 14).
TEST(PlacementExamples, LooseMemoryOneStage) {
  ReferencePlanner planner;
  const Plan plan = planner.solve(example3(), cluster(4, 4, 40, 1, false));
  ASSERT_TRUE(plan.feasible);
  EXPECT_DOUBLE_EQ(plan.time_per_batch, 8.0);
  EXPECT_EQ(plan.data_parallel, 4);
  expect_stages(plan, {{0, 4}}, {1});
}

// M = 30: one stage (40) no longer fits.
//   Two stages: the first holds its activations for 2 micro-batches: {0} needs 10 + 10 = 20 (ok) while
//   {0,1} needs 20 + 20 = 40 and {0,1,2} 30 + 30 = 60 (no). So {0},{1,2,3} (last stage 30 <= 30):
//   loads {0}: F 1 + B (0/1 + 1) = 2, {1,2,3}: 3 + 3 = 6. d = 2 (2 stages * 1 device * 2 = 4 <= 4):
//   6 * (ceil(4/2) + 2 - 1) = 18; d = 1: 6 * 5 = 30.
//   Three stages (d = 1): {0},{1},{2,3}: memory 10 + 2*10 = 30, 10 + 10 = 20, 20: fits; loads 2, 2, 4 ->
//   4 * (4 + 2) = 24.  Four stages: the first needs 10 + 3*10 = 40 > 30.
// Best 18.
TEST(PlacementExamples, TightMemoryForcesAPipeline) {
  ReferencePlanner planner;
  const Plan plan = planner.solve(example3(), cluster(4, 4, 30, 1, false));
  ASSERT_TRUE(plan.feasible);
  EXPECT_DOUBLE_EQ(plan.time_per_batch, 18.0);
  EXPECT_EQ(plan.data_parallel, 2);
  expect_stages(plan, {{0, 1}, {1, 4}}, {1, 1});
}

// M = 9: a single node already needs 10 bytes: no plan at all.
TEST(PlacementExamples, NoFeasiblePlan) {
  ReferencePlanner planner;
  const Plan plan = planner.solve(example3(), cluster(4, 4, 9, 1, false));
  EXPECT_FALSE(plan.feasible);
  EXPECT_TRUE(plan.stages.empty());
}

// Every layer split over t = 2 devices but only K = 1: no stage can be placed.
TEST(PlacementExamples, NoFeasiblePlanWhenTheWidthExceedsTheDevices) {
  ReferencePlanner planner;
  const Plan plan = planner.solve({simple_chain(2, {node(1, 1, 1, 1, true), node(1, 1, 1, 1, true)}, 1)},
                                  cluster(1, 4, 1000, 1, false));
  EXPECT_FALSE(plan.feasible);
}

// Example 4, choosing the width. One node; width 1: fw 2, bw 2; width 2 (split): fw 1, bw 1. K = 2, N = 2,
// M = 1000, bandwidth 10.
//   No parameters: width 1 on d = 2: 4 * ceil(2/2) = 4 (d = 1: 4 * 2 = 8); width 2 uses 2 devices so d = 1:
//   2 * 2 = 4. A tie: the smaller width wins (a later width must be strictly faster).
//   10 parameter bytes: width 1, d = 2: 4 + 4*1*10/(10*2) = 6; d = 1: 8; width 2: 2*2 + 0 = 4 -> width 2.
TEST(PlacementExamples, WidthChoiceAndTies) {
  ReferencePlanner planner;
  const Cluster c = cluster(2, 2, 1000, 10, false);
  {
    const std::vector<Chain> chains = {simple_chain(1, {node(2, 2, 0, 0)}, 0),
                                       simple_chain(2, {node(1, 1, 0, 0, true)}, 0)};
    const Plan plan = planner.solve(chains, c);
    ASSERT_TRUE(plan.feasible);
    EXPECT_DOUBLE_EQ(plan.time_per_batch, 4.0);
    EXPECT_EQ(plan.width, 1);
    EXPECT_EQ(plan.data_parallel, 2);
    expect_stages(plan, {{0, 1}}, {1});
  }
  {
    const std::vector<Chain> chains = {simple_chain(2, {node(1, 1, 10, 0, true)}, 0),
                                       simple_chain(1, {node(2, 2, 10, 0)}, 0)};  // widths in any order
    const Plan plan = planner.solve(chains, c);
    ASSERT_TRUE(plan.feasible);
    EXPECT_DOUBLE_EQ(plan.time_per_batch, 4.0);
    EXPECT_EQ(plan.width, 2);
    EXPECT_EQ(plan.data_parallel, 1);
    expect_stages(plan, {{0, 1}}, {2});
  }
}

// Example 5, stages with different device counts. Width 2: n0 split (fw 1, bw 1), n1 not split (fw 3, bw 3),
// edge 0->1 of 0 bytes, K = 3, M large, no parameters.
//   One stage {0,1}: 2 devices (it holds a split layer), so d = 1; load (1 + 3) + (3 + 1) = 8.
//   Two stages {0} (2 devices) + {1} (1 device) = 3 devices, d = 1: loads 1 + 1 = 2 and 3 + 3 = 6.
//   N = 1: one stage 8 * 1 = 8 beats 6 * 2 = 12.  N = 4: one stage 8 * 4 = 32, two stages 6 * 5 = 30.
//   K = 2 and N = 4: two stages need 3 devices, so 32.
TEST(PlacementExamples, MixedDeviceStages) {
  const std::vector<Chain> chains = {simple_chain(2, {node(1, 1, 0, 1, true), node(3, 3, 0, 1)}, 0)};
  ReferencePlanner planner;
  {
    const Plan plan = planner.solve(chains, cluster(3, 1, 1000, 1, false));
    ASSERT_TRUE(plan.feasible);
    EXPECT_DOUBLE_EQ(plan.time_per_batch, 8.0);
    expect_stages(plan, {{0, 2}}, {2});
  }
  {
    const Plan plan = planner.solve(chains, cluster(3, 4, 1000, 1, false));
    ASSERT_TRUE(plan.feasible);
    EXPECT_DOUBLE_EQ(plan.time_per_batch, 30.0);
    EXPECT_EQ(plan.data_parallel, 1);
    expect_stages(plan, {{0, 1}, {1, 2}}, {2, 1});
  }
  {
    const Plan plan = planner.solve(chains, cluster(2, 4, 1000, 1, false));
    ASSERT_TRUE(plan.feasible);
    EXPECT_DOUBLE_EQ(plan.time_per_batch, 32.0);
    expect_stages(plan, {{0, 2}}, {2});
  }
}

// Example 6, a skip edge and Adam. Nodes n0, n1, n2 with fw 1, bw 1, 4 parameter bytes, 0 activations;
// edges 0->1 (0 bytes), 1->2 (0 bytes), 0->2 (6 bytes); bandwidth 2 (the skip transfer takes 3);
// K = 2, N = 2, M = 1000, Adam, recomputation on.
//   Stage {1,2} (last): F: n1 starts at 0/2 = 0 -> 1; n2 starts at max(finish n1 = 1, 6/2 = 3) = 3 -> 4.
//                       B: n2 -> 1, n1 -> 2. load 4 + 2 = 6.
//   Stage {0} (s = 2, recomputing): F = 1, F0 = 1; n0 starts at max(F0 = 1, 0/2, 6/2 = 3) = 3 -> R = 4;
//                       load 5.  Memory: 3*4 + 0 + 1 * (bytes entering {0} = 0) = 12.
//   {0},{1,2}, d = 1: 6 * (2 + 1) + 0 = 18.
//   {0,1},{2}: stage {2}: F = max(0/2, 6/2) + 1 = 4, B = 1: load 5; stage {0,1} (recomputing): F = 2, F0 = 2,
//              n1 starts at max(2, 0/2) = 2 -> 3, n0 at max(2, 3, 6/2 = 3) = 3 -> 4: load 6. 6 * 3 = 18.
//   One stage {0,1,2}: F = 3, B = 3, load 6 (last stage, plain). d = 1: 6 * 2 = 12;
//              d = 2: 6 * 1 + 4*1*12/(2*2) = 6 + 12 = 18.
// Best 12: one stage, d = 1.  With bandwidth 200 the parameter term is 4*1*12/400 = 0.12 and d = 2 gives 6.12.
TEST(PlacementExamples, SkipEdgeAndAdam) {
  Chain c;
  c.width = 1;
  c.nodes = {node(1, 1, 4, 0), node(1, 1, 4, 0), node(1, 1, 4, 0)};
  c.edges = {ChainEdge{0, 2, 6}, ChainEdge{0, 1, 0}, ChainEdge{1, 2, 0}};
  ReferencePlanner planner;
  const Plan plan = planner.solve({c}, cluster(2, 2, 1000, 2, true, Optimizer::Adam));
  ASSERT_TRUE(plan.feasible);
  EXPECT_DOUBLE_EQ(plan.time_per_batch, 12.0);
  EXPECT_EQ(plan.data_parallel, 1);
  expect_stages(plan, {{0, 3}}, {1});

  const Plan fast = planner.solve({c}, cluster(2, 2, 1000, 200, true, Optimizer::Adam));
  ASSERT_TRUE(fast.feasible);
  EXPECT_DOUBLE_EQ(fast.time_per_batch, 6.12);
  EXPECT_EQ(fast.data_parallel, 2);

  // Hand-set p = 2, t = 1, d = 1, L = 2 -> {0},{1,2} with the loads above: 6 * (2 + 1) = 18.
  const PlanCheck hand = evaluate_hand_set({c}, cluster(2, 2, 1000, 2, true, Optimizer::Adam), HandSetPlan{2, 1, 1}, 2);
  ASSERT_TRUE(hand.feasible) << hand.reason;
  EXPECT_DOUBLE_EQ(hand.time_per_batch, 18.0);

  // Adam memory: the one-stage plan needs 3*12 + 0 = 36 bytes, so with M = 35 only pipelines remain.
  // {0},{1,2}: stage {0} needs 3*4 + 1*0 (no edge enters it) = 12, stage {1,2} 3*8 = 24.
  // {0,1},{2}: stage {0,1} needs 3*8 + 1*0 = 24, stage {2} 12. Both fit and both give 18 (d = 1, as each
  // uses 2 devices); three stages would need 3 devices.
  const Plan tight = planner.solve({c}, cluster(2, 2, 35, 2, true, Optimizer::Adam));
  ASSERT_TRUE(tight.feasible);
  EXPECT_DOUBLE_EQ(tight.time_per_batch, 18.0);
  EXPECT_EQ(tight.stages.size(), 2u);
}

// ---------------------------------------------------------------------------------------------------------
// Corrected terms (method.md D22, D3): ring all-reduce per stage (the largest counts) and the optimizer
// step on the largest stage, instead of the reference's 4·(d − 1)·P_first/(d·BW).
// ---------------------------------------------------------------------------------------------------------

// The reference plan's parts: example 1's best is one stage of load 9 on d = 4 (2 micro-batches each):
// steady 9*2 = 18, no fill, synchronisation 4*3*30/(10*4) = 9, no optimizer step; 18 + 9 = 27.
TEST(PlacementExamples, ReferencePlanParts) {
  ReferencePlanner planner;
  const Plan plan = planner.solve(example1(), cluster(4, 8, 100, 10, false));
  ASSERT_TRUE(plan.feasible);
  EXPECT_DOUBLE_EQ(plan.parts.steady_state, 18.0);
  EXPECT_DOUBLE_EQ(plan.parts.fill_drain, 0.0);
  EXPECT_DOUBLE_EQ(plan.parts.data_parallel_sync, 9.0);
  EXPECT_DOUBLE_EQ(plan.parts.optimizer_step, 0.0);
}

// Two nodes fw 1, bw 1, 8 parameter bytes each, no activations, a 0-byte edge; K = 4, N = 8, bandwidth 2,
// data-parallel links 4 bytes/s, α = 0.25 per ring step, no optimizer cost.
//   {0,1}: load 4, P = 16.  d = 1: 4*8 = 32.
//          d = 2: 4*4 + 2*(1/2)*16/4 + 2*1*0.25 = 16 + 4 + 0.5 = 20.5.
//          d = 3: 4*3 + 2*(2/3)*16/4 + 2*2*0.25 = 12 + 5.33 + 1 = 18.33.
//          d = 4: 4*2 + 2*(3/4)*16/4 + 2*3*0.25 = 8 + 6 + 1.5 = 15.5.
//   {0},{1}: load 2, largest P = 8, 2 devices so d <= 2.  d = 1: 2*9 = 18.
//          d = 2: 2*(4 + 1) + 2*(1/2)*8/4 + 2*1*0.25 = 10 + 2 + 0.5 = 12.5.   <- best
// With the data-parallel links at the common bandwidth 2: {0},{1} d = 2 gives 10 + 4 + 0.5 = 14.5, still best
// ({0,1} d = 4: 8 + 12 + 1.5 = 21.5). The reference formula on the same chain (bandwidth 2): {0},{1} d = 2
// gives 10 + 4*1*8/(2*2) = 18, tied with d = 1 (18), and the smaller d wins.
std::vector<Chain> two_layers() {
  return {simple_chain(1, {node(1, 1, 8, 0), node(1, 1, 8, 0)}, 0)};
}

TEST(PlacementExamples, CorrectedRingAllReduceWithLatency) {
  CorrectedPlanner planner;
  const Cluster base = cluster(4, 8, 1000, 2, false);
  const Plan plan = planner.solve(two_layers(), with_corrected(base, 0.25, 4, 0));
  ASSERT_TRUE(plan.feasible);
  EXPECT_DOUBLE_EQ(plan.time_per_batch, 12.5);
  EXPECT_EQ(plan.data_parallel, 2);
  expect_stages(plan, {{0, 1}, {1, 2}}, {1, 1});
  EXPECT_DOUBLE_EQ(plan.parts.steady_state, 8.0);
  EXPECT_DOUBLE_EQ(plan.parts.fill_drain, 2.0);
  EXPECT_DOUBLE_EQ(plan.parts.data_parallel_sync, 2.5);
  EXPECT_DOUBLE_EQ(plan.parts.optimizer_step, 0.0);

  const Plan common = planner.solve(two_layers(), with_corrected(base, 0.25, 0, 0));
  ASSERT_TRUE(common.feasible);
  EXPECT_DOUBLE_EQ(common.time_per_batch, 14.5);
  EXPECT_DOUBLE_EQ(common.parts.data_parallel_sync, 4.5);

  // The same hand-set plan (p = 2, t = 1, d = 2, L = 2 puts one node in each stage) costs the same.
  const PlanCheck hand = evaluate_hand_set(two_layers(), with_corrected(base, 0.25, 4, 0), HandSetPlan{2, 1, 2}, 2);
  ASSERT_TRUE(hand.feasible) << hand.reason;
  EXPECT_DOUBLE_EQ(hand.time_per_batch, 12.5);
  EXPECT_DOUBLE_EQ(hand.parts.data_parallel_sync, 2.5);

  const Plan reference = ReferencePlanner().solve(two_layers(), base);
  ASSERT_TRUE(reference.feasible);
  EXPECT_DOUBLE_EQ(reference.time_per_batch, 18.0);
  EXPECT_EQ(reference.data_parallel, 1);
  EXPECT_DOUBLE_EQ(reference.parts.steady_state, 16.0);
  EXPECT_DOUBLE_EQ(reference.parts.fill_drain, 2.0);
  EXPECT_DOUBLE_EQ(reference.parts.data_parallel_sync, 0.0);
}

// The optimizer step makes the planner give up the smallest load: nodes (fw, bw, P) = (1, 1, 20),
// (1, 1, 20), (3, 3, 0), no activations, 0-byte edges, K = 2, N = 4, bandwidth 1, 1 s per parameter byte.
//   {0,1,2}: load 10, P = 40.  d = 1: 10*4 + 40 = 80;  d = 2: 10*2 + 2*(1/2)*40/1 + 40 = 100.
//   {0,1},{2}: loads 4, 6 -> 6, P = 40.  d = 1: 6*5 + 40 = 70.
//   {0},{1,2}: loads 2, 8 -> 8, P = 20.  d = 1: 8*5 + 20 = 60.   <- best, though its load is not the smallest
// The reference (no optimizer step, d = 1 has no synchronisation) picks {0,1},{2}: 6*5 = 30.
TEST(PlacementExamples, CorrectedOptimizerStepTradesLoadForSmallerStages) {
  const std::vector<Chain> chain = {simple_chain(1, {node(1, 1, 20, 0), node(1, 1, 20, 0), node(3, 3, 0, 0)}, 0)};
  const Cluster base = cluster(2, 4, 1000, 1, false);
  CorrectedPlanner planner;
  const Plan plan = planner.solve(chain, with_corrected(base, 0, 0, 1.0));
  ASSERT_TRUE(plan.feasible);
  EXPECT_DOUBLE_EQ(plan.time_per_batch, 60.0);
  EXPECT_EQ(plan.data_parallel, 1);
  expect_stages(plan, {{0, 1}, {1, 3}}, {1, 1});
  EXPECT_DOUBLE_EQ(plan.parts.steady_state, 32.0);
  EXPECT_DOUBLE_EQ(plan.parts.fill_drain, 8.0);
  EXPECT_DOUBLE_EQ(plan.parts.data_parallel_sync, 0.0);
  EXPECT_DOUBLE_EQ(plan.parts.optimizer_step, 20.0);

  const Plan reference = ReferencePlanner().solve(chain, base);
  ASSERT_TRUE(reference.feasible);
  EXPECT_DOUBLE_EQ(reference.time_per_batch, 30.0);
  expect_stages(reference, {{0, 2}, {2, 3}}, {1, 1});
}

// The ring formula of accelerator.md 7 on its worked example: 50,331,648 bytes over 8 ranks at 4 GiB/s take
// 2*7/8 * 50,331,648 / 4,294,967,296 = 0.0205078125 s. A one-layer stage of that many parameter bytes
// per device, replicated 8 times, synchronises in exactly that time; α = 1 µs adds 2*7 µs.
TEST(PlacementExamples, CorrectedSyncMatchesTheRingFormula) {
  const std::vector<Chain> chain = {simple_chain(1, {node(0.5, 1, 50331648.0, 0)}, 0)};
  phaze::placement::StageCosts costs;
  Cluster c = with_corrected(cluster(8, 64, 1e12, 4294967296.0, false), 0, 0, 0);
  costs.compute(chain.front(), c);
  const PlanCheck check = check_plan(costs, {Stage{0, 1, 1}}, 8, c);
  ASSERT_TRUE(check.feasible) << check.reason;
  EXPECT_DOUBLE_EQ(check.parts.data_parallel_sync, 0.0205078125);
  EXPECT_DOUBLE_EQ(check.parts.steady_state, 1.5 * 8);
  EXPECT_DOUBLE_EQ(check.time_per_batch, 12.0205078125);

  c.data_parallel_network.tiers[0].latency_s = 1e-6;
  EXPECT_DOUBLE_EQ(check_plan(costs, {Stage{0, 1, 1}}, 8, c).parts.data_parallel_sync, 0.0205078125 + 14e-6);
}

}  // namespace
