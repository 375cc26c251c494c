// The planner against a literal transcription of placement.md's dynamic program (downsets, "at most k
// devices" dimension, naive stage simulation) on medium instances that brute force cannot enumerate.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "placement/reference_planner.h"

namespace {

using namespace phaze::placement;

constexpr double kInf = std::numeric_limits<double>::infinity();

/// One stage [i, j) simulated node by node as placement.md states it.
struct StageFigures {
  double plain = 0, recompute = 0, params = 0;
  int64_t smax = 0;
  int64_t devices = 1;
};

StageFigures simulate_stage(const Chain& c, const Cluster& k, int i, int j) {
  const int n = static_cast<int>(c.nodes.size());
  std::vector<double> fin(n, 0.0), fin0(n, 0.0), bfin(n, 0.0), rfin(n, 0.0);
  auto inside = [&](int v) { return v >= i && v < j; };
  StageFigures f;
  double acts = 0, entering = 0;
  bool tp = false;
  for (int v = i; v < j; ++v) {
    double start = 0, start0 = 0;
    for (const ChainEdge& e : c.edges) {
      if (e.to != v) continue;
      if (inside(e.from)) {
        start = std::max(start, fin[e.from]);
        start0 = std::max(start0, fin0[e.from]);
      } else {
        start = std::max(start, e.bytes / k.pipeline_network.tiers[0].bandwidth);
        entering += e.bytes;
      }
    }
    fin[v] = start + c.nodes[v].forward_time;
    fin0[v] = start0 + c.nodes[v].forward_time;
    f.params += c.nodes[v].parameter_bytes;
    acts += c.nodes[v].activation_bytes;
    tp = tp || c.nodes[v].tensor_parallel;
  }
  const double F = fin[j - 1], F0 = fin0[j - 1];
  for (int v = j - 1; v >= i; --v) {
    double start = 0, rstart = F0;
    for (const ChainEdge& e : c.edges) {
      if (e.from != v) continue;
      if (inside(e.to)) {
        start = std::max(start, bfin[e.to]);
        rstart = std::max(rstart, rfin[e.to]);
      } else {
        start = std::max(start, e.bytes / k.pipeline_network.tiers[0].bandwidth);
        rstart = std::max(rstart, e.bytes / k.pipeline_network.tiers[0].bandwidth);
      }
    }
    bfin[v] = start + c.nodes[v].backward_time;
    rfin[v] = rstart + c.nodes[v].backward_time;
  }
  f.plain = F + bfin[i];
  f.recompute = F + rfin[i];
  const double fixed = (k.optimizer == Optimizer::Adam ? 3 : 2) * f.params + acts;
  const double stash = k.recompute ? entering : acts;
  if (fixed + static_cast<double>(k.devices - 1) * stash <= k.memory_bytes)
    f.smax = k.devices;
  else if (fixed > k.memory_bytes)
    f.smax = 0;
  else
    f.smax = 1 + static_cast<int64_t>(std::floor((k.memory_bytes - fixed) / stash));
  f.devices = tp ? c.width : 1;
  return f;
}

/// placement.md's dynamic program for one width, as written: dp[D][k][s].
double reference_time(const Chain& c, const Cluster& k) {
  const int n = static_cast<int>(c.nodes.size());
  const int64_t K = k.devices, smax_all = std::min<int64_t>(K, n);
  std::vector<std::vector<StageFigures>> stage(n, std::vector<StageFigures>(n + 1));
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j <= n; ++j) stage[i][j] = simulate_stage(c, k, i, j);
  auto load = [&](int i, int j, int64_t s) { return k.recompute && s > 1 ? stage[i][j].recompute : stage[i][j].plain; };
  // dp[i] for the suffix [i, n); index [kk][s].
  std::vector<std::vector<std::vector<double>>> dp(
      n + 1, std::vector<std::vector<double>>(K + 1, std::vector<double>(smax_all + 1, kInf)));
  for (int64_t kk = 0; kk <= K; ++kk) dp[n][kk][0] = 0;
  for (int i = n - 1; i >= 1; --i)
    for (int j = i + 1; j <= n; ++j) {
      const StageFigures& S = stage[i][j];
      for (int64_t s = 1; s <= std::min(S.smax, smax_all); ++s)
        for (int64_t kk = S.devices; kk <= K; ++kk)
          dp[i][kk][s] = std::min(dp[i][kk][s], std::max(dp[j][kk - S.devices][s - 1], load(i, j, s)));
    }
  double best = kInf;
  for (int64_t d = 1; d <= std::min(K, k.micro_batches); ++d) {
    const int64_t kd = K / d, Nd = (k.micro_batches + d - 1) / d;
    for (int j = 1; j <= n; ++j) {
      const StageFigures& S = stage[0][j];
      if (kd < S.devices) continue;
      for (int64_t s = 1; s <= std::min(S.smax, smax_all); ++s) {
        const double rest = dp[j][kd - S.devices][s - 1];
        if (rest == kInf) continue;
        const double time = std::max(rest, load(0, j, s)) * static_cast<double>(Nd + s - 1) +
                            4.0 * static_cast<double>(d - 1) * S.params /
                                (k.data_parallel_network.tiers[0].bandwidth * static_cast<double>(d));
        best = std::min(best, time);
      }
    }
  }
  return best;
}

Chain random_chain(std::mt19937& rng, int n, int64_t width, bool mixed) {
  std::uniform_real_distribution<double> time(0.1, 3.0), bytes(0.0, 40.0), size(0.0, 30.0);
  std::bernoulli_distribution coin(0.5), skip(0.15);
  Chain c;
  c.width = width;
  for (int v = 0; v < n; ++v)
    c.nodes.push_back(ChainNode{time(rng), time(rng), size(rng), size(rng), width > 1 && (!mixed || coin(rng))});
  for (int v = 0; v + 1 < n; ++v) c.edges.push_back(ChainEdge{v, v + 1, bytes(rng)});
  for (int v = 0; v + 2 < n; ++v)
    for (int w = v + 2; w < n; ++w)
      if (skip(rng)) c.edges.push_back(ChainEdge{v, w, bytes(rng)});
  return c;
}

TEST(PlacementReferenceDp, MediumInstancesAgreeWithTheLiteralDynamicProgram) {
  std::mt19937 rng(20261121);
  int compared = 0, infeasible = 0;
  ReferencePlanner planner;
  for (int trial = 0; trial < 60; ++trial) {
    const int n = 10 + trial % 15;
    const int64_t width = std::vector<int64_t>{1, 2, 3, 4, 8}[trial % 5];
    const bool mixed = trial % 3 == 0;
    const Chain chain = random_chain(rng, n, width, mixed);
    Cluster cluster;
    cluster.devices = 1 + static_cast<int64_t>(rng() % 70);
    cluster.micro_batches = 1 + static_cast<int64_t>(rng() % 90);
    cluster.pipeline_network.tiers[0].bandwidth = cluster.data_parallel_network.tiers[0].bandwidth =
        5.0 + static_cast<double>(rng() % 40);
    cluster.memory_bytes = 60.0 + static_cast<double>(rng() % 600);
    cluster.recompute = trial % 2 == 0;
    cluster.optimizer = trial % 4 == 1 ? Optimizer::Adam : Optimizer::Sgd;
    SCOPED_TRACE("trial " + std::to_string(trial));

    const double expected = reference_time(chain, cluster);
    const Plan plan = planner.solve(chain, cluster);
    ASSERT_EQ(plan.feasible, expected != kInf);
    if (!plan.feasible) {
      ++infeasible;
      continue;
    }
    EXPECT_NEAR(plan.time_per_batch, expected, 1e-9 * expected);
    ++compared;
  }
  // The sample must exercise both outcomes.
  EXPECT_GT(compared, 30);
  EXPECT_GT(infeasible, 0);
}

}  // namespace
