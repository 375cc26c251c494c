// The stagewise planner (per-stage width, degree and recomputed layers under phaze's time per batch)
// against an exhaustive search written here from the formulas of stagewise_plan.h: every stage partition ×
// chain × degree × recomputation set on small random chains, priced without the planner's tables, its
// recomputation frontier or its evaluator.

#include "placement/stagewise_planner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <vector>

#include "placement/corrected_planner.h"
#include "placement/stagewise_bound.h"
#include "placement/stagewise_plan.h"
#include "test_clusters.h"

namespace {

using phaze::placement::Chain;
using phaze::placement::ChainNode;
using phaze::placement::Cluster;
using phaze::placement::CorrectedPlanner;
using phaze::placement::Optimizer;
using phaze::placement::StagewisePlan;
using phaze::placement::StagewisePlanner;
using phaze::placement::StagewiseStage;

constexpr double kInf = std::numeric_limits<double>::infinity();

bool close(double a, double b) {
  return std::abs(a - b) <= 1e-9 * std::max({1.0, std::abs(a), std::abs(b)});
}

/// One stage's figures straight from the definitions: a pure chain's stage waits for its input bytes
/// before its forward pass and for its output gradient before its backward pass; a recomputed layer adds
/// its forward time to the backward side, which may overlap the wait for the gradient.
struct Figures {
  double load = 0, params = 0, memory_first = 0, stash = 0;
  int64_t devices = 1;
};

Figures figures(const Chain& c, const Cluster& cluster, int first, int last, const std::vector<bool>& recomputed) {
  const int n = static_cast<int>(c.nodes.size());
  // Stages of t devices are t apart: every send runs on the link t devices on (placement/links.h).
  const phaze::placement::testing::RefLink send =
      phaze::placement::testing::send_link(cluster.pipeline_network, c.width);
  double fsum = 0, bsum = 0, reforward = 0, acts = 0;
  Figures f;
  bool tp = false;
  for (int v = first; v < last; ++v) {
    const ChainNode& node = c.nodes[v];
    fsum += node.forward_time;
    bsum += node.backward_time;
    f.params += node.parameter_bytes;
    acts += node.activation_bytes;
    tp = tp || node.tensor_parallel;
    if (recomputed[v - first]) {
      reforward += node.forward_time;
      const bool starts_run = v == first || !recomputed[v - first - 1];
      if (starts_run) f.stash += v > 0 ? c.edges[v - 1].bytes : 0.0;
    } else {
      f.stash += node.activation_bytes;
    }
  }
  const double in_wait = first > 0 ? c.edges[first - 1].bytes / send.bandwidth + send.latency_s : 0.0;
  const double out_wait = last < n ? c.edges[last - 1].bytes / send.bandwidth + send.latency_s : 0.0;
  f.load = in_wait + fsum + std::max(out_wait + bsum, bsum + reforward);
  f.memory_first = (cluster.optimizer == Optimizer::Adam ? 3.0 : 2.0) * f.params + acts;
  f.devices = tp && c.width > 1 ? c.width : 1;
  return f;
}

/// The least time per batch over every plan.
double brute_force(const std::vector<Chain>& chains, const Cluster& cluster) {
  const int n = static_cast<int>(chains[0].nodes.size());
  const int64_t K = cluster.devices, N = cluster.micro_batches;
  double best = kInf;
  for (int64_t p = 1; p <= std::min<int64_t>(n, K); ++p) {
    // Stage ends: every choice of p − 1 cut points.
    for (int mask = 0; mask < (1 << (n - 1)); ++mask) {
      if (__builtin_popcount(static_cast<unsigned>(mask)) != p - 1) continue;
      std::vector<int> ends;
      for (int v = 1; v < n; ++v)
        if (mask & (1 << (v - 1))) ends.push_back(v);
      ends.push_back(n);
      std::function<void(size_t, int, int64_t, double, double)> go = [&](size_t k, int first, int64_t used, double a,
                                                                         double s) {
        if (k == ends.size()) {
          best = std::min(best, a + s);
          return;
        }
        const int last = ends[k];
        const int len = last - first;
        const int64_t in_flight = p - static_cast<int64_t>(k);
        for (const Chain& c : chains)
          for (int set = 0; set < (cluster.recompute ? (1 << len) : 1); ++set) {
            std::vector<bool> r(len);
            for (int b = 0; b < len; ++b) r[b] = (set >> b) & 1;
            const Figures f = figures(c, cluster, first, last, r);
            if (f.memory_first + static_cast<double>(in_flight - 1) * f.stash > cluster.memory_bytes) continue;
            for (int64_t d = 1; d <= N && used + f.devices * d <= K; ++d) {
              // The stage's d copies of its devices side by side: a ring of d at stride f.devices.
              const phaze::placement::testing::RefLink ring =
                  phaze::placement::testing::ring_link(cluster.data_parallel_network, d, f.devices);
              const double t = 2.0 * (d - 1.0) / d * f.params / ring.bandwidth + 2.0 * (d - 1.0) * ring.latency_s +
                               f.params * cluster.corrected.optimizer_seconds_per_byte;
              const double stage = static_cast<double>((N + d - 1) / d + p - 1) * f.load;
              go(k + 1, last, used + f.devices * d, std::max(a, stage), std::max(s, t));
            }
          }
      };
      go(0, 0, 0, 0.0, 0.0);
    }
  }
  return best;
}

/// Random chains: one per width of {1}, {2} or {1, 2}; at width 2 a tensor-parallel layer takes 45–70 % of
/// the time (one share per chain) and holds half the bytes.
std::vector<Chain> random_chains(std::mt19937_64& rng, int n) {
  std::uniform_real_distribution<double> time(0.5, 3.0), bytes(1.0, 10.0), edge(0.0, 4.0), half(0.45, 0.7);
  std::vector<ChainNode> base(n);
  std::vector<double> edges(n > 0 ? n - 1 : 0);
  for (ChainNode& node : base) {
    node.forward_time = time(rng);
    node.backward_time = time(rng) * 2;
    node.parameter_bytes = bytes(rng);
    node.activation_bytes = bytes(rng);
    node.tensor_parallel = rng() % 4 != 0;
  }
  for (double& e : edges) e = edge(rng);
  // Half the chains are a transformer's shape: one layer repeated between a first and a last one, with equal
  // edges between the repeats (the planner's tables share the rows of such stages).
  if (rng() % 2 == 0)
    for (int v = 2; v + 1 < n; ++v) {
      base[v] = base[1];
      edges[v - 1] = edges[1];
    }
  const int kind = static_cast<int>(rng() % 3);
  std::vector<Chain> out;
  for (int64_t width : {int64_t{1}, int64_t{2}}) {
    if ((kind == 0 && width == 2) || (kind == 1 && width == 1)) continue;
    Chain c;
    c.width = width;
    const double forward_share = half(rng), backward_share = half(rng);
    for (const ChainNode& b : base) {
      ChainNode node = b;
      if (width == 2 && node.tensor_parallel) {
        node.forward_time *= forward_share;
        node.backward_time *= backward_share;
        node.parameter_bytes /= 2;
        node.activation_bytes /= 2;
      }
      c.nodes.push_back(node);
    }
    for (int v = 0; v + 1 < n; ++v) c.edges.push_back({v, v + 1, edges[v] / static_cast<double>(width)});
    out.push_back(c);
  }
  return out;
}

Cluster random_cluster(std::mt19937_64& rng, const std::vector<Chain>& chains) {
  double total = 0;
  for (const ChainNode& node : chains[0].nodes) total += 3 * node.parameter_bytes + 2 * node.activation_bytes;
  std::uniform_real_distribution<double> memory(0.15 * total, 1.2 * total);
  Cluster c = phaze::placement::testing::cluster(
      1 + static_cast<int64_t>(rng() % 6), 1 + static_cast<int64_t>(rng() % 6), memory(rng),
      1.0 + static_cast<double>(rng() % 4), rng() % 2 == 0, rng() % 2 == 0 ? Optimizer::Sgd : Optimizer::Adam);
  std::uniform_real_distribution<double> alpha(0.0, 0.3), omega(0.0, 0.2), bw(0.5, 4.0);
  c = phaze::placement::testing::with_corrected(c, alpha(rng), bw(rng), omega(rng));
  if (rng() % 3 == 0) {
    // A third of the clusters on two tiers (pairs of devices on a fast link, the rest on a slow one), the
    // outer latency at least the inner's, as on real systems.
    const double inner_latency = alpha(rng) / 4;
    c.pipeline_network = phaze::placement::testing::two_tiers(2, 4 * bw(rng), inner_latency, bw(rng) / 2,
                                                              inner_latency + alpha(rng), 1.0);
    c.data_parallel_network = c.pipeline_network;
  }
  return c;
}

TEST(StagewisePlanner, MatchesBruteForceOnRandomChains) {
  std::mt19937_64 rng(20261125);
  StagewisePlanner planner;
  CorrectedPlanner uniform;
  int feasible = 0, better_than_uniform = 0;
  for (int trial = 0; trial < 500; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 5);
    const std::vector<Chain> chains = random_chains(rng, n);
    const Cluster cluster = random_cluster(rng, chains);
    const double expected = brute_force(chains, cluster);
    const StagewisePlan plan = planner.solve(chains, cluster);
    SCOPED_TRACE(testing::Message() << "trial " << trial << " n " << n << " K " << cluster.devices << " N "
                                    << cluster.micro_batches << " recompute " << cluster.recompute);
    ASSERT_EQ(plan.feasible, expected < kInf);
    EXPECT_EQ(planner.feasible(chains, cluster), plan.feasible);
    if (!plan.feasible) continue;
    ++feasible;
    EXPECT_TRUE(close(plan.time_per_batch, expected)) << plan.time_per_batch << " vs " << expected;
    // The work bound holds against the brute force's optimum, whatever the plan.
    const double bound = stagewise_work_bound_s(chains, cluster);
    EXPECT_LE(bound, expected);
    EXPECT_GT(bound, 0);
    EXPECT_LE(plan.devices(), cluster.devices);
    // A plan of another question on the same chains, given as a hint, changes nothing but the work.
    Cluster other = random_cluster(rng, chains);
    other.micro_batches = cluster.micro_batches;
    const StagewisePlan hinted = planner.solve(chains, cluster, {planner.solve(chains, other), plan});
    EXPECT_EQ(hinted.time_per_batch, plan.time_per_batch);
    const auto phaze = uniform.solve(chains, cluster);
    if (phaze.feasible) {
      EXPECT_LE(plan.time_per_batch, phaze.time_per_batch);
      better_than_uniform += plan.time_per_batch < phaze.time_per_batch ? 1 : 0;
    }
  }
  // The instances exercise both outcomes and plans PHAZE's planner cannot express.
  EXPECT_GT(feasible, 250);
  EXPECT_GT(better_than_uniform, 50);
}

}  // namespace
