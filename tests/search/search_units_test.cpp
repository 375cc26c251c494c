// Pieces of the search: the schedule cache (content key, ids ignored, answers equal to a direct solve), the
// point record round trip, the total order, the optimizer-step rate, the workload's memory check against the
// planner on real schedules, the run identity and point keys.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "hw/presets.h"
#include "model/hf_config.h"
#include "placement/corrected_planner.h"
#include "search/driver.h"
#include "search/evaluate.h"
#include "search/point.h"
#include "search/point_row.h"
#include "search/question.h"
#include "search/question_json.h"
#include "search/schedule_cache.h"

namespace {

using namespace phaze;
using schedule::Problem;
using schedule::Task;
using schedule::TaskKind;

/// A fork-join layer: two GEMMs on tensor cores after a vector op, joined by a vector op (layer-schedule.md
/// style). On 2 tensor cores the GEMMs run side by side on one core each (3 s) rather than one after the
/// other on both (2 + 2 s): makespan 1 + 3 + 1 = 5 s.
Problem fork_join() {
  Problem p;
  p.tensor_cores = 2;
  p.vector_cores = 1;
  p.tasks = {Task{"a", TaskKind::Vector, 1, 1, 1, 1}, Task{"b", TaskKind::Tensor, 3, 2, 2, 2},
             Task{"c", TaskKind::Tensor, 3, 2, 2, 2}, Task{"d", TaskKind::Vector, 1, 1, 1, 1}};
  p.edges = {{0, 1}, {0, 2}, {1, 3}, {2, 3}};
  return p;
}

TEST(ScheduleCache, SolvesOncePerContentAndIgnoresIds) {
  auto solver = schedule::make_exact_solver();
  search::ScheduleCache cache;
  const Problem p = fork_join();
  const search::PassSummary first = cache.solve(p, *solver);
  EXPECT_TRUE(first.feasible);
  EXPECT_DOUBLE_EQ(first.makespan_s, 5.0);
  EXPECT_TRUE(first.proven_optimal);
  EXPECT_DOUBLE_EQ(first.energy_j, 1 + 2 + 2 + 1);  // each task once, single-core energies
  Problem renamed = p;
  for (Task& t : renamed.tasks) t.id += "_other";
  EXPECT_EQ(cache.solve(renamed, *solver), first);
  EXPECT_EQ(cache.hits(), 1);
  EXPECT_EQ(cache.misses(), 1);
  EXPECT_EQ(search::problem_hash(p), search::problem_hash(renamed));
  EXPECT_TRUE(search::same_problem(p, renamed));
}

TEST(ScheduleCache, AnyDifferenceInContentIsAnotherProblem) {
  auto solver = schedule::make_exact_solver();
  const Problem p = fork_join();
  std::vector<Problem> variants(6, p);
  variants[0].tasks[1].single_s = std::nextafter(3.0, 4.0);
  variants[1].tensor_cores = 1;
  variants[2].tasks[2].kind = TaskKind::Fused;
  variants[3].edges.pop_back();
  variants[4].tasks[1].parallel_s = 1.5;
  variants[5].overlap_across_types = true;
  search::ScheduleCache cache;
  cache.solve(p, *solver);
  for (const Problem& v : variants) {
    EXPECT_FALSE(search::same_problem(p, v));
    EXPECT_EQ(cache.solve(v, *solver), search::solve_pass(v, *solver));
  }
  EXPECT_EQ(cache.hits(), 0);
  // On one tensor core the GEMMs run one after the other: 1 + 2 + 2 + 1 (parallel mode, alone) = 6 s.
  EXPECT_DOUBLE_EQ(cache.solve(variants[1], *solver).makespan_s, 6.0);
}

TEST(ScheduleCache, EnergiesShareTheScheduleAndKeepTheirOwnSum) {
  // No solver reads energies: problems that differ only there are one schedule, and each gets the energy of
  // that schedule under its own energies, as a direct solve of it reports (on one and on two tensor cores).
  auto solver = schedule::make_exact_solver();
  for (int64_t cores : {1, 2}) {
    Problem p = fork_join();
    p.tensor_cores = cores;
    Problem other = p;
    for (Task& t : other.tasks) {
      t.single_energy_j *= 3;
      t.parallel_energy_j *= 7;
    }
    EXPECT_TRUE(search::same_problem(p, other));
    EXPECT_EQ(search::problem_hash(p), search::problem_hash(other));
    search::ScheduleCache cache;
    const search::PassSummary first = cache.solve(p, *solver);
    const search::PassSummary second = cache.solve(other, *solver);
    EXPECT_EQ(cache.hits(), 1);
    EXPECT_EQ(second, search::solve_pass(other, *solver));
    EXPECT_EQ(second.makespan_s, first.makespan_s);
    EXPECT_NE(second.energy_j, first.energy_j);
  }
}

// Tensor cores beyond the pair and the two GEMMs that can run at once are never busy: 8 and 64 tensor cores
// (1 vector core) are one cache entry, solved on 3. Each keeps its own utilisation: the GEMMs run
// single-core side by side, 3 s each, so 6 core-seconds over n_TC · 5 s.
TEST(ScheduleCache, IdleCoresShareTheScheduleWithTheirOwnUtilisation) {
  auto solver = schedule::make_exact_solver();
  search::ScheduleCache cache;
  Problem eight = fork_join(), many = fork_join();
  eight.tensor_cores = 8;
  many.tensor_cores = 64;
  const search::PassSummary a = cache.solve(eight, *solver), b = cache.solve(many, *solver);
  EXPECT_EQ(cache.misses(), 1);
  EXPECT_EQ(cache.hits(), 1);
  EXPECT_DOUBLE_EQ(a.makespan_s, 5.0);
  EXPECT_DOUBLE_EQ(b.makespan_s, 5.0);
  EXPECT_DOUBLE_EQ(a.tensor_utilisation, 6.0 / (8 * 5.0));
  EXPECT_DOUBLE_EQ(b.tensor_utilisation, 6.0 / (64 * 5.0));
  EXPECT_EQ(b, search::solve_pass(many, *solver));
  // Two tensor cores are all usable: another entry.
  cache.solve(fork_join(), *solver);
  EXPECT_EQ(cache.misses(), 2);
}

TEST(ScheduleCache, ForgettingWhenFullChangesNoAnswer) {
  auto solver = schedule::make_exact_solver();
  search::ScheduleCache cache(2);
  for (int round = 0; round < 3; ++round)
    for (int k = 0; k < 5; ++k) {
      Problem p = fork_join();
      p.tasks[0].single_s = 1 + k;
      p.tasks[0].parallel_s = 1 + k;
      EXPECT_DOUBLE_EQ(cache.solve(p, *solver).makespan_s, 5.0 + k);
    }
}

TEST(ScheduleCache, RootBoundsAreTheSolversAndKeptLikeSchedules) {
  search::ScheduleCache cache(2);
  Problem eight = fork_join(), many = fork_join();
  eight.tensor_cores = 8;
  many.tensor_cores = 64;
  const double bound = schedule::exact_lower_bound(eight);
  EXPECT_GT(bound, 0);
  EXPECT_LE(bound, 5.0);  // the optimum (IdleCoresShareTheScheduleWithTheirOwnUtilisation)
  EXPECT_EQ(cache.root_bound(eight), bound);
  EXPECT_EQ(cache.root_bound(many), bound);  // idle cores change no bound
  EXPECT_EQ(cache.root_bound(many), schedule::exact_lower_bound(many));
  // More problems than the capacity: forgotten bounds are computed again, the same.
  for (int round = 0; round < 3; ++round)
    for (int k = 0; k < 5; ++k) {
      Problem p = fork_join();
      p.tasks[0].single_s = p.tasks[0].parallel_s = 1 + k;
      EXPECT_EQ(cache.root_bound(p), schedule::exact_lower_bound(p));
    }
  EXPECT_EQ(cache.misses() + cache.hits(), 0);  // bounds are apart from the schedules
}

TEST(ScheduleCache, InfiniteLatencyIsInfeasible) {
  auto solver = schedule::make_exact_solver();
  Problem p = fork_join();
  p.tasks[1].single_s = std::numeric_limits<double>::infinity();
  EXPECT_FALSE(search::solve_pass(p, *solver).feasible);
}

TEST(SearchEvaluate, OptimizerStepBytesPerParameterByte) {
  EXPECT_DOUBLE_EQ(search::optimizer_seconds_per_byte(placement::Optimizer::Sgd, 1.2e12), 2.5e-12);
  EXPECT_DOUBLE_EQ(search::optimizer_seconds_per_byte(placement::Optimizer::Adam, 1e12), 5e-12);
  // Mixed-precision Adam's fused step: 26 + 3 · 4 bytes per 2-byte BF16 parameter (Megatron-LM's, with FP32
  // gradients read for the step, the norm and the overflow check).
  EXPECT_DOUBLE_EQ(search::optimizer_seconds_per_byte(placement::Optimizer::MixedPrecisionAdam, 1e12), 19e-12);
}

TEST(SearchEvaluate, ClusterOfAPoint) {
  search::SearchQuestion q;
  q.devices = 64;
  q.global_batch = 512;
  q.network = hw::one_tier_network(2 * search::kGiB);
  hw::Architecture a;
  a.hbm_bandwidth = 1.5e12;
  const placement::Cluster c = search::make_cluster(q, a, 4, 80ll << 30, true);
  EXPECT_EQ(c.devices, 64);
  EXPECT_EQ(c.micro_batches, 128);
  EXPECT_DOUBLE_EQ(c.memory_bytes, 80.0 * 1073741824.0);
  EXPECT_EQ(c.pipeline_network, q.network);
  EXPECT_EQ(c.data_parallel_network, q.network);
  EXPECT_TRUE(c.recompute);
  EXPECT_TRUE(c.corrected.enabled);
  EXPECT_DOUBLE_EQ(c.corrected.optimizer_seconds_per_byte, 2e-12);
}

search::PointOutcome sample_point() {
  search::PointOutcome p;
  p.design.num_tc = 8;
  p.design.tc_width = 128;
  p.design.tc_depth = 64;
  p.design.num_vc = 2;
  p.design.vc_width = 128;
  p.design.glb_bytes = 64ll << 20;
  p.design.hbm_bytes = 32ll << 30;
  p.key = search::point_key(p.design, 2, true);
  p.area_um2 = 0.1 + 0.2;  // not exactly representable: the round trip must keep every bit
  p.micro_batch = 2;
  p.recompute = true;
  p.feasible = false;
  search::ModelOutcome m;
  m.feasible = true;
  m.width = 4;
  m.data_parallel = 3;
  m.stages = {{0, 5, 4}, {5, 9, 4}};
  m.time_per_batch_s = 1.0 / 3.0;
  m.parts = {0.1, 0.2, 1e-300, 3.3e-7};
  m.samples_per_s = 4096 * 3.0;
  m.tokens_per_s = m.samples_per_s * 2048;
  m.energy_per_batch_j = 12345.678901234567;
  m.tensor_utilisation = 0.7;
  m.vector_utilisation = 0.1;
  m.flops_utilisation = 0.33;
  m.schedules_proven = false;
  m.layers = {{}, {1e-3, 2e-3, 0.5, 0.25}, {}};
  search::ModelOutcome none;
  none.reason = "no plan fits";
  p.models = {m, none};
  return p;
}

TEST(SearchPoint, RecordRoundTripIsExact) {
  const search::PointOutcome p = sample_point();
  const nlohmann::json text = nlohmann::json::parse(search::to_record(p).dump());
  EXPECT_EQ(search::from_record(p.key, text), p);
}

TEST(SearchPoint, TotalOrder) {
  using search::Ranking;
  const auto better = [](const search::PointOutcome& x, const search::PointOutcome& y) {
    return search::better(x, y, Ranking::Canonical);
  };
  search::PointOutcome a = sample_point(), b = sample_point();
  a.feasible = b.feasible = true;
  a.score = b.score = 10;
  EXPECT_FALSE(better(a, b));
  EXPECT_FALSE(better(b, a));
  b.score = 11;
  EXPECT_TRUE(better(b, a));
  b.score = 10;
  b.design.num_tc = 4;  // later in canonical order (num_tc from the largest down)
  EXPECT_TRUE(better(a, b));
  b = a;
  b.design.hbm_bytes = 80ll << 30;  // smaller HBM first
  EXPECT_TRUE(better(a, b));
  b = a;
  b.recompute = false;  // recomputation off first
  EXPECT_TRUE(better(b, a));
  b = a;
  b.feasible = false;
  b.score = 1e9;
  EXPECT_TRUE(better(a, b));
}

TEST(SearchPoint, SmallerAreaRankingTakesTheSmallerChipAmongTies) {
  using search::Ranking;
  search::PointOutcome a = sample_point(), b = sample_point();
  a.feasible = b.feasible = true;
  a.score = b.score = 10;
  b.design.num_tc = a.design.num_tc / 2;  // later in canonical order, and smaller
  b.area_um2 = a.area_um2 / 2;
  EXPECT_TRUE(search::better(a, b, Ranking::Canonical));
  EXPECT_TRUE(search::better(b, a, Ranking::SmallerArea));
  b.score = 9.5;  // the score comes first
  EXPECT_TRUE(search::better(a, b, Ranking::SmallerArea));
  // One top-list entry per chip: the same chip at another HBM size is the same entry.
  b = a;
  b.design.hbm_bytes = 80ll << 30;
  EXPECT_TRUE(search::same_entry(a, b, Ranking::SmallerArea));
  EXPECT_FALSE(search::same_entry(a, b, Ranking::Canonical));
}

TEST(SearchPoint, RowKeepsWhatTheCsvAndTheOrderRead) {
  const search::PointOutcome p = sample_point();
  const search::PointRow row = search::row_of(p);
  ASSERT_EQ(row.models.size(), p.models.size());
  EXPECT_EQ(row.models[0].stages, static_cast<int64_t>(p.models[0].stages.size()));
  EXPECT_EQ(row.models[0].energy_per_batch_j, p.models[0].energy_per_batch_j);
  const search::PointOutcome outline = search::outline_of(row);
  EXPECT_EQ(outline.key, p.key);
  EXPECT_EQ(outline.score, p.score);
  EXPECT_EQ(outline.models[0].samples_per_s, p.models[0].samples_per_s);
  search::PointOutcome later = p;
  later.micro_batch = p.micro_batch * 2;
  later.key = search::point_key(later);
  EXPECT_TRUE(search::before(row, search::row_of(later)));
  EXPECT_FALSE(search::before(search::row_of(later), row));
}

TEST(SearchAnswer, TopListHoldsEachDesignOnceInAnyOrderOfPoints) {
  // Design A (8 tensor cores) has points scoring 5 and 7, B (4 cores) 6, C (2 cores) 4; the top two
  // designs are A at 7, then B, whatever order the points arrive in.
  auto point = [](int64_t tc, int64_t mbs, double score) {
    search::PointOutcome p = sample_point();
    p.design.num_tc = tc;
    p.micro_batch = mbs;
    p.feasible = true;
    p.score = score;
    p.models.resize(1);
    return p;
  };
  std::vector<search::PointOutcome> points = {point(8, 1, 5), point(8, 2, 7), point(4, 1, 6), point(2, 1, 4)};
  std::vector<int> order = {0, 1, 2, 3};
  do {
    search::SearchAnswer answer;
    answer.best_per_model.resize(1);
    for (int i : order) search::accumulate(answer, points[i], 2);
    ASSERT_EQ(answer.top.size(), 2u);
    EXPECT_EQ(answer.top[0].design.num_tc, 8);
    EXPECT_EQ(answer.top[0].score, 7);
    EXPECT_EQ(answer.top[1].design.num_tc, 4);
    EXPECT_EQ(answer.feasible_points, 4);
  } while (std::next_permutation(order.begin(), order.end()));
}

TEST(SearchQuestion, DefaultWidthsDivideHeadsUpToEight) {
  model::ModelSpec spec;
  spec.heads = 12;
  spec.kv_heads = 12;
  spec.ffn = 3072;
  EXPECT_EQ(search::default_widths(spec), (std::vector<int64_t>{1, 2, 4}));
  spec.heads = spec.kv_heads = 96;
  EXPECT_EQ(search::default_widths(spec), (std::vector<int64_t>{1, 2, 4, 8}));
  spec.kv_heads = 2;  // grouped-query attention: t must divide the key/value heads too
  EXPECT_EQ(search::default_widths(spec), (std::vector<int64_t>{1, 2}));
}

TEST(SearchQuestion, IdentityNamesEveryAnswerDeterminingOption) {
  search::SearchQuestion q;
  const std::string base = search::run_identity(q);
  auto differs = [&](auto change) {
    search::SearchQuestion other;
    change(other);
    return search::run_identity(other) != base;
  };
  EXPECT_TRUE(differs([](auto& o) { o.devices = 512; }));
  EXPECT_TRUE(differs([](auto& o) { o.global_batch = 2048; }));
  EXPECT_TRUE(differs([](auto& o) { o.micro_batches = {1, 2}; }));
  EXPECT_TRUE(differs([](auto& o) { o.hbm_bytes = {32ll << 30}; }));
  EXPECT_TRUE(differs([](auto& o) { o.recompute = search::RecomputeChoice::On; }));
  EXPECT_TRUE(differs([](auto& o) { o.network = hw::one_tier_network(1e9); }));
  EXPECT_TRUE(differs([](auto& o) { o.network.tiers[0].latency_s = 1e-6; }));
  EXPECT_TRUE(differs([](auto& o) { o.network.tiers[0].efficiency = 0.9; }));
  EXPECT_TRUE(differs([](auto& o) { o.optimizer = placement::Optimizer::Adam; }));
  EXPECT_TRUE(differs([](auto& o) { o.space.budget_um2 = 1e8; }));
  EXPECT_TRUE(differs([](auto& o) { o.space.lower_fraction = 0; }));
  EXPECT_TRUE(differs([](auto& o) { o.filter.num_tc = {8}; }));
  EXPECT_TRUE(differs([](auto& o) { o.filter.glb_bytes = {2 << 20}; }));
  EXPECT_TRUE(differs([](auto& o) { o.schedule_node_budget = 1000; }));
  EXPECT_TRUE(differs([](auto& o) { o.stop_rule = search::StopRule::Buckets; }));
  // The window and the bucket width choose the points of an answer only under the bucket rule.
  EXPECT_FALSE(differs([](auto& o) { o.stop_window = 4; }));
  EXPECT_FALSE(differs([](auto& o) { o.bucket_um2 = 20'000; }));
  search::SearchQuestion buckets;
  buckets.stop_rule = search::StopRule::Buckets;
  search::SearchQuestion window = buckets, width = buckets;
  window.stop_window = 4;
  width.bucket_um2 = 20'000;
  EXPECT_NE(search::run_identity(window), search::run_identity(buckets));
  EXPECT_NE(search::run_identity(width), search::run_identity(buckets));
}

TEST(SearchEvaluate, MemoryFitDoesNotDependOnTheDesign) {
  // The workload's memory check (one-second layers) against the planner on each design's real schedules:
  // a plan exists at some width exactly when the check says it fits, on a one- and a four-core design.
  search::SearchQuestion q;
  search::ModelCase m;
  m.source = std::string(PHAZE_TEST_DATA) + "/hf/tiny-gpt2/config.json";
  m.spec = model::load_model(m.source);
  m.seq = 64;
  m.widths = {1, 2, 4};
  q.models = {m};
  q.devices = 8;
  q.global_batch = 16;
  q.micro_batches = {1, 2, 4};
  q.hbm_bytes = {429497, 858993, 2147484};  // about 0.0004, 0.0008 and 0.002 GiB
  const search::Workload w = search::prepare_workload(q);
  hw::Architecture small = hw::tpuv4_like(), large = hw::tpuv4_like();
  small.num_tc = small.num_vc = 1;
  small.tc_width = small.tc_depth = small.vc_width = 8;
  small.glb_bytes = 2 << 20;
  large.num_tc = large.num_vc = 4;
  large.tc_width = large.tc_depth = large.vc_width = 16;
  large.glb_bytes = 2 << 20;
  search::ScheduleCache cache;
  search::Scheduling scheduling{cost::Estimator{}, schedule::make_exact_solver(), &cache};
  placement::CorrectedPlanner planner;
  int fits = 0, misses = 0;
  for (const hw::Architecture& design : {small, large})
    for (size_t bi = 0; bi < q.micro_batches.size(); ++bi) {
      std::vector<placement::Chain> chains;
      for (const model::LayerGraph& graph : w.graphs[0][bi])
        chains.push_back(search::make_chain(graph, search::schedule_layers(graph, design, scheduling)));
      for (int64_t hbm : q.hbm_bytes)
        for (bool rc : {false, true}) {
          const placement::Cluster c = search::make_cluster(q, design, q.micro_batches[bi], hbm, rc);
          const bool planned = planner.solve(chains, c).feasible;
          EXPECT_EQ(w.fits_in_memory(0, bi, hbm, rc), planned) << "mbs " << q.micro_batches[bi] << " hbm " << hbm;
          (planned ? fits : misses) += 1;
        }
    }
  EXPECT_GT(fits, 0);
  EXPECT_GT(misses, 0);
}

}  // namespace
