// Piper's planner against a brute force over every chain of downsets × width and degree per stage × TMPC per
// node on small random DAGs (chains, skip edges, diamonds, parallel branches; tight memory; odd N and K; one
// to four TMPCs), the objective against a hand computation, and independence of the unit of time.

#include "piper/planner.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>

#include "piper/choices.h"
#include "piper/downsets.h"

namespace {

using namespace phaze::piper;

/// A random DAG of `n` nodes of one of four shapes; nodes in topological order.
std::vector<std::pair<int, int>> random_edges(int n, int shape, std::mt19937_64& rng) {
  std::vector<std::pair<int, int>> edges;
  std::uniform_int_distribution<int> coin(0, 1);
  switch (shape) {
    case 0:  // chain
      for (int v = 1; v < n; ++v) edges.emplace_back(v - 1, v);
      break;
    case 1:  // chain with skip edges
      for (int v = 1; v < n; ++v) edges.emplace_back(v - 1, v);
      for (int v = 2; v < n; ++v)
        if (coin(rng)) edges.emplace_back(v - 2, v);
      break;
    case 2:  // diamonds: 0 → 1, 2 → 3 → ...
      for (int v = 1; v < n; ++v) {
        const int hub = ((v - 1) / 3) * 3;
        if ((v - hub) < 3) edges.emplace_back(hub, v);
        if ((v - hub) == 3) edges.emplace_back(v - 1, v), edges.emplace_back(v - 2, v);
      }
      break;
    default:  // two parallel branches (maybe joined), or any forward edges
      for (int v = 2; v < n; ++v)
        if (coin(rng)) edges.emplace_back(v - 2, v);
      if (n > 2) edges.emplace_back(0, 1);
      break;
  }
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  return edges;
}

/// With `shared_sync`, every TMPC of a node adds the same sync bytes to each edge (as in every published
/// input), so the planner builds stages one node at a time (GrowingStage); otherwise they differ, and it
/// builds each stage from scratch.
Problem random_problem(std::mt19937_64& rng, bool shared_sync = false) {
  std::uniform_int_distribution<int> nodes_dist(1, 4), shape(0, 3), small(1, 6), tmpcs(1, 4);
  std::uniform_real_distribution<double> real(0.1, 10.0);
  Problem p;
  const int n = nodes_dist(rng);
  p.devices = small(rng);
  p.micro_batches = small(rng);
  p.bandwidth_bytes_per_s = real(rng);
  p.widths = {1, 2, 3};
  for (int v = 0; v < n; ++v) p.nodes.push_back(Node{100 + 7 * v, "", {}, {}, {}});
  for (const auto& [a, b] : random_edges(n, shape(rng), rng)) {
    p.nodes[static_cast<size_t>(a)].out_edges.push_back(static_cast<int>(p.edges.size()));
    p.nodes[static_cast<size_t>(b)].in_edges.push_back(static_cast<int>(p.edges.size()));
    p.edges.push_back(Edge{a, b, real(rng)});
  }
  double memory_scale = 0;
  for (Node& node : p.nodes)
    for (size_t w = 0; w < p.widths.size(); ++w) {
      auto& list = node.tmpcs.emplace_back();
      if (w > 0 && small(rng) <= 2) continue;  // width not supported
      // Several TMPCs only on the smaller instances, so that the brute force stays small.
      const int count = n <= 3 ? tmpcs(rng) : std::min(tmpcs(rng), 2);
      for (int l = 0; l < count; ++l) {
        Tmpc c;
        c.id = fmt::format("c{}", l);
        c.time_per_sample_s = real(rng) / static_cast<double>(p.widths[w]);
        c.parameter_bytes = real(rng);
        c.memory_per_in_flight_bytes = real(rng);
        c.memory_fixed_bytes = real(rng);
        if (shared_sync && l > 0) {
          c.sync_in_bytes = list.front().sync_in_bytes;
          c.sync_out_bytes = list.front().sync_out_bytes;
        } else {
          for (size_t j = 0; j < node.in_edges.size(); ++j) c.sync_in_bytes.push_back(small(rng) <= 3 ? 0 : real(rng));
          for (size_t j = 0; j < node.out_edges.size(); ++j)
            c.sync_out_bytes.push_back(small(rng) <= 3 ? 0 : real(rng));
        }
        memory_scale += c.memory_per_in_flight_bytes + c.memory_fixed_bytes;
        list.push_back(c);
      }
    }
  // Tight memory: about what a few nodes need with a micro-batch or two in flight.
  p.memory_per_device_bytes =
      memory_scale / static_cast<double>(3 * n) * std::uniform_real_distribution<double>(0.8, 3.0)(rng);
  return p;
}

/// The least time per sample over every plan, by enumeration: ordered partitions of the nodes into stages
/// whose suffix unions are downsets, a width and a degree per stage, a TMPC per node.
double brute_force(const Problem& p) {
  const int n = static_cast<int>(p.nodes.size());
  double best = std::numeric_limits<double>::infinity();
  std::vector<StagePlan> stages;
  std::vector<char> used(static_cast<size_t>(n), 0);
  // Nodes not yet placed must form a downset: a stage may take a node only when all its predecessors are
  // placed already (in it or before it), which keeps each stage's suffix a downset.
  std::function<void(int)> place_stage;
  std::function<void(size_t, StagePlan&)> choose_tmpcs;
  choose_tmpcs = [&](size_t k, StagePlan& stage) {
    if (k == stage.nodes.size()) {
      stages.push_back(stage);
      place_stage(0);
      stages.pop_back();
      return;
    }
    const int w = width_index(p, stage.width);
    const auto& options = p.nodes[static_cast<size_t>(stage.nodes[k])].tmpcs[static_cast<size_t>(w)];
    for (size_t l = 0; l < options.size(); ++l) {
      stage.tmpc[k] = static_cast<int>(l);
      choose_tmpcs(k + 1, stage);
    }
  };
  place_stage = [&](int) {
    if (std::all_of(used.begin(), used.end(), [](char c) { return c; })) {
      const PlanEvaluation e = evaluate_plan(p, stages);
      if (e.valid) best = std::min(best, e.time_per_sample_s);
      return;
    }
    // Every non-empty set of unplaced nodes whose predecessors are placed or in the set.
    for (uint32_t mask = 1; mask < (1u << n); ++mask) {
      bool ok = true;
      for (int v = 0; v < n && ok; ++v) {
        if (!(mask >> v & 1)) continue;
        if (used[static_cast<size_t>(v)]) ok = false;
        for (int e : p.nodes[static_cast<size_t>(v)].in_edges) {
          const int u = p.edges[static_cast<size_t>(e)].from;
          if (!used[static_cast<size_t>(u)] && !(mask >> u & 1)) ok = false;
        }
      }
      if (!ok) continue;
      StagePlan stage;
      for (int v = 0; v < n; ++v)
        if (mask >> v & 1) stage.nodes.push_back(v);
      stage.tmpc.assign(stage.nodes.size(), 0);
      for (int v : stage.nodes) used[static_cast<size_t>(v)] = 1;
      for (int64_t t : p.widths)
        for (int64_t d = 1; d <= p.micro_batches; ++d) {
          if (p.micro_batches % d != 0 || d * t > p.devices) continue;
          bool supported = true;
          for (int v : stage.nodes)
            supported =
                supported && !p.nodes[static_cast<size_t>(v)].tmpcs[static_cast<size_t>(width_index(p, t))].empty();
          if (!supported) continue;
          stage.width = t;
          stage.data_parallel = d;
          choose_tmpcs(0, stage);
        }
      for (int v : stage.nodes) used[static_cast<size_t>(v)] = 0;
    }
  };
  place_stage(0);
  return best;
}

class PiperPlannerSync : public ::testing::TestWithParam<bool> {};

// Both ways of building a stage's choices: from scratch (sync bytes that differ between a node's TMPCs) and
// one node at a time along the walk over the stages of a downset (the same sync bytes for all of them).
TEST_P(PiperPlannerSync, EqualsTheBruteForceOnRandomSmallDags) {
  std::mt19937_64 rng(GetParam() ? 20261128 : 20261125);
  int feasible = 0, infeasible = 0, several_stages = 0, mixed_widths = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const Problem p = random_problem(rng, GetParam());
    const double expected = brute_force(p);
    const PiperAnswer a = plan_piper(p);
    if (!std::isfinite(expected)) {
      EXPECT_FALSE(a.feasible) << "trial " << trial << ": planner found " << a.time_per_sample_s;
      ++infeasible;
      continue;
    }
    ASSERT_TRUE(a.feasible) << "trial " << trial << ": brute force found " << expected;
    EXPECT_NEAR(a.time_per_sample_s, expected, 1e-12 * expected) << "trial " << trial;
    const PlanEvaluation e = evaluate_plan(p, a.stages);
    EXPECT_TRUE(e.valid) << e.reason;
    EXPECT_EQ(e.time_per_sample_s, a.time_per_sample_s);
    ++feasible;
    several_stages += a.stages.size() > 1;
    for (size_t i = 1; i < a.stages.size(); ++i)
      if (a.stages[i].width != a.stages[0].width || a.stages[i].data_parallel != a.stages[0].data_parallel) {
        ++mixed_widths;
        break;
      }
  }
  // The family reaches every kind of answer.
  EXPECT_GT(feasible, 100);
  EXPECT_GT(infeasible, 10);
  EXPECT_GT(several_stages, 20);
  EXPECT_GT(mixed_widths, 5);
}

INSTANTIATE_TEST_SUITE_P(SyncBytes, PiperPlannerSync, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "SharedByTmpcs" : "PerTmpc"; });

// GrowingStage against stage_choices, on the stages of random DAGs of up to 8 nodes that a walk from the whole
// graph reaches in up to 5 steps (a node added or removed at each step, as the planner walks): for every
// degree and every count of micro-batches in flight, the fastest choice that fits takes the same time (to
// rounding: the sums are taken in another order).
TEST(PiperChoices, GrowingStageGivesTheChoicesBuiltFromScratch) {
  std::mt19937_64 rng(99);
  int64_t compared = 0;
  for (int trial = 0; trial < 150; ++trial) {
    Problem p = random_problem(rng, true);
    // Larger graphs than the brute force can take: a second copy of the nodes beside the first.
    const size_t n = p.nodes.size(), m = p.edges.size();
    for (size_t v = 0; v < n; ++v) {
      Node copy = p.nodes[v];
      for (int& e : copy.in_edges) e += static_cast<int>(m);
      for (int& e : copy.out_edges) e += static_cast<int>(m);
      p.nodes.push_back(copy);
    }
    for (size_t e = 0; e < m; ++e)
      p.edges.push_back(
          Edge{p.edges[e].from + static_cast<int>(n), p.edges[e].to + static_cast<int>(n), p.edges[e].bytes});
    const Downsets downsets = enumerate_downsets(p);
    for (size_t w = 0; w < p.widths.size(); ++w) {
      ASSERT_TRUE(cut_independent_of_tmpc(p, static_cast<int>(w)));
      GrowingStage growing(p, static_cast<int>(w));
      std::vector<char> in_stage(p.nodes.size(), 0);
      // A walk: from the whole graph, remove removable nodes into the stage depth first, then put them back.
      std::function<void(int, int)> walk = [&](int outer, int inner) {
        std::vector<StageChoice> grown;
        growing.choices(grown);
        const std::vector<int> nodes = stage_nodes(downsets, outer, inner);
        for (int v : nodes) in_stage[static_cast<size_t>(v)] = 1;
        const StageChoices scratch = stage_choices(p, nodes, in_stage, static_cast<int>(w), false);
        for (int v : nodes) in_stage[static_cast<size_t>(v)] = 0;
        ASSERT_EQ(grown.empty(), scratch.choices.empty());
        for (int64_t d = 1; d <= 6; ++d)
          for (int64_t y = 1; y <= 7; ++y) {
            auto fastest = [&](const std::vector<StageChoice>& list) {
              double best = std::numeric_limits<double>::infinity();
              for (const StageChoice& c : list)
                if (c.max_in_flight >= y) best = std::min(best, c.time_s(d));
              return best;
            };
            const double a = fastest(grown), b = fastest(scratch.choices);
            if (std::isinf(b)) {
              EXPECT_TRUE(std::isinf(a));
            } else {
              EXPECT_NEAR(a, b, 1e-12 * std::abs(b)) << "trial " << trial << " d " << d << " y " << y;
            }
            ++compared;
          }
        if (nodes.size() >= 5) return;  // deep enough: the walk's pushes and pops are what is tested
        for (const auto& [v, smaller] : downsets.removals[static_cast<size_t>(inner)]) {
          growing.push(v);
          walk(outer, smaller);
          growing.pop();
        }
      };
      for (const auto& [v, smaller] : downsets.removals[static_cast<size_t>(downsets.full)]) {
        growing.push(v);
        walk(downsets.full, smaller);
        growing.pop();
      }
    }
  }
  EXPECT_GT(compared, 10000);
}

TEST(PiperPlanner, AnswerDoesNotDependOnTheUnitOfTime) {
  // Every time multiplied by 1e-8 (and the bandwidth by 1e8): the same plan, its time scaled. An absolute
  // tolerance of 1e-9 (the original's) would see every such time as a tie.
  std::mt19937_64 rng(7);
  int compared = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const Problem p = random_problem(rng);
    Problem scaled = p;
    scaled.bandwidth_bytes_per_s *= 1e8;
    for (Node& node : scaled.nodes)
      for (auto& list : node.tmpcs)
        for (Tmpc& c : list) c.time_per_sample_s *= 1e-8;
    const PiperAnswer a = plan_piper(p), b = plan_piper(scaled);
    ASSERT_EQ(a.feasible, b.feasible);
    if (!a.feasible) continue;
    EXPECT_NEAR(b.time_per_sample_s, a.time_per_sample_s * 1e-8, 1e-12 * a.time_per_sample_s * 1e-8);
    ++compared;
  }
  EXPECT_GT(compared, 20);
}

TEST(PiperPlanner, ObjectiveByHand) {
  // Two nodes a → b, one stage of both on d = 4 (N = 4): no cut edge; each node's time p/d plus the resync
  // 4·(d − 1)·w/(d·N·B) = 4·3·10/(4·4·100) = 0.075 s; (4 + 6)/4 + 2·0.075 = 2.65 s. With a alone in a first
  // stage (d = 1) and b after it (d = 1), both cut the edge of 8 bytes: 2·8/100 = 0.16 s each.
  Problem p;
  p.memory_per_device_bytes = 1000;
  p.devices = 8;
  p.bandwidth_bytes_per_s = 100;
  p.micro_batches = 4;
  p.widths = {1};
  p.nodes = {Node{10, "a", {{Tmpc{"v", 4, 10, 100, 50, {}, {0}}}}, {}, {0}},
             Node{11, "b", {{Tmpc{"v", 6, 10, 200, 50, {0}, {}}}}, {0}, {}}};
  p.edges = {Edge{0, 1, 8}};
  const PlanEvaluation one = evaluate_plan(p, {StagePlan{{0, 1}, 4, 1, {0, 0}}});
  ASSERT_TRUE(one.valid) << one.reason;
  EXPECT_DOUBLE_EQ(one.time_per_sample_s, 2.65);
  const PlanEvaluation two = evaluate_plan(p, {StagePlan{{0}, 1, 1, {0}}, StagePlan{{1}, 1, 1, {0}}});
  ASSERT_TRUE(two.valid) << two.reason;
  EXPECT_DOUBLE_EQ(two.stage_s[0], 4 + 0.16);
  EXPECT_DOUBLE_EQ(two.stage_s[1], 6 + 0.16);
  // Memory: the first stage holds σ = 2 micro-batches in flight: 100·2 + 50 = 250 bytes.
  p.memory_per_device_bytes = 249;
  EXPECT_FALSE(evaluate_plan(p, {StagePlan{{0}, 1, 1, {0}}, StagePlan{{1}, 1, 1, {0}}}).valid);
  // A backward edge is not a plan.
  EXPECT_FALSE(evaluate_plan(p, {StagePlan{{1}, 1, 1, {0}}, StagePlan{{0}, 1, 1, {0}}}).valid);
  p.memory_per_device_bytes = 1000;
  EXPECT_DOUBLE_EQ(plan_piper(p).time_per_sample_s, 2.65);
}

TEST(PiperDownsets, ChainAndParallelBranchesCountAsPublished) {
  // A chain of n nodes has n + 1 downsets and n(n + 1)/2 pairs; two parallel chains of a and b nodes
  // (a + b nodes, no edge between them) have (a + 1)(b + 1) downsets.
  Problem chain;
  for (int v = 0; v < 6; ++v) chain.nodes.push_back(Node{v, "", {}, {}, {}});
  for (int v = 1; v < 6; ++v) {
    chain.nodes[static_cast<size_t>(v - 1)].out_edges.push_back(v - 1);
    chain.nodes[static_cast<size_t>(v)].in_edges.push_back(v - 1);
    chain.edges.push_back(Edge{v - 1, v, 1});
  }
  const Downsets c = enumerate_downsets(chain);
  EXPECT_EQ(c.sets.size(), 7u);
  EXPECT_EQ(c.pairs, 6 * 7 / 2);
  Problem two = chain;
  // Cut the chain 0-1-2-3-4-5 after node 2: chains of 3 and 3.
  two.edges.erase(two.edges.begin() + 2);
  for (Node& node : two.nodes) node.in_edges.clear(), node.out_edges.clear();
  for (size_t e = 0; e < two.edges.size(); ++e) {
    two.nodes[static_cast<size_t>(two.edges[e].from)].out_edges.push_back(static_cast<int>(e));
    two.nodes[static_cast<size_t>(two.edges[e].to)].in_edges.push_back(static_cast<int>(e));
  }
  EXPECT_EQ(enumerate_downsets(two).sets.size(), 16u);
}

}  // namespace

namespace {

/// `branches` parallel chains of `length` nodes each, two TMPCs per node at one width, random figures.
Problem parallel_chains(int branches, int length, bool shared_sync, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> real(0.1, 10.0);
  Problem p;
  p.devices = 12;
  p.micro_batches = 12;
  p.bandwidth_bytes_per_s = 5;
  p.widths = {1};
  for (int b = 0; b < branches; ++b)
    for (int k = 0; k < length; ++k) {
      const int v = static_cast<int>(p.nodes.size());
      p.nodes.push_back(Node{v, "", {}, {}, {}});
      if (k > 0) {
        p.nodes[static_cast<size_t>(v - 1)].out_edges.push_back(static_cast<int>(p.edges.size()));
        p.nodes[static_cast<size_t>(v)].in_edges.push_back(static_cast<int>(p.edges.size()));
        p.edges.push_back(Edge{v - 1, v, real(rng)});
      }
    }
  for (Node& node : p.nodes) {
    auto& list = node.tmpcs.emplace_back();
    for (int l = 0; l < 2; ++l) {
      Tmpc c{fmt::format("c{}", l), real(rng), real(rng), real(rng), real(rng), {}, {}};
      for (size_t j = 0; j < node.in_edges.size(); ++j)
        c.sync_in_bytes.push_back(shared_sync && l > 0 ? list.front().sync_in_bytes[j] : real(rng));
      for (size_t j = 0; j < node.out_edges.size(); ++j)
        c.sync_out_bytes.push_back(shared_sync && l > 0 ? list.front().sync_out_bytes[j] : real(rng));
      list.push_back(c);
    }
  }
  p.memory_per_device_bytes = 60;
  return p;
}

// Four parallel chains of four nodes: 625 downsets, up to 85 of one size, enough that the threshold tests
// share the downsets of one size among threads. The answer is the same, to the bit, on 1 and on 3 threads,
// building stages one node at a time or from scratch.
TEST(PiperPlanner, TheAnswerDoesNotDependOnTheThreads) {
  std::mt19937_64 rng(5);
  for (bool shared_sync : {true, false}) {
    const Problem p = parallel_chains(4, 4, shared_sync, rng);
    ASSERT_EQ(enumerate_downsets(p).sets.size(), 625u);
    const PiperAnswer one = plan_piper(p, 1), three = plan_piper(p, 3);
    ASSERT_TRUE(one.feasible);
    ASSERT_TRUE(three.feasible);
    EXPECT_EQ(one.time_per_sample_s, three.time_per_sample_s);
    ASSERT_EQ(one.stages.size(), three.stages.size());
    for (size_t i = 0; i < one.stages.size(); ++i) {
      EXPECT_EQ(one.stages[i].nodes, three.stages[i].nodes);
      EXPECT_EQ(one.stages[i].tmpc, three.stages[i].tmpc);
      EXPECT_EQ(one.stages[i].data_parallel, three.stages[i].data_parallel);
    }
  }
}

}  // namespace

namespace {

// A chain a → b → c whose second edge is 10^17 bytes and first 3: the stage {b, c} cuts only the small edge
// (2·3 bytes at 1 byte/s: 6 s), though growing it from {b} first adds the large edge and then takes it away.
// In plain doubles the small edge was lost beside the large one (the stage priced at 10 s instead of 16 s,
// and a two-stage plan chosen that takes 16 s); the optimum is one stage of 1 + 5 + 5 = 11 s.
TEST(PiperPlanner, ASmallEdgeBesideALargeOneIsNotLost) {
  Problem p;
  p.memory_per_device_bytes = 100;
  p.devices = 2;
  p.bandwidth_bytes_per_s = 1;
  p.micro_batches = 3;
  p.widths = {1};
  p.nodes = {Node{1, "a", {{Tmpc{"x", 1, 0, 0, 1, {}, {0}}}}, {}, {0}},
             Node{2, "b", {{Tmpc{"x", 5, 0, 0, 1, {0}, {0}}}}, {0}, {1}},
             Node{3, "c", {{Tmpc{"x", 5, 0, 0, 1, {0}, {}}}}, {1}, {}}};
  p.edges = {Edge{0, 1, 3}, Edge{1, 2, 1e17}};
  GrowingStage growing(p, 0);
  growing.push(2);
  growing.push(1);
  std::vector<StageChoice> choices;
  growing.choices(choices);
  ASSERT_EQ(choices.size(), 1u);
  EXPECT_EQ(choices[0].time_s(1), 16.0);
  EXPECT_EQ(brute_force(p), 11.0);
  EXPECT_EQ(plan_piper(p).time_per_sample_s, 11.0);
}

}  // namespace
