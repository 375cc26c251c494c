// The nodes a token's copies reach, against every routing of small cases enumerated one by one, and DeepEP's
// deduplicating all-to-all against the plain one where the two must agree or differ.

#include "megatron/expert_routing.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <set>
#include <vector>

#include "cost/collective_time.h"
#include "hw/system.h"
#include "megatron/training_step.h"
#include "model/presets.h"
#include "util/input_error.h"

namespace {

using phaze::model::ModelSpec;

ModelSpec routed(int64_t experts, int64_t k, int64_t groups, int64_t groups_per_token) {
  ModelSpec m = *phaze::model::find_preset("mixtral-8x7b");
  m.experts = experts;
  m.experts_per_token = k;
  m.expert_groups = groups;
  m.expert_groups_per_token = groups_per_token;
  return m;
}

/// Every k-subset of `pool` (experts), in turn.
void for_each_subset(const std::vector<int64_t>& pool, int64_t k, const std::function<void(std::vector<int64_t>&)>& f) {
  std::vector<int64_t> chosen;
  std::function<void(size_t)> walk = [&](size_t from) {
    if (static_cast<int64_t>(chosen.size()) == k) {
      f(chosen);
      return;
    }
    for (size_t i = from; i < pool.size(); ++i) {
      chosen.push_back(pool[i]);
      walk(i + 1);
      chosen.pop_back();
    }
  };
  walk(0);
}

/// The mean, over every equally likely routing of a token on node 0, of the other nodes its experts sit on
/// (expert e on node e / (E / n)); with groups (the nodes), every choice of g groups first, equally likely.
double enumerated_remote_nodes(int64_t experts, int64_t k, int64_t nodes, int64_t groups_per_token) {
  const int64_t per_node = experts / nodes;
  double sum = 0, count = 0;
  auto tally = [&](std::vector<int64_t>& chosen) {
    std::set<int64_t> reached;
    for (int64_t e : chosen)
      if (e / per_node != 0) reached.insert(e / per_node);
    sum += static_cast<double>(reached.size());
    count += 1;
  };
  std::vector<int64_t> all_nodes;
  for (int64_t i = 0; i < nodes; ++i) all_nodes.push_back(i);
  if (groups_per_token == 0) {
    std::vector<int64_t> pool;
    for (int64_t e = 0; e < experts; ++e) pool.push_back(e);
    for_each_subset(pool, k, tally);
    return sum / count;
  }
  // Each choice of groups weighs equally: average the per-choice means.
  double total = 0, choices = 0;
  for_each_subset(all_nodes, groups_per_token, [&](std::vector<int64_t>& groups) {
    std::vector<int64_t> pool;
    for (int64_t g : groups)
      for (int64_t e = g * per_node; e < (g + 1) * per_node; ++e) pool.push_back(e);
    sum = count = 0;
    for_each_subset(pool, k, tally);
    total += sum / count;
    choices += 1;
  });
  return total / choices;
}

TEST(ExpertRouting, RemoteNodesAsEveryRoutingEnumerated) {
  struct Case {
    int64_t experts, k, nodes, groups_per_token;
  };
  for (const Case c : {Case{8, 2, 4, 0}, Case{16, 4, 4, 0}, Case{12, 3, 3, 0}, Case{16, 4, 4, 2}, Case{24, 5, 6, 3},
                       Case{8, 2, 2, 1}, Case{16, 8, 8, 0}}) {
    SCOPED_TRACE(testing::Message() << c.experts << " experts, k " << c.k << ", " << c.nodes << " nodes, groups "
                                    << c.groups_per_token);
    const ModelSpec m = routed(c.experts, c.k, c.groups_per_token > 0 ? c.nodes : 0, c.groups_per_token);
    EXPECT_NEAR(phaze::megatron::expected_remote_nodes(m, c.nodes),
                enumerated_remote_nodes(c.experts, c.k, c.nodes, c.groups_per_token), 1e-12);
  }
  // One node: nothing crosses; groups that are not the nodes route as if there were none.
  EXPECT_EQ(phaze::megatron::expected_remote_nodes(routed(8, 2, 0, 0), 1), 0);
  EXPECT_DOUBLE_EQ(phaze::megatron::expected_remote_nodes(routed(16, 4, 8, 2), 4),
                   phaze::megatron::expected_remote_nodes(routed(16, 4, 0, 0), 4));
}

TEST(ExpertRouting, DeduplicatedAllToAllCrossesTheNetworkOncePerNode) {
  const phaze::hw::Network net = phaze::hw::dgx_h100_system().network;
  const double bytes = 1e9, k = 8;
  // Inside one node there is nothing to deduplicate.
  const phaze::cost::DeviceGroup node{8, 1};
  EXPECT_EQ(phaze::cost::nodes_spanned(net, node), 1);
  EXPECT_DOUBLE_EQ(phaze::cost::deduplicated_all_to_all_s(net, node, bytes, k, 0),
                   phaze::cost::all_to_all_s(net, node, bytes));
  // 64 GPUs on 8 nodes: every copy to another node by the plain all-to-all (7/8 of the bytes); DeepEP sends
  // one copy a node reached, and fewer nodes means less time until the node's own fan-out takes longer.
  const phaze::cost::DeviceGroup wide{64, 1};
  EXPECT_EQ(phaze::cost::nodes_spanned(net, wide), 8);
  EXPECT_EQ(phaze::cost::nodes_spanned(net, phaze::cost::DeviceGroup{64, 2}), 16);
  const double plain = phaze::cost::all_to_all_s(net, wide, bytes);
  const double every_copy = phaze::cost::deduplicated_all_to_all_s(net, wide, bytes, k, k * 7.0 / 8.0);
  EXPECT_NEAR(every_copy, plain, 1e-12 * plain);  // no deduplication: the scale-out share sets both
  const double limited = phaze::cost::deduplicated_all_to_all_s(net, wide, bytes, k, 3.16);
  EXPECT_LT(limited, plain);
  EXPECT_LE(phaze::cost::deduplicated_all_to_all_s(net, wide, bytes, k, 1),
            phaze::cost::deduplicated_all_to_all_s(net, wide, bytes, k, 2));
}

TEST(ExpertRouting, NodeLimitedRoutingHalvesDeepSeekV3sCrossings) {
  // DeepSeek-V3 on 64 GPUs (8 nodes, its 8 groups of 32 experts): a token's 4 groups hold each other node
  // with chance 4/8, and its 8 experts among their 128 miss a given one of them with chance C(96, 8)/C(128, 8):
  // 3.18 of the 7 other nodes. Unlimited, its 8 experts among 256 miss a node with chance C(224, 8)/C(256, 8):
  // 4.63. The plain all-to-all sends 7 of its 8 copies across.
  auto miss = [](double a, double b) {
    double p = 1;
    for (int i = 0; i < 8; ++i) p *= (a - i) / (b - i);
    return p;
  };
  const ModelSpec v3 = *phaze::model::find_preset("deepseek-v3");
  const double limited = phaze::megatron::expected_remote_nodes(v3, 8);
  ModelSpec unlimited = v3;
  unlimited.expert_groups = unlimited.expert_groups_per_token = 0;
  EXPECT_NEAR(limited, 7 * 0.5 * (1 - miss(96, 128)), 1e-12);
  EXPECT_NEAR(phaze::megatron::expected_remote_nodes(unlimited, 8), 7 * (1 - miss(224, 256)), 1e-12);
  EXPECT_LT(limited, 0.7 * phaze::megatron::expected_remote_nodes(unlimited, 8));
  // In a prediction the flex dispatcher cuts the expert-parallel time, and nothing else.
  phaze::megatron::TrainingPlan pl = phaze::megatron::current_practice();
  pl.tp = 2;
  pl.etp = 1;
  pl.ep = 64;
  pl.pp = 8;
  pl.dp = 64;
  pl.sequence_parallel = true;
  pl.first_stage_layers = 7;
  pl.last_stage_layers = 6;
  pl.global_batch = 512;
  pl.seq = 4096;
  const auto system = phaze::hw::dgx_h100_system();
  const auto alltoall = phaze::megatron::predict_step(v3, system, pl);
  pl.moe_dispatcher = phaze::megatron::MoeDispatcher::Flex;
  const auto flex = phaze::megatron::predict_step(v3, system, pl);
  EXPECT_LT(flex.time.ep_comm_s, 0.6 * alltoall.time.ep_comm_s);
  EXPECT_EQ(flex.time.forward_s, alltoall.time.forward_s);
  EXPECT_EQ(flex.memory.peak_bytes, alltoall.memory.peak_bytes);
}

}  // namespace

namespace {

TEST(ExpertRouting, OverlappedAllToAllsLeaveOnlyTheUnpairedMicroBatches) {
  // Mixtral 8x7B, experts over one node's 8 GPUs: each all-to-all is shorter than the other pass's compute,
  // so in 1F1B's steady state all of it hides. What stays exposed are the micro-batches without a partner:
  // of m, the p that the warm-up and cool-down leave alone (a lone stage: its first forward pass and its last
  // backward pass, one micro-batch's worth).
  const ModelSpec m = *phaze::model::find_preset("mixtral-8x7b");
  const auto system = phaze::hw::dgx_h100_system();
  for (int64_t p : {1, 2}) {
    SCOPED_TRACE(p);
    phaze::megatron::TrainingPlan pl = phaze::megatron::current_practice();
    pl.ep = 8;
    pl.pp = p;
    pl.dp = 8;
    pl.seq = 4096;
    pl.global_batch = 8 * 16;
    pl.recompute = phaze::megatron::Recompute::Selective;
    const auto plain = phaze::megatron::predict_step(m, system, pl);
    pl.overlap_moe_comm = true;
    const auto overlapped = phaze::megatron::predict_step(m, system, pl);
    const double micro_batches = 16;
    ASSERT_GT(plain.time.ep_comm_s, 0);
    EXPECT_NEAR(overlapped.time.ep_comm_s, plain.time.ep_comm_s * static_cast<double>(p) / micro_batches,
                1e-9 * plain.time.ep_comm_s);
    EXPECT_NEAR(plain.time.iteration_s - overlapped.time.iteration_s, plain.time.ep_comm_s - overlapped.time.ep_comm_s,
                1e-9 * plain.time.iteration_s);
    EXPECT_EQ(overlapped.time.forward_s, plain.time.forward_s);
  }
  // Megatron-Core overlaps them only with expert parallelism and without full recomputation.
  phaze::megatron::TrainingPlan pl = phaze::megatron::current_practice();
  pl.dp = 8;
  pl.seq = 4096;
  pl.global_batch = 64;
  pl.overlap_moe_comm = true;
  pl.recompute = phaze::megatron::Recompute::Selective;
  EXPECT_THROW(phaze::megatron::predict_step(m, system, pl), phaze::InputError);
  pl.ep = 8;
  pl.recompute = phaze::megatron::Recompute::Full;
  EXPECT_THROW(phaze::megatron::predict_step(m, system, pl), phaze::InputError);
}

}  // namespace

namespace {

TEST(ExpertRouting, TheSharedExpertHidesAllToAllsShorterThanItself) {
  // Qwen2-57B-A14B's shared expert (20,480 columns on every token) runs longer than its all-to-alls over 4
  // GPUs of one node, so running it while they are in flight hides them whole; one stage, with no pipeline
  // to fill, gains just what they took. Mixtral has no shared expert to overlap.
  const ModelSpec qwen = *phaze::model::find_preset("qwen2-57b-a14b");
  const auto system = phaze::hw::dgx_h100_system();
  phaze::megatron::TrainingPlan pl = phaze::megatron::current_practice();
  pl.ep = 4;
  pl.dp = 16;
  pl.seq = 4096;
  pl.global_batch = 64;
  const auto plain = phaze::megatron::predict_step(qwen, system, pl);
  pl.shared_expert_overlap = true;
  const auto overlapped = phaze::megatron::predict_step(qwen, system, pl);
  ASSERT_GT(plain.time.ep_comm_s, 0);
  EXPECT_EQ(overlapped.time.ep_comm_s, 0);
  EXPECT_NEAR(plain.time.iteration_s - overlapped.time.iteration_s, plain.time.ep_comm_s,
              1e-9 * plain.time.iteration_s);
  EXPECT_THROW(phaze::megatron::predict_step(*phaze::model::find_preset("mixtral-8x7b"), system, pl),
               phaze::InputError);
}

}  // namespace

namespace {

/// One node of 8 H100s, 64 sequences of 4,096 tokens, each GPU one data-parallel replica holding E/ep experts.
phaze::megatron::TrainingPlan one_node(int64_t ep) {
  phaze::megatron::TrainingPlan pl = phaze::megatron::current_practice();
  pl.ep = ep;
  pl.dp = 8;
  pl.seq = 4096;
  pl.global_batch = 64;
  return pl;
}

TEST(ExpertRouting, CapacityAndImbalanceSetTheBusiestExpertsLoad) {
  // Megatron-Core's semantics: padded, every expert computes its capacity c whatever the router does;
  // unpadded, copies beyond c are dropped, so the busiest rank's load is its imbalance capped at c; an
  // imbalance is between expert-parallel ranks, so a single rank holding every expert sees none.
  phaze::megatron::TrainingPlan pl;
  pl.ep = 8;
  EXPECT_EQ(pl.expert_load(), 1);
  pl.moe_load_imbalance = 1.4;
  EXPECT_EQ(pl.expert_load(), 1.4);
  pl.moe_capacity_factor = 1.25;
  EXPECT_EQ(pl.expert_load(), 1.25);
  pl.moe_capacity_factor = 2;
  EXPECT_EQ(pl.expert_load(), 1.4);
  pl.moe_pad_to_capacity = true;
  EXPECT_EQ(pl.expert_load(), 2);
  pl.ep = 1;
  EXPECT_EQ(pl.expert_load(), 2);
  pl.moe_pad_to_capacity = false;
  EXPECT_EQ(pl.expert_load(), 1);
  pl.moe_capacity_factor = 0.5;
  EXPECT_EQ(pl.expert_load(), 0.5);
  // The busiest of 2 ranks takes at most every copy: twice the mean, whatever the imbalance says.
  pl.moe_capacity_factor = 0;
  pl.moe_load_imbalance = 4;
  pl.ep = 2;
  EXPECT_EQ(pl.expert_load(), 2);
}

TEST(ExpertRouting, PaddingToABalancedCapacityChangesNothingAndDroppingSavesTime) {
  // Mixtral 8x7B at 4,096 tokens: T·k/E = 1,024 copies per expert exactly, so a capacity of 1.0 padded is
  // the balanced dropless layer itself, to the last byte and second. Dropping half the copies (c = 0.5)
  // halves the experts' work; an imbalance of 1.5 that a capacity of 2 does not reach drops nothing.
  const ModelSpec m = *phaze::model::find_preset("mixtral-8x7b");
  const auto system = phaze::hw::dgx_h100_system();
  phaze::megatron::TrainingPlan pl = one_node(8);
  pl.recompute = phaze::megatron::Recompute::Selective;
  const auto dropless = phaze::megatron::predict_step(m, system, pl);
  pl.moe_capacity_factor = 1;
  pl.moe_pad_to_capacity = true;
  const auto padded = phaze::megatron::predict_step(m, system, pl);
  EXPECT_EQ(padded.time.iteration_s, dropless.time.iteration_s);
  EXPECT_EQ(padded.memory.peak_bytes, dropless.memory.peak_bytes);
  pl.moe_capacity_factor = 0.5;
  pl.moe_pad_to_capacity = false;
  const auto dropped = phaze::megatron::predict_step(m, system, pl);
  EXPECT_LT(dropped.time.iteration_s, dropless.time.iteration_s);
  EXPECT_LT(dropped.time.ep_comm_s, 0.55 * dropless.time.ep_comm_s);
  pl.moe_capacity_factor = 0;
  pl.moe_load_imbalance = 1.5;
  const auto imbalanced = phaze::megatron::predict_step(m, system, pl);
  pl.moe_capacity_factor = 2;
  const auto capped_above = phaze::megatron::predict_step(m, system, pl);
  EXPECT_GT(imbalanced.time.iteration_s, dropless.time.iteration_s);
  EXPECT_GT(imbalanced.memory.peak_bytes, dropless.memory.peak_bytes);
  EXPECT_EQ(capped_above.time.iteration_s, imbalanced.time.iteration_s);
  // The model's FLOPs are the balanced model's however the copies fall (Megatron-LM's count); what the
  // kernels execute follows the load.
  for (const auto* p : {&dropped, &imbalanced}) EXPECT_NEAR(p->model_flop, dropless.model_flop, 1e-9 * p->model_flop);
  EXPECT_LT(dropped.hardware_flop, dropless.hardware_flop);
  EXPECT_GT(imbalanced.hardware_flop, dropless.hardware_flop);
}

TEST(ExpertRouting, RoutingOptionsAreRefusedWhereMegatronCoreHasNoMeaningForThem) {
  const auto system = phaze::hw::dgx_h100_system();
  const auto expect_refusal = [&](const ModelSpec& m, const phaze::megatron::TrainingPlan& pl, const char* option) {
    try {
      phaze::megatron::predict_step(m, system, pl);
      ADD_FAILURE() << option;
    } catch (const phaze::InputError& e) {
      EXPECT_NE(std::string(e.what()).find(option), std::string::npos) << e.what();
    }
  };
  const ModelSpec mixtral = *phaze::model::find_preset("mixtral-8x7b");
  phaze::megatron::TrainingPlan pl = one_node(8);
  pl.moe_pad_to_capacity = true;
  expect_refusal(mixtral, pl, "--moe-pad-expert-input-to-capacity");
  pl.moe_capacity_factor = 4.5;  // Mixtral routes 2 of 8: padded, at most 4
  expect_refusal(mixtral, pl, "--moe-expert-capacity-factor");
  pl.moe_pad_to_capacity = false;  // unpadded, a capacity beyond every token drops nothing
  EXPECT_NO_THROW(phaze::megatron::predict_step(mixtral, system, pl));
  pl.moe_capacity_factor = 1;
  pl.moe_pad_to_capacity = true;
  pl.moe_dispatcher = phaze::megatron::MoeDispatcher::Flex;  // Megatron-Core's flex dispatcher does not pad
  expect_refusal(mixtral, pl, "--moe-pad-expert-input-to-capacity");
  pl = one_node(8);
  pl.moe_load_imbalance = 0.9;
  expect_refusal(mixtral, pl, "--moe-load-imbalance");
  pl = one_node(1);
  pl.moe_capacity_factor = 1;
  expect_refusal(*phaze::model::find_preset("llama2-7b"), pl, "--moe-expert-capacity-factor");
}

}  // namespace
