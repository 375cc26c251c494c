// Property tests of the placement planner (placement.md): on several hundred small random chains the
// planner must agree with an exhaustive search written here, independently of the engine, straight from
// placement.md ("Stage load", "Dynamic program", "Hand-set strategy"). The reference below simulates the
// forward, backward and recomputing backward passes node by node; it uses neither StageCosts nor
// check_plan. With the corrected terms on (method.md D22 and D3) the exhaustive search charges the ring
// all-reduce of accelerator.md 7 and the optimizer step on the largest stage, written out here again.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "placement/chain.h"
#include "placement/corrected_planner.h"
#include "placement/plan_check.h"
#include "placement/planner.h"
#include "placement/reference_planner.h"
#include "placement/stage_costs.h"
#include "placement/test_clusters.h"
#include "placement/time_floor.h"

namespace {

using phaze::placement::Chain;
using phaze::placement::ChainEdge;
using phaze::placement::ChainNode;
using phaze::placement::Cluster;
using phaze::placement::CorrectedTerms;
using phaze::placement::HandSetPlan;
using phaze::placement::Optimizer;
using phaze::placement::Plan;
using phaze::placement::PlanCheck;
using phaze::placement::Planner;
using phaze::placement::ReferencePlanner;
using phaze::placement::Stage;
using phaze::placement::testing::RefLink;
using phaze::placement::testing::ring_link;
using phaze::placement::testing::send_link;

constexpr double kInf = std::numeric_limits<double>::infinity();

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

bool close(double a, double b) {
  return std::abs(a - b) <= 1e-9 * std::max({1.0, std::abs(a), std::abs(b)});
}

// ---------------------------------------------------------------------------------------------------------
// Reference: one stage [first, last) of a chain, simulated from placement.md "Stage load".
// ---------------------------------------------------------------------------------------------------------

struct RefStage {
  int64_t devices = 1;
  double load_plain = 0;
  double load_recompute = 0;
  double params = 0;
  double fixed_memory = 0;  // 2·params (+ params with Adam) + acts
  double stash = 0;         // entering bytes with recomputation, else acts
};

RefStage reference_stage(const Chain& chain, const Cluster& cluster, int first, int last) {
  const int n = static_cast<int>(chain.nodes.size());
  auto inside = [&](int v) { return v >= first && v < last; };
  RefStage r;

  bool any_tp = false;
  double acts = 0;
  for (int v = first; v < last; ++v) {
    any_tp = any_tp || chain.nodes[v].tensor_parallel;
    r.params += chain.nodes[v].parameter_bytes;
    acts += chain.nodes[v].activation_bytes;
  }
  r.devices = any_tp ? chain.width : 1;
  // Consecutive stages of t devices are t apart (one replica on consecutive devices): every send of the
  // chain runs on the link t devices on.
  const RefLink send = send_link(cluster.pipeline_network, chain.width);

  // Forward pass: start(v) = max over incoming edges of finish(u) (u inside) or cost/bandwidth (outside).
  std::vector<double> fwd(n, 0.0), fwd0(n, 0.0);
  for (int v = first; v < last; ++v) {
    double start = 0, start0 = 0;
    for (const ChainEdge& e : chain.edges) {
      if (e.to != v) continue;
      if (inside(e.from)) {
        start = std::max(start, fwd[e.from]);
        start0 = std::max(start0, fwd0[e.from]);
      } else {
        start = std::max(start, e.bytes / send.bandwidth + send.latency_s);  // F0 ignores outside inputs
      }
    }
    fwd[v] = start + chain.nodes[v].forward_time;
    fwd0[v] = start0 + chain.nodes[v].forward_time;
  }
  const double F = fwd[last - 1];
  const double F0 = fwd0[last - 1];

  // Backward pass (plain) and recomputing backward pass (every start at least F0).
  std::vector<double> bwd(n, 0.0), rec(n, 0.0);
  for (int v = last - 1; v >= first; --v) {
    double start = 0, start_r = F0;
    for (const ChainEdge& e : chain.edges) {
      if (e.from != v) continue;
      if (inside(e.to)) {
        start = std::max(start, bwd[e.to]);
        start_r = std::max(start_r, rec[e.to]);
      } else {
        start = std::max(start, e.bytes / send.bandwidth + send.latency_s);
        start_r = std::max(start_r, e.bytes / send.bandwidth + send.latency_s);
      }
    }
    bwd[v] = start + chain.nodes[v].backward_time;
    rec[v] = start_r + chain.nodes[v].backward_time;
  }
  const double B = bwd[first];
  const double R = rec[first];
  r.load_plain = F + B;
  r.load_recompute = F + R;

  double entering = 0;
  for (const ChainEdge& e : chain.edges)
    if (!inside(e.from) && inside(e.to)) entering += e.bytes;
  r.fixed_memory = (cluster.optimizer == Optimizer::Adam ? 3.0 : 2.0) * r.params + acts;
  r.stash = cluster.recompute ? entering : acts;
  return r;
}

/// The stage fits with `s` micro-batches in flight (s − 1 stages after it).
bool fits(const RefStage& st, int64_t s, const Cluster& cluster) {
  return st.fixed_memory + static_cast<double>(s - 1) * st.stash <= cluster.memory_bytes;
}

double stage_load(const RefStage& st, int64_t s, const Cluster& cluster) {
  return cluster.recompute && s > 1 ? st.load_recompute : st.load_plain;
}

/// Time per batch from the largest stage load, the stage count p, d and the stages' parameter bytes:
/// placement.md's formula (its one bandwidth: a ring over all K devices), or with the corrected terms every
/// stage's ring all-reduce over d ranks, 2·(d − 1)/d · P / BW + 2·(d − 1)·α, all at once (the largest
/// counts), then the optimizer pass over the largest stage's parameters. Each replica sits on R consecutive
/// devices (R: its stages' devices), so a stage's d copies are R apart: the ring's link is that of d
/// devices at stride R.
double reference_time(double max_load, int64_t p, int64_t d, const std::vector<RefStage>& stages,
                      const Cluster& cluster) {
  const double pipeline = max_load * static_cast<double>(ceil_div(cluster.micro_batches, d) + p - 1);
  const double dd = static_cast<double>(d);
  if (!cluster.corrected.enabled)
    return pipeline + 4.0 * (dd - 1) * stages.front().params /
                          (ring_link(cluster.data_parallel_network, cluster.devices, 1).bandwidth * dd);
  const CorrectedTerms& c = cluster.corrected;
  int64_t replica_devices = 0;
  for (const RefStage& st : stages) replica_devices += st.devices;
  const RefLink ring = ring_link(cluster.data_parallel_network, d, replica_devices);
  double slowest = 0;
  for (const RefStage& st : stages) {
    const double sync = 2.0 * (dd - 1) / dd * st.params / ring.bandwidth + 2.0 * (dd - 1) * ring.latency_s;
    const double update = st.params * c.optimizer_seconds_per_byte;
    slowest = std::max(slowest, sync + update);
  }
  return pipeline + slowest;
}

/// Time of a partition (given by cut points) under `d` replicas where every stage's devices are given;
/// +inf when a stage does not fit in memory or the devices do not fit.
struct RefEval {
  bool feasible = false;
  double time = kInf;
  double max_load = kInf;
  std::string reason;
};

RefEval reference_evaluate(const std::vector<RefStage>& stages, const std::vector<int64_t>& devices, int64_t d,
                           const Cluster& cluster) {
  RefEval out;
  const int64_t p = static_cast<int64_t>(stages.size());
  if (p == 0) {
    out.reason = "no stages";
    return out;
  }
  if (d < 1 || d > cluster.micro_batches || d > cluster.devices) {
    out.reason = "bad d";
    return out;
  }
  int64_t total = 0;
  double max_load = 0;
  for (int64_t q = 0; q < p; ++q) {
    const int64_t s = p - q;
    if (!fits(stages[q], s, cluster)) {
      out.reason = "memory";
      return out;
    }
    total += devices[q];
    max_load = std::max(max_load, stage_load(stages[q], s, cluster));
  }
  if (total > cluster.devices / d) {  // Σ devices ≤ ⌊K/d⌋  ⇔  Σ devices · d ≤ K
    out.reason = "devices";
    return out;
  }
  out.feasible = true;
  out.max_load = max_load;
  out.time = reference_time(max_load, p, d, stages, cluster);
  return out;
}

struct RefBest {
  bool feasible = false;
  double time = kInf;
  // Whether the optimum needs more than the smallest largest load of its (width, p, d): a plan with a
  // larger load but smaller stage parameters wins, so a search that only minimised the load would miss it.
  bool load_not_minimal = false;
};

/// Exhaustive search: every composition of the chain, every d = 1..min(K, N), every width.
RefBest reference_best(const std::vector<Chain>& chains, const Cluster& cluster) {
  RefBest best;
  const int64_t replicas = std::min(cluster.devices, cluster.micro_batches);
  struct Key {
    int64_t width, p, d;
  };
  Key best_key{0, 0, 0};
  double best_load = kInf;
  std::vector<double> least_load;  // per (width index, p, d): the smallest largest load of a feasible plan
  int64_t width_index = 0;
  size_t longest = 0;
  for (const Chain& chain : chains) longest = std::max(longest, chain.nodes.size());
  const int64_t pdim = static_cast<int64_t>(longest) + 1;
  auto at = [&](int64_t w, int64_t p, int64_t d) { return static_cast<size_t>((w * pdim + p) * (replicas + 1) + d); };
  least_load.assign(chains.size() * static_cast<size_t>(pdim * (replicas + 1)), kInf);
  for (const Chain& chain : chains) {
    const int n = static_cast<int>(chain.nodes.size());
    std::vector<std::vector<RefStage>> table(n, std::vector<RefStage>(n + 1));
    for (int i = 0; i < n; ++i)
      for (int j = i + 1; j <= n; ++j) table[i][j] = reference_stage(chain, cluster, i, j);
    for (uint32_t mask = 0; mask < (1u << (n - 1)); ++mask) {  // bit k: cut after position k
      std::vector<RefStage> stages;
      std::vector<int64_t> devices;
      int first = 0;
      for (int k = 0; k < n; ++k) {
        if (k == n - 1 || (mask >> k) & 1u) {
          stages.push_back(table[first][k + 1]);
          devices.push_back(table[first][k + 1].devices);
          first = k + 1;
        }
      }
      for (int64_t d = 1; d <= replicas; ++d) {
        const RefEval e = reference_evaluate(stages, devices, d, cluster);
        if (!e.feasible) continue;
        const int64_t p = static_cast<int64_t>(stages.size());
        least_load[at(width_index, p, d)] = std::min(least_load[at(width_index, p, d)], e.max_load);
        if (e.time < best.time) {
          best.feasible = true;
          best.time = e.time;
          best_key = Key{width_index, p, d};
          best_load = e.max_load;
        }
      }
    }
    ++width_index;
  }
  if (best.feasible) best.load_not_minimal = best_load > least_load[at(best_key.width, best_key.p, best_key.d)];
  return best;
}

/// Checks a plan returned by the engine with the reference: structure, devices, memory, time.
void check_plan_with_reference(const std::vector<Chain>& chains, const Cluster& cluster, const Plan& plan,
                               const std::string& where) {
  const Chain* chain = nullptr;
  for (const Chain& c : chains)
    if (c.width == plan.width) chain = &c;
  ASSERT_NE(chain, nullptr) << where << ": plan width " << plan.width << " is not an input width";
  const int n = static_cast<int>(chain->nodes.size());
  ASSERT_FALSE(plan.stages.empty()) << where;
  int expected_first = 0;
  std::vector<RefStage> stages;
  std::vector<int64_t> devices;
  for (size_t q = 0; q < plan.stages.size(); ++q) {
    const Stage& st = plan.stages[q];
    ASSERT_EQ(st.first, expected_first) << where << ": stage " << q << " not contiguous";
    ASSERT_LT(st.first, st.last) << where << ": stage " << q << " empty";
    ASSERT_LE(st.last, n) << where;
    const RefStage ref = reference_stage(*chain, cluster, st.first, st.last);
    EXPECT_EQ(st.devices, ref.devices) << where << ": stage " << q << " devices";
    EXPECT_TRUE(fits(ref, static_cast<int64_t>(plan.stages.size() - q), cluster))
        << where << ": stage " << q << " exceeds memory";
    stages.push_back(ref);
    devices.push_back(ref.devices);
    expected_first = st.last;
  }
  ASSERT_EQ(expected_first, n) << where << ": stages do not cover the chain";
  EXPECT_GE(plan.data_parallel, 1) << where;
  EXPECT_LE(plan.data_parallel, cluster.micro_batches) << where;
  int64_t total = 0;
  for (int64_t a : devices) total += a;
  EXPECT_LE(total * plan.data_parallel, cluster.devices) << where;
  const RefEval e = reference_evaluate(stages, devices, plan.data_parallel, cluster);
  ASSERT_TRUE(e.feasible) << where << ": reference rejects the plan (" << e.reason << ")";
  EXPECT_TRUE(close(e.time, plan.time_per_batch))
      << where << ": reference time of the returned plan " << e.time << " vs engine " << plan.time_per_batch;

  // The parts: the pipeline terms from the largest load, the rest is what the formula adds once per batch.
  const int64_t p = static_cast<int64_t>(stages.size());
  const double steady = e.max_load * static_cast<double>(ceil_div(cluster.micro_batches, plan.data_parallel));
  EXPECT_TRUE(close(plan.parts.steady_state, steady)) << where << plan.parts.steady_state << " vs " << steady;
  EXPECT_TRUE(close(plan.parts.fill_drain, e.max_load * static_cast<double>(p - 1))) << where;
  const double once =
      e.time - e.max_load * static_cast<double>(ceil_div(cluster.micro_batches, plan.data_parallel) + p - 1);
  EXPECT_TRUE(close(plan.parts.data_parallel_sync + plan.parts.optimizer_step, once)) << where;
  if (plan.data_parallel == 1) {
    EXPECT_EQ(plan.parts.data_parallel_sync, 0.0) << where;
  }
  if (!cluster.corrected.enabled || cluster.corrected.optimizer_seconds_per_byte == 0) {
    EXPECT_EQ(plan.parts.optimizer_step, 0.0) << where;
  }
  EXPECT_TRUE(close(plan.parts.total(), plan.time_per_batch)) << where;
}

/// placement.md "Hand-set strategy", written independently of evaluate_hand_set.
RefEval reference_hand_set(const std::vector<Chain>& chains, const Cluster& cluster, const HandSetPlan& h,
                           int64_t layers) {
  RefEval out;
  const Chain* chain = nullptr;
  for (const Chain& c : chains)
    if (c.width == h.width) chain = &c;
  if (chain == nullptr) {
    out.reason = "width";
    return out;
  }
  if (h.pipeline * h.width * h.data_parallel > cluster.devices) {
    out.reason = "devices";
    return out;
  }
  if (h.data_parallel > cluster.micro_batches) {
    out.reason = "d > N";
    return out;
  }
  const int n = static_cast<int>(chain->nodes.size());
  std::vector<std::vector<int>> members(static_cast<size_t>(h.pipeline));
  for (int i = 0; i < n; ++i) {
    int64_t q;
    if (i < layers)
      q = i / ceil_div(layers, h.pipeline);
    else
      q = h.pipeline - 1;
    members[static_cast<size_t>(q)].push_back(i);
  }
  std::vector<RefStage> stages;
  double max_load = 0;
  for (int64_t q = 0; q < h.pipeline; ++q) {
    const auto& m = members[static_cast<size_t>(q)];
    if (m.empty()) {
      out.reason = "empty stage";
      return out;
    }
    const RefStage st = reference_stage(*chain, cluster, m.front(), m.back() + 1);
    const int64_t s = h.pipeline - q;
    if (!fits(st, s, cluster)) {
      out.reason = "memory";
      return out;
    }
    max_load = std::max(max_load, stage_load(st, s, cluster));
    stages.push_back(st);
  }
  out.feasible = true;
  out.time = reference_time(max_load, h.pipeline, h.data_parallel, stages, cluster);
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Random instances
// ---------------------------------------------------------------------------------------------------------

struct Instance {
  std::vector<Chain> chains;
  Cluster cluster;
  std::string describe() const;
};

std::string Instance::describe() const {
  std::ostringstream s;
  s.precision(17);
  s << "K=" << cluster.devices << " N=" << cluster.micro_batches << " M=" << cluster.memory_bytes
    << " bw=" << cluster.pipeline_network.tiers[0].bandwidth << " recompute=" << cluster.recompute
    << " opt=" << (cluster.optimizer == Optimizer::Adam ? "Adam" : "SGD");
  if (cluster.corrected.enabled)
    s << " corrected: alpha=" << cluster.data_parallel_network.tiers[0].latency_s
      << " sync_bw=" << cluster.data_parallel_network.tiers[0].bandwidth
      << " update/byte=" << cluster.corrected.optimizer_seconds_per_byte;
  s << "\n";
  for (const Chain& c : chains) {
    s << " width " << c.width << ": nodes";
    for (const ChainNode& v : c.nodes)
      s << " {fw " << v.forward_time << ", bw " << v.backward_time << ", P " << v.parameter_bytes << ", A "
        << v.activation_bytes << (v.tensor_parallel ? ", tp" : "") << "}";
    s << " edges";
    for (const ChainEdge& e : c.edges) s << " " << e.from << "->" << e.to << ":" << e.bytes;
    s << "\n";
  }
  return s.str();
}

struct Options {
  int max_nodes = 9;
  bool force_recompute = false;
  bool recompute_value = false;
  bool multi_width = true;
  bool mixed_tp = false;   // widths > 1 only, some layers split and some not
  bool corrected = false;  // corrected terms on, with random ring latency, link and optimizer cost
  bool two_tiers = false;  // with `corrected`: one random network of two tiers for sends and rings
};

Instance random_instance(std::mt19937& rng, const Options& opt = {}) {
  auto uniform_int = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto coin = [&](double p) { return std::bernoulli_distribution(p)(rng); };

  Instance inst;
  const int n = uniform_int(1, opt.max_nodes);
  static const std::vector<std::vector<int64_t>> kWidthSets = {{1}, {1, 2}, {1, 3}, {2, 4}, {2}, {3}, {1, 2, 4}};
  static const std::vector<std::vector<int64_t>> kWideSets = {{2}, {3}, {2, 4}, {1, 2}, {1, 3}};
  const auto& widths = opt.mixed_tp      ? kWideSets[static_cast<size_t>(uniform_int(0, 4))]
                       : opt.multi_width ? kWidthSets[static_cast<size_t>(uniform_int(0, 6))]
                                         : kWidthSets[0];

  // Edge structure shared by all widths: consecutive edges plus random skip edges.
  std::vector<std::pair<int, int>> structure;
  for (int i = 0; i + 1 < n; ++i) structure.emplace_back(i, i + 1);
  const double skip_p = std::uniform_real_distribution<double>(0.0, 0.5)(rng);
  for (int i = 0; i < n; ++i)
    for (int j = i + 2; j < n; ++j)
      if (coin(skip_p)) structure.emplace_back(i, j);
  std::shuffle(structure.begin(), structure.end(), rng);  // the engine must not rely on edge order

  const bool integral_times = coin(0.5);
  const double tp_share = opt.mixed_tp
                              ? std::vector<double>{0.3, 0.5, 0.7}[static_cast<size_t>(uniform_int(0, 2))]
                              : std::vector<double>{0.0, 0.3, 0.7, 1.0}[static_cast<size_t>(uniform_int(0, 3))];
  auto time = [&]() -> double {
    if (coin(0.15)) return 0.0;
    return integral_times ? uniform_int(1, 10) : std::uniform_real_distribution<double>(0.01, 10.0)(rng);
  };
  auto bytes = [&](int hi) -> double { return coin(0.15) ? 0.0 : uniform_int(1, hi); };

  // With the corrected terms, half the chains put the parameters on the layers that compute little, so
  // balancing the load and balancing the parameters pull apart.
  const bool opposed = opt.corrected && coin(0.5);
  double heaviest = 0;  // the largest whole-chain footprint over widths, to scale the memory limit
  for (int64_t t : widths) {
    Chain c;
    c.width = t;
    double total = 0;
    for (int v = 0; v < n; ++v) {
      ChainNode node;
      node.forward_time = time();
      node.backward_time = time();
      node.parameter_bytes = bytes(100);
      if (opposed)
        node.parameter_bytes = std::max(0.0, 100.0 - 5.0 * (node.forward_time + node.backward_time)) + bytes(10);
      node.activation_bytes = bytes(100);
      node.tensor_parallel = t > 1 && coin(tp_share);
      total += 3 * node.parameter_bytes + node.activation_bytes;
      c.nodes.push_back(node);
    }
    for (const auto& [from, to] : structure) c.edges.push_back(ChainEdge{from, to, bytes(60)});
    heaviest = std::max(heaviest, total);
    inst.chains.push_back(std::move(c));
  }
  if (coin(0.2)) std::reverse(inst.chains.begin(), inst.chains.end());  // widths need not come sorted

  Cluster& cl = inst.cluster;
  cl.devices = uniform_int(1, 13);
  cl.micro_batches = uniform_int(1, 13);
  cl.pipeline_network.tiers[0].bandwidth =
      std::vector<double>{1.0, 2.5, 10.0, 100.0, 0.5}[static_cast<size_t>(uniform_int(0, 4))];
  cl.data_parallel_network.tiers[0].bandwidth = cl.pipeline_network.tiers[0].bandwidth;
  cl.recompute = opt.force_recompute ? opt.recompute_value : coin(0.5);
  cl.optimizer = coin(0.5) ? Optimizer::Adam : Optimizer::Sgd;
  // From tight (most stages infeasible, sometimes nothing fits) to loose.
  static const std::vector<double> kScales = {0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 5.0, 20.0, 1e6};
  const double scale = kScales[static_cast<size_t>(uniform_int(0, static_cast<int>(kScales.size()) - 1))];
  cl.memory_bytes = std::max(1.0, std::floor(scale * heaviest));
  if (opt.corrected) {
    // From negligible to dominant next to loads of up to ~20 per micro-batch and up to 13 micro-batches.
    CorrectedTerms& c = cl.corrected;
    c.enabled = true;
    cl.data_parallel_network.tiers[0].latency_s =
        std::vector<double>{0.0, 0.0, 0.1, 1.0, 5.0}[static_cast<size_t>(uniform_int(0, 4))];
    // 0: the data-parallel link is the pipeline link.
    const double sync_bandwidth =
        std::vector<double>{0.0, 0.0, 0.05, 0.25, 1.0, 20.0}[static_cast<size_t>(uniform_int(0, 5))];
    if (sync_bandwidth > 0) cl.data_parallel_network.tiers[0].bandwidth = sync_bandwidth;
    c.optimizer_seconds_per_byte =
        std::vector<double>{0.0, 0.0, 0.01, 0.1, 1.0, 5.0}[static_cast<size_t>(uniform_int(0, 5))];
    if (opt.two_tiers) {
      // Groups of 2 or 4 devices on a fast inner tier, a slower outer tier between them: plans of 1 to 13
      // devices put their rings and sends on either, depending on d, R and t.
      const int64_t members = uniform_int(0, 1) == 0 ? 2 : 4;
      const double inner = std::vector<double>{5.0, 20.0, 100.0}[static_cast<size_t>(uniform_int(0, 2))];
      const double outer = std::vector<double>{0.1, 0.5, 2.5}[static_cast<size_t>(uniform_int(0, 2))];
      const double inner_latency = std::vector<double>{0.0, 0.05}[static_cast<size_t>(uniform_int(0, 1))];
      const double outer_latency = std::vector<double>{0.05, 0.5, 2.0}[static_cast<size_t>(uniform_int(0, 2))];
      const double efficiency = std::vector<double>{1.0, 0.8}[static_cast<size_t>(uniform_int(0, 1))];
      cl.pipeline_network =
          phaze::placement::testing::two_tiers(members, inner, inner_latency, outer, outer_latency, efficiency);
      cl.data_parallel_network = cl.pipeline_network;
    }
  }
  return inst;
}

struct Tally {
  int feasible = 0;
  int infeasible = 0;
  int multi_stage = 0;
  int replicated = 0;
  int mixed_devices = 0;     // plans whose stages use different device counts (1 and t)
  int load_not_minimal = 0;  // optima that are not a smallest-largest-load plan of their (t, p, d)
  int failures = 0;
};

/// Solves one instance with `planner` and compares with the exhaustive search.
void check_instance(Planner& planner, const Instance& inst, const std::string& tag, Tally& tally) {
  const Plan plan = planner.solve(inst.chains, inst.cluster);
  const RefBest ref = reference_best(inst.chains, inst.cluster);
  const std::string where = tag + "\n" + inst.describe();
  const int before = ::testing::Test::HasFailure() ? 1 : 0;
  EXPECT_EQ(plan.feasible, ref.feasible) << where << "engine time " << plan.time_per_batch << ", reference "
                                         << ref.time;
  if (plan.feasible && ref.feasible) {
    EXPECT_TRUE(close(plan.time_per_batch, ref.time))
        << where << "engine optimum " << plan.time_per_batch << " vs brute force " << ref.time;
    check_plan_with_reference(inst.chains, inst.cluster, plan, where);
    ++tally.feasible;
    if (plan.stages.size() > 1) ++tally.multi_stage;
    if (plan.data_parallel > 1) ++tally.replicated;
    if (ref.load_not_minimal) ++tally.load_not_minimal;
    for (const Stage& st : plan.stages)
      if (st.devices != plan.stages.front().devices) {
        ++tally.mixed_devices;
        break;
      }
  } else if (!ref.feasible) {
    ++tally.infeasible;
  }
  if (!before && ::testing::Test::HasFailure()) ++tally.failures;
}

Tally run_random(uint32_t seed, int count, const Options& opt, const std::string& name) {
  std::mt19937 rng(seed);
  Cluster mode;  // the planner of the instances' time model
  mode.corrected.enabled = opt.corrected;
  // One planner across all instances: the API is meant for repeated calls.
  const std::unique_ptr<Planner> planner = phaze::placement::make_planner(mode);
  Tally tally;
  for (int k = 0; k < count && tally.failures == 0; ++k) {
    const Instance inst = random_instance(rng, opt);
    check_instance(*planner, inst, name + " seed " + std::to_string(seed) + " instance " + std::to_string(k), tally);
  }
  // The generator must reach both outcomes and non-trivial plans, or the test proves little.
  EXPECT_GT(tally.feasible, count / 4) << name;
  EXPECT_GT(tally.infeasible, 0) << name;
  EXPECT_GT(tally.multi_stage, 0) << name;
  EXPECT_GT(tally.replicated, 0) << name;
  return tally;
}

TEST(PlacementPlannerProperty, MatchesBruteForceMixed) {
  const Tally tally = run_random(12345u, 400, Options{}, "mixed");
  EXPECT_GT(tally.mixed_devices, 0) << "no plan mixed 1-device and t-device stages";
  std::printf("[ info     ] %d feasible (%d multi-stage, %d replicated, %d mixed devices), %d infeasible\n",
              tally.feasible, tally.multi_stage, tally.replicated, tally.mixed_devices, tally.infeasible);
}

TEST(PlacementPlannerProperty, MatchesBruteForceMixedDeviceStages) {
  Options opt;
  opt.mixed_tp = true;
  const Tally tally = run_random(8080u, 300, opt, "mixed-tp");
  EXPECT_GT(tally.mixed_devices, 10) << "too few plans mixed 1-device and t-device stages";
}

TEST(PlacementPlannerProperty, MatchesBruteForceWithRecomputation) {
  Options opt;
  opt.force_recompute = true;
  opt.recompute_value = true;
  run_random(777u, 300, opt, "recompute");
}

TEST(PlacementPlannerProperty, MatchesBruteForceWithoutRecomputation) {
  Options opt;
  opt.force_recompute = true;
  opt.recompute_value = false;
  run_random(4242u, 300, opt, "stash");
}

TEST(PlacementPlannerProperty, MatchesBruteForceSingleWidth) {
  Options opt;
  opt.multi_width = false;
  run_random(99u, 300, opt, "width1");
}

// Corrected terms (method.md D22, D3): the same exhaustive search, charging the ring all-reduce and the
// optimizer step on the largest stage. The optimum is then often not a smallest-largest-load plan of its
// (t, p, d), so a search on the load alone would miss it: the tally makes sure such cases are covered.
TEST(PlacementPlannerProperty, CorrectedTermsMatchBruteForce) {
  Options opt;
  opt.corrected = true;
  const Tally tally = run_random(2718u, 1000, opt, "corrected");
  EXPECT_GT(tally.load_not_minimal, 30) << "too few optima that trade load for smaller stages";
  std::printf("[ info     ] %d feasible (%d multi-stage, %d replicated, %d trade load for parameters), %d infeasible\n",
              tally.feasible, tally.multi_stage, tally.replicated, tally.load_not_minimal, tally.infeasible);
}

TEST(PlacementPlannerProperty, CorrectedTermsMatchBruteForceMixedDeviceStages) {
  Options opt;
  opt.corrected = true;
  opt.mixed_tp = true;
  const Tally tally = run_random(31415u, 600, opt, "corrected-mixed-tp");
  EXPECT_GT(tally.mixed_devices, 10) << "too few plans mixed 1-device and t-device stages";
  EXPECT_GT(tally.load_not_minimal, 10);
}

// On a network of two tiers the rings and sends of a plan run on the tier its layout puts them on
// (placement/links.h): the planner must stay exact when the data-parallel link changes with d and the
// replica's devices, and the stage loads with the width's send link.
TEST(PlacementPlannerProperty, CorrectedTermsOnTwoTierNetworksMatchBruteForce) {
  Options opt;
  opt.corrected = true;
  opt.two_tiers = true;
  run_random(16180u, 600, opt, "corrected-two-tiers");
  opt.mixed_tp = true;
  const Tally tally = run_random(57721u, 400, opt, "corrected-two-tiers-mixed-tp");
  EXPECT_GT(tally.mixed_devices, 10) << "too few plans mixed 1-device and t-device stages";
}

TEST(PlacementPlannerProperty, CorrectedTermsMoreSeeds) {
  const char* env = std::getenv("PHAZE_PLACEMENT_STRESS");
  const int count = env != nullptr ? std::max(1, std::atoi(env)) : 150;
  Options base;
  base.corrected = true;
  Options recompute = base, stash = base, small = base, large = base, mixed_tp = base;
  recompute.force_recompute = true;
  recompute.recompute_value = true;
  stash.force_recompute = true;
  small.max_nodes = 4;
  large.max_nodes = 12;
  mixed_tp.mixed_tp = true;
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    run_random(seed * 2000003u, count, recompute, "corrected-recompute");
    run_random(seed * 2000029u, count, stash, "corrected-stash");
    run_random(seed * 2000039u, count, small, "corrected-small");
    run_random(seed * 2000081u, count, mixed_tp, "corrected-mixed-tp");
    run_random(seed * 2000083u, std::max(count / 5, 30), large, "corrected-large");
  }
}

// The floor that needs no search (time_floor.h) never exceeds the brute-force optimum of its chain, with or
// without the corrected terms, recomputation and stages of 1 and t devices; and it is reached by a chain
// of one layer on one device with one replica and no pipeline (the optimum there is N times its passes).
TEST(PlacementPlannerProperty, TimeFloorIsBelowEveryOptimum) {
  int compared = 0;
  double closest = 0;  // the largest floor / optimum ratio met
  for (const bool corrected : {false, true})
    for (const bool mixed : {false, true}) {
      Options opt;
      opt.corrected = corrected;
      opt.mixed_tp = mixed;
      std::mt19937 rng(corrected ? 606u : 505u + (mixed ? 1u : 0u));
      for (int k = 0; k < 250; ++k) {
        const Instance inst = random_instance(rng, opt);
        for (const Chain& chain : inst.chains) {
          const RefBest ref = reference_best({chain}, inst.cluster);
          if (!ref.feasible) continue;
          const double floor = phaze::placement::time_floor_s(chain, inst.cluster);
          EXPECT_LE(floor, ref.time) << inst.describe();
          closest = std::max(closest, floor / ref.time);
          ++compared;
        }
      }
    }
  EXPECT_GT(compared, 500);
  EXPECT_GT(closest, 0.5);  // not vacuous

  Chain one;
  one.width = 1;
  one.nodes.push_back(ChainNode{2.0, 3.0, 10.0, 10.0, false});
  const Cluster c = phaze::placement::testing::cluster(1, 4, 1e9, 1e9);
  EXPECT_NEAR(phaze::placement::time_floor_s(one, c), 4 * 5.0, 1e-6);
  EXPECT_NEAR(reference_best({one}, c).time, 4 * 5.0, 1e-9);

  // Two such layers without activations, whose weights and gradients (2 × 10 bytes each) fit one per device
  // in 30 bytes: every plan has two stages, so the pipeline's fill and drain count too. On 2 devices with 4
  // micro-batches the optimum is the two-stage pipeline, 5 s per stage over 4 + 1 slots (plus 1e-8 s per
  // boundary transfer); the floor without the stage count would be 4 · 10 / 2 = 20 s.
  Chain two;
  two.width = 1;
  two.nodes.assign(2, ChainNode{2.0, 3.0, 10.0, 0.0, false});
  two.edges.push_back(phaze::placement::ChainEdge{0, 1, 10.0});
  const Cluster tight = phaze::placement::testing::cluster(2, 4, 30.0, 1e9);
  EXPECT_NEAR(phaze::placement::time_floor_s(two, tight), 25.0, 1e-6);
  EXPECT_NEAR(reference_best({two}, tight).time, 25.0, 1e-6);
}

// More seeds, including chains of up to 12 nodes. PHAZE_PLACEMENT_STRESS=<instances per configuration> runs a
// longer search (the default, 150, gives about 2,000 instances; 20,000 gives about 260,000 and takes ~10 s).
TEST(PlacementPlannerProperty, MoreSeeds) {
  const char* env = std::getenv("PHAZE_PLACEMENT_STRESS");
  const int count = env != nullptr ? std::max(1, std::atoi(env)) : 150;
  Options mixed_tp;
  mixed_tp.mixed_tp = true;
  Options small;
  small.max_nodes = 4;
  Options large;  // up to 12 nodes: 2^11 partitions per width
  large.max_nodes = 12;
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    run_random(seed * 1000003u, count, Options{}, "seeds");
    run_random(seed * 1000033u, count, mixed_tp, "seeds-mixed-tp");
    run_random(seed * 1000037u, count, small, "seeds-small");
    run_random(seed * 1000039u, std::max(count / 5, 30), large, "seeds-large");
  }
}

TEST(PlacementPlannerProperty, ReusedPlannerMatchesFreshPlanner) {
  std::mt19937 rng(2024u);
  ReferencePlanner reused;
  int compared = 0;
  for (int k = 0; k < 300; ++k) {
    // Alternate large and small instances so stale buffers from a bigger call would show.
    Options opt;
    opt.max_nodes = (k % 2 == 0) ? 9 : 3;
    const Instance inst = random_instance(rng, opt);
    ReferencePlanner fresh;
    const Plan a = reused.solve(inst.chains, inst.cluster);
    const Plan b = fresh.solve(inst.chains, inst.cluster);
    // Also per-width calls on the reused planner.
    for (const Chain& c : inst.chains) {
      ReferencePlanner fresh_single;
      const Plan x = reused.solve(c, inst.cluster);
      const Plan y = fresh_single.solve(c, inst.cluster);
      ASSERT_EQ(x.feasible, y.feasible) << "instance " << k;
      if (x.feasible) {
        ASSERT_EQ(x.time_per_batch, y.time_per_batch) << "instance " << k;
        ASSERT_EQ(x.data_parallel, y.data_parallel) << "instance " << k;
      }
    }
    ASSERT_EQ(a.feasible, b.feasible) << "instance " << k << "\n" << inst.describe();
    if (!a.feasible) continue;
    ++compared;
    ASSERT_EQ(a.time_per_batch, b.time_per_batch) << "instance " << k << "\n" << inst.describe();
    ASSERT_EQ(a.data_parallel, b.data_parallel) << "instance " << k;
    ASSERT_EQ(a.width, b.width) << "instance " << k;
    ASSERT_EQ(a.stages.size(), b.stages.size()) << "instance " << k;
    for (size_t q = 0; q < a.stages.size(); ++q) {
      EXPECT_EQ(a.stages[q].first, b.stages[q].first) << "instance " << k << " stage " << q;
      EXPECT_EQ(a.stages[q].last, b.stages[q].last) << "instance " << k << " stage " << q;
      EXPECT_EQ(a.stages[q].devices, b.stages[q].devices) << "instance " << k << " stage " << q;
    }
  }
  EXPECT_GT(compared, 50);
}

// The planner stops growing a first stage once it no longer fits: a longer stage holds more parameters,
// activations and incoming bytes, so it allows at most as many stages after it.
TEST(PlacementPlannerProperty, LongerStagesNeverFitMoreStagesAfterThem) {
  std::mt19937 rng(1618u);
  int checked = 0;
  for (int k = 0; k < 300; ++k) {
    const Instance inst = random_instance(rng);
    for (const Chain& chain : inst.chains) {
      phaze::placement::StageCosts costs;
      costs.compute(chain, inst.cluster);
      const int n = costs.size();
      for (int i = 0; i < n; ++i)
        for (int j = i + 1; j < n; ++j) {
          ASSERT_LE(costs.max_in_flight(i, j + 1), costs.max_in_flight(i, j)) << i << ", " << j << "\n"
                                                                              << inst.describe();
          ASSERT_GE(costs.parameter_bytes(i, j + 1), costs.parameter_bytes(i, j)) << i << ", " << j;
          ++checked;
        }
    }
  }
  EXPECT_GT(checked, 1000);
}

// StageCosts reused from call to call computes only the memory figures again when the chain and the link
// are those of the last call: every table must equal a fresh object's, whatever changed in between (the
// memory, recomputation, optimizer or devices of the cluster, the chain, or only the link).
// StageCosts keeps its memory figures per chain footprint (bytes, splits, edges) and memory settings, since
// a search's chains differ mostly in their times. Calls that go back and forth between chains of equal
// footprints and other times, chains that differ in one byte figure only, and memory settings, with long
// chains whose tables fill the kept bytes, give what a fresh StageCosts gives.
TEST(PlacementPlannerProperty, StageCostsKeepMemoryFiguresPerFootprint) {
  std::mt19937 rng(5151u);
  auto uniform_int = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto retimed = [&](Chain chain) {  // the same footprint, other times
    for (ChainNode& node : chain.nodes) {
      node.forward_time = uniform_int(0, 9);
      node.backward_time = uniform_int(0, 9);
    }
    return chain;
  };
  phaze::placement::StageCosts reused;
  int compared = 0;
  for (int round = 0; round < 40; ++round) {
    Options opt;
    opt.max_nodes = round % 4 == 3 ? 12 : 9;
    const Instance inst = random_instance(rng, opt);
    std::vector<Chain> chains;
    for (const Chain& chain : inst.chains) {
      chains.push_back(chain);
      chains.push_back(retimed(chain));
      Chain other_bytes = chain;  // one figure of the footprint changed
      ChainNode& node =
          other_bytes.nodes[static_cast<size_t>(uniform_int(0, static_cast<int>(chain.nodes.size()) - 1))];
      (uniform_int(0, 1) ? node.activation_bytes : node.parameter_bytes) += 7;
      chains.push_back(other_bytes);
    }
    if (round % 10 == 9) {  // 200 positions: a table of 321 KB, so the kept bytes fill up within the round
      Chain long_chain;
      for (int v = 0; v < 200; ++v) {
        long_chain.nodes.push_back({1.0 + v % 3, 2.0, 10.0 + v % 5, 20.0, false});
        if (v > 0) long_chain.edges.push_back({v - 1, v, 5.0});
      }
      chains.push_back(long_chain);
      chains.push_back(retimed(long_chain));
    }
    for (int call = 0; call < 60; ++call) {
      const Chain& chain = chains[static_cast<size_t>(uniform_int(0, static_cast<int>(chains.size()) - 1))];
      Cluster cluster = inst.cluster;
      cluster.memory_bytes =
          std::floor(cluster.memory_bytes * std::vector<double>{0.25, 0.5, 1.0, 4.0}[uniform_int(0, 3)]);
      cluster.recompute = uniform_int(0, 1) == 1;
      cluster.devices = uniform_int(1, 13);
      reused.compute(chain, cluster);
      phaze::placement::StageCosts fresh;
      fresh.compute(chain, cluster);
      ASSERT_EQ(reused.size(), fresh.size());
      for (int i = 0; i < fresh.size(); ++i)
        for (int j = i + 1; j <= fresh.size(); ++j) {
          ASSERT_EQ(reused.max_in_flight(i, j), fresh.max_in_flight(i, j)) << i << ", " << j << "\n" << inst.describe();
          ASSERT_EQ(reused.max_in_flight_row(i)[j], fresh.max_in_flight(i, j));
          ASSERT_EQ(reused.load(i, j, 2), fresh.load(i, j, 2));
          ++compared;
        }
    }
  }
  EXPECT_GT(compared, 100000);
}

TEST(PlacementPlannerProperty, ReusedStageCostsMatchFreshOnes) {
  std::mt19937 rng(2718u);
  phaze::placement::StageCosts reused;
  auto uniform_int = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int compared = 0, partial = 0;
  for (int k = 0; k < 200; ++k) {
    const Instance inst = random_instance(rng);
    for (const Chain& chain : inst.chains) {
      Cluster cluster = inst.cluster;
      for (int change = 0; change < 6; ++change) {
        switch (uniform_int(0, 5)) {
          case 0: cluster.memory_bytes *= std::vector<double>{0.5, 0.8, 1.3, 2.0}[uniform_int(0, 3)]; break;
          case 1: cluster.recompute = !cluster.recompute; break;
          case 2: cluster.optimizer = cluster.optimizer == Optimizer::Adam ? Optimizer::Sgd : Optimizer::Adam; break;
          case 3: cluster.devices = uniform_int(1, 13); break;
          case 4: cluster.pipeline_network.tiers[0].bandwidth *= 2; break;
          default: break;  // the same call again
        }
        const bool same_chain_and_link = change > 0 && cluster.pipeline_network.tiers[0].bandwidth ==
                                                           inst.cluster.pipeline_network.tiers[0].bandwidth;
        partial += same_chain_and_link;
        reused.compute(chain, cluster);
        phaze::placement::StageCosts fresh;
        fresh.compute(chain, cluster);
        ASSERT_EQ(reused.size(), fresh.size());
        ASSERT_EQ(reused.uniform_devices(), fresh.uniform_devices());
        for (int i = 0; i < fresh.size(); ++i)
          for (int j = i + 1; j <= fresh.size(); ++j) {
            ASSERT_EQ(reused.max_in_flight(i, j), fresh.max_in_flight(i, j)) << i << ", " << j << "\n"
                                                                             << inst.describe();
            for (int64_t after : {1, 2}) ASSERT_EQ(reused.load(i, j, after), fresh.load(i, j, after)) << i << ", " << j;
            ASSERT_EQ(reused.parameter_bytes(i, j), fresh.parameter_bytes(i, j));
            ASSERT_EQ(reused.devices(i, j), fresh.devices(i, j));
            ASSERT_EQ(reused.forward_finish(i, j), fresh.forward_finish(i, j));
            ASSERT_EQ(reused.backward_finish(i, j), fresh.backward_finish(i, j));
            ASSERT_EQ(reused.backward_sum(i, j), fresh.backward_sum(i, j));
            ++compared;
          }
      }
    }
  }
  EXPECT_GT(compared, 10000);
  EXPECT_GT(partial, 500);  // calls that take the shortcut, when the link did not change since the chain's first
}

TEST(PlacementPlannerProperty, ReusedPlannersAcrossModesMatchFreshPlanners) {
  // Both planners reused across instances of both time models, sizes and device mixes: buffers of a larger
  // or different call must not leak into the next.
  std::mt19937 rng(4711u);
  Cluster reference_mode, corrected_mode;
  corrected_mode.corrected.enabled = true;
  const std::unique_ptr<Planner> reused_reference = phaze::placement::make_planner(reference_mode);
  const std::unique_ptr<Planner> reused_corrected = phaze::placement::make_planner(corrected_mode);
  int compared = 0;
  for (int k = 0; k < 300; ++k) {
    Options opt;
    opt.max_nodes = (k % 3 == 0) ? 10 : 4;
    opt.corrected = k % 2 == 0;
    opt.mixed_tp = k % 5 == 0;
    const Instance inst = random_instance(rng, opt);
    Planner& reused = opt.corrected ? *reused_corrected : *reused_reference;
    const Plan a = reused.solve(inst.chains, inst.cluster);
    const Plan b = phaze::placement::make_planner(inst.cluster)->solve(inst.chains, inst.cluster);
    ASSERT_EQ(a.feasible, b.feasible) << "instance " << k << "\n" << inst.describe();
    if (!a.feasible) continue;
    ++compared;
    ASSERT_EQ(a.time_per_batch, b.time_per_batch) << "instance " << k << "\n" << inst.describe();
    ASSERT_EQ(a.data_parallel, b.data_parallel) << "instance " << k;
    ASSERT_EQ(a.width, b.width) << "instance " << k;
    ASSERT_EQ(a.stages.size(), b.stages.size()) << "instance " << k;
    for (size_t q = 0; q < a.stages.size(); ++q) {
      EXPECT_EQ(a.stages[q].first, b.stages[q].first) << "instance " << k << " stage " << q;
      EXPECT_EQ(a.stages[q].last, b.stages[q].last) << "instance " << k << " stage " << q;
    }
  }
  EXPECT_GT(compared, 50);
}

TEST(PlacementPlannerProperty, SingleWidthSolveMatchesBruteForce) {
  // The per-width overload: the best plan for one chain equals the brute force over that chain alone.
  std::mt19937 rng(31337u);
  ReferencePlanner planner;
  int failures = 0;
  for (int k = 0; k < 200 && failures == 0; ++k) {
    const Instance inst = random_instance(rng);
    const Chain& chain = inst.chains[static_cast<size_t>(k) % inst.chains.size()];
    const Plan plan = planner.solve(chain, inst.cluster);
    const RefBest ref = reference_best({chain}, inst.cluster);
    const bool had = HasFailure();
    EXPECT_EQ(plan.feasible, ref.feasible) << "instance " << k << "\n" << inst.describe();
    if (plan.feasible && ref.feasible) {
      EXPECT_EQ(plan.width, chain.width);
      EXPECT_TRUE(close(plan.time_per_batch, ref.time))
          << "instance " << k << ": " << plan.time_per_batch << " vs " << ref.time << "\n"
          << inst.describe();
      check_plan_with_reference({chain}, inst.cluster, plan, "instance " + std::to_string(k));
    }
    if (!had && HasFailure()) ++failures;
  }
}

void check_hand_sets(uint32_t seed, const Options& opt) {
  std::mt19937 rng(seed);
  int feasible = 0, infeasible = 0, failures = 0;
  for (int k = 0; k < 1000 && failures == 0; ++k) {
    const Instance inst = random_instance(rng, opt);
    const int n = static_cast<int>(inst.chains.front().nodes.size());
    HandSetPlan h;
    h.pipeline = std::uniform_int_distribution<int>(1, 4)(rng);
    // Mostly a width of the input, sometimes one that is missing.
    if (std::bernoulli_distribution(0.85)(rng)) {
      h.width = inst.chains[std::uniform_int_distribution<size_t>(0, inst.chains.size() - 1)(rng)].width;
    } else {
      h.width = std::uniform_int_distribution<int>(1, 5)(rng);
    }
    h.data_parallel = std::uniform_int_distribution<int>(1, std::bernoulli_distribution(0.5)(rng) ? 1 : 4)(rng);
    const int64_t layers = std::uniform_int_distribution<int>(0, n + 2)(rng);
    const PlanCheck got = phaze::placement::evaluate_hand_set(inst.chains, inst.cluster, h, layers);
    const RefEval want = reference_hand_set(inst.chains, inst.cluster, h, layers);
    const bool had = ::testing::Test::HasFailure();
    const std::string where = "instance " + std::to_string(k) + " p=" + std::to_string(h.pipeline) +
                              " t=" + std::to_string(h.width) + " d=" + std::to_string(h.data_parallel) +
                              " L=" + std::to_string(layers) + "\n" + inst.describe();
    EXPECT_EQ(got.feasible, want.feasible)
        << where << "engine reason: " << got.reason << "; reference reason: " << want.reason;
    if (got.feasible && want.feasible) {
      EXPECT_TRUE(close(got.time_per_batch, want.time)) << where << got.time_per_batch << " vs " << want.time;
      ++feasible;
    } else {
      if (!got.feasible) {
        EXPECT_FALSE(got.reason.empty()) << where;
      }
      ++infeasible;
    }
    if (!had && ::testing::Test::HasFailure()) ++failures;
  }
  EXPECT_GT(feasible, 100);
  EXPECT_GT(infeasible, 100);
}

TEST(PlacementPlannerProperty, HandSetMatchesReference) {
  check_hand_sets(555u, Options{});
}

TEST(PlacementPlannerProperty, HandSetWithCorrectedTermsMatchesReference) {
  Options opt;
  opt.corrected = true;
  check_hand_sets(556u, opt);
}

// stages_fit_memory against the reference's memory rule, stage by stage, on every partition of random chains
// (their skip edges in random order) at tight to loose memory.
TEST(PlacementPlannerProperty, StagesFitMemoryAgreesWithTheReference) {
  std::mt19937 rng(4242u);
  int fitting = 0, not_fitting = 0;
  for (int k = 0; k < 200; ++k) {
    const Instance inst = random_instance(rng);
    for (const Chain& chain : inst.chains) {
      const int n = static_cast<int>(chain.nodes.size());
      for (uint32_t mask = 0; mask < (1u << (n - 1)); ++mask) {  // bit j: a cut after position j
        std::vector<Stage> stages;
        int first = 0;
        for (int j = 0; j < n; ++j)
          if (j == n - 1 || (mask >> j) & 1u) {
            stages.push_back(Stage{first, j + 1, 1});
            first = j + 1;
          }
        const auto p = static_cast<int64_t>(stages.size());
        if (p > inst.cluster.devices) continue;  // more stages than devices: no plan, and not a memory question
        bool fit = true;
        for (int64_t q = 0; q < p; ++q)
          fit = fit && fits(reference_stage(chain, inst.cluster, stages[q].first, stages[q].last), p - q, inst.cluster);
        ASSERT_EQ(phaze::placement::stages_fit_memory(chain, stages, inst.cluster), fit) << inst.describe();
        (fit ? fitting : not_fitting) += 1;
      }
    }
  }
  EXPECT_GT(fitting, 1000);
  EXPECT_GT(not_fitting, 1000);
}

// What the search's bounds rest on (Evaluator::refine): with more memory per device the best time is never
// longer, and when the best plan of the roomier cluster fits the other one, the other's best time is the
// same to the bit. Both by brute force, and by the planner.
TEST(PlacementPlannerProperty, MoreMemoryNeverSlowsTheBestPlan) {
  std::mt19937 rng(777u);
  Options opt;
  opt.corrected = true;
  phaze::placement::CorrectedPlanner planner;
  int settled = 0, compared = 0;
  for (int k = 0; k < 400; ++k) {
    const Instance inst = random_instance(rng, opt);
    Cluster tight = inst.cluster, roomy = inst.cluster;
    tight.memory_bytes = std::floor(inst.cluster.memory_bytes * std::uniform_real_distribution<double>(0.3, 1.0)(rng));
    ASSERT_TRUE(phaze::placement::differ_only_in_memory(tight, roomy));
    for (const Chain& chain : inst.chains) {
      const RefBest ref_tight = reference_best({chain}, tight), ref_roomy = reference_best({chain}, roomy);
      if (ref_tight.feasible) {
        ASSERT_TRUE(ref_roomy.feasible) << inst.describe();
        EXPECT_LE(ref_roomy.time, ref_tight.time) << inst.describe();
      }
      const Plan at_roomy = planner.solve(chain, roomy);
      const Plan at_tight = planner.solve(chain, tight);
      ASSERT_EQ(at_roomy.feasible, ref_roomy.feasible) << inst.describe();
      if (!at_roomy.feasible) {
        EXPECT_FALSE(at_tight.feasible) << inst.describe();
        continue;
      }
      ++compared;
      if (!phaze::placement::stages_fit_memory(chain, at_roomy.stages, tight)) continue;
      ASSERT_TRUE(at_tight.feasible) << inst.describe();
      EXPECT_EQ(at_tight.time_per_batch, at_roomy.time_per_batch) << inst.describe();
      ++settled;
    }
  }
  EXPECT_GT(compared, 300);
  EXPECT_GT(settled, 100);
  EXPECT_LT(settled, compared);  // some roomier plans do not fit: the rule is not vacuous
  Cluster other = Cluster{};
  other.recompute = true;
  EXPECT_FALSE(phaze::placement::differ_only_in_memory(Cluster{}, other));
}

// The reference itself, on the worked example of planner_examples_test.cpp (3 nodes fw 1 bw 2, 10-byte
// edges, bandwidth 10): stage {1, 2} has F = 10/10 + 1 + 1 = 3 and B = 2 + 2 = 4, so load 7.
TEST(PlacementPlannerProperty, ReferenceStageSimulationSanity) {
  Chain c;
  c.width = 1;
  for (int i = 0; i < 3; ++i) c.nodes.push_back(ChainNode{1, 2, 10, 5, false});
  c.edges = {ChainEdge{0, 1, 10}, ChainEdge{1, 2, 10}};
  Cluster cl;
  cl.devices = 4;
  cl.micro_batches = 8;
  cl.memory_bytes = 100;
  cl.pipeline_network.tiers[0].bandwidth = cl.data_parallel_network.tiers[0].bandwidth = 10;
  EXPECT_DOUBLE_EQ(reference_stage(c, cl, 1, 3).load_plain, 7.0);
  EXPECT_DOUBLE_EQ(reference_stage(c, cl, 0, 1).load_plain, 4.0);  // F = 1, B = 10/10 + 2
  EXPECT_DOUBLE_EQ(reference_stage(c, cl, 0, 3).load_plain, 9.0);
  const RefBest best = reference_best({c}, cl);
  ASSERT_TRUE(best.feasible);
  EXPECT_DOUBLE_EQ(best.time, 27.0);
}

}  // namespace
