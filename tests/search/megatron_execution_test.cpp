// The co-search under Megatron-LM execution: every point's plan against a brute force over every integer
// configuration priced from the exact layer schedules, the attention core against the sum of its chain of
// operators, one device against the closed form of its iteration, and the record round trip.

#include "search/megatron_execution.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "hw/presets.h"
#include "model/operator_roles.h"
#include "model/presets.h"
#include "schedule/layer_problem.h"
#include "search/baselines.h"
#include "search/evaluate.h"
#include "small_design.h"
#include "util/input_error.h"

namespace {

using namespace phaze;
using megatron::Recompute;
using megatron::TrainingPlan;

/// A 4-layer GPT small enough to schedule in milliseconds, with room for interleaving (p = 2, v = 2).
search::ModelCase tiny_gpt() {
  search::ModelCase m;
  m.source = "tiny";
  m.spec = model::megatron_gpt("tiny", "test GPT", 4, 64, 4, 64);
  m.seq = 64;
  m.widths = {1, 2, 4};
  return m;
}

search::SearchQuestion megatron_question() {
  search::SearchQuestion q;
  q.models = {tiny_gpt()};
  q.devices = 8;
  q.global_batch = 16;
  q.micro_batches = {1, 2};
  q.hbm_bytes = {int64_t{2} << 20, int64_t{24} << 20, int64_t{1} << 30};
  q.execution = search::Execution::Megatron;
  q.optimizer = placement::Optimizer::MixedPrecisionAdam;
  return q;
}

hw::Design design(int64_t cores, int64_t array) {
  return search::testing::small_design(cores, array);
}

/// Layer costs from schedules, with the attention core as the sum of its operators, each on the cores that
/// run it fastest: they form a chain (checked), so that sum is its exact makespan.
megatron::LayerCosts costs_of(const model::LayerGraph& graph, const search::LayerSchedules& s, double core_s) {
  megatron::LayerCosts c = megatron::graph_costs(graph);
  auto pass = [](const search::PassSummary& p, double core = 0) { return megatron::PassTime{p.makespan_s, 0, core}; };
  c.embedding = {pass(s.node(graph, 0).forward), pass(s.node(graph, 0).backward)};
  c.transformer = {pass(s.node(graph, 1).forward, core_s), pass(s.node(graph, 1).backward)};
  c.head = {pass(s.node(graph, graph.size() - 1).forward), pass(s.node(graph, graph.size() - 1).backward)};
  return c;
}

double attention_chain_s(const model::LayerGraph& graph, const hw::Architecture& arch) {
  cost::Estimator estimator;
  const schedule::Problem problem = schedule::layer_problem(graph.transformer.forward, arch, estimator);
  std::vector<int> core;
  double sum = 0;
  for (size_t i = 0; i < problem.tasks.size(); ++i)
    if (model::in_attention_core(problem.tasks[i].id)) {
      core.push_back(static_cast<int>(i));
      sum += std::min(problem.tasks[i].single_s, problem.tasks[i].parallel_s);
    }
  // A chain: each core operator after the first waits for the one before it (one fused kernel, or the
  // scores, softmax and context).
  EXPECT_GE(core.size(), graph.shape.fused_attention ? 1u : 3u);
  for (size_t k = 1; k < core.size(); ++k)
    EXPECT_NE(std::find(problem.edges.begin(), problem.edges.end(), std::pair(core[k - 1], core[k])),
              problem.edges.end())
        << problem.tasks[static_cast<size_t>(core[k])].id;
  return sum;
}

/// The fastest configuration that fits at `point`, over every integer t (the model's widths), e (its expert
/// widths), p, d, v, sequence parallelism, recomputation and ZeRO stage Megatron-LM accepts, each priced from
/// the exact schedules of the layers at (t, e); `configurations` counts those priced.
double brute_force_best(const search::SearchQuestion& q, const search::ModelCase& m, const search::PointOutcome& point,
                        const hw::Architecture& arch, search::Scheduling& scheduling, int& configurations) {
  double best = std::numeric_limits<double>::infinity();
  for (int64_t t : m.widths)
    for (int64_t e : m.expert_widths) {
      const model::LayerGraph graph = model::build_layer_graph(
          m.spec, search::layer_shape(q, m, point.micro_batch, t, e), model::Precision{}, m.source);
      const double core_s = attention_chain_s(graph, arch);
      megatron::LayerCosts plain = costs_of(graph, search::schedule_layers(graph, arch, scheduling), core_s);
      model::LayerGraph split = graph;
      split.transformer = model::sequence_parallel_layer(graph.transformer, t);
      megatron::LayerCosts sp = costs_of(graph, search::schedule_layers(split, arch, scheduling), core_s);
      for (int64_t p = 1; p <= q.devices; ++p)
        for (int64_t dp = 1; dp <= q.devices; ++dp) {
          if (t * p * dp != q.devices) continue;
          for (int64_t v = 1; v <= m.spec.num_layers; ++v)
            for (bool seq_par : {false, true})
              for (Recompute r : {Recompute::None, Recompute::Selective, Recompute::Full})
                for (int64_t zero = 0; zero <= 3; ++zero) {
                  if (zero > 0 && dp == 1) continue;  // nothing to shard: the same plan as without
                  if ((r != Recompute::None) != point.recompute) continue;
                  TrainingPlan plan;
                  plan.tp = t, plan.ep = e, plan.pp = p, plan.dp = dp, plan.vp = v;
                  plan.micro_batch = point.micro_batch, plan.global_batch = q.global_batch, plan.seq = m.seq;
                  plan.sequence_parallel = seq_par, plan.recompute = r, plan.zero = zero;
                  try {
                    megatron::validate(plan, m.spec);
                  } catch (const InputError&) {
                    continue;
                  }
                  ++configurations;
                  megatron::LayerCosts& c = seq_par ? sp : plain;
                  c.replicated_activation_bytes =
                      seq_par ? megatron::replicated_activation_bytes(m.spec, graph, plan) : 0;
                  const megatron::StepPrediction prediction =
                      megatron::predict_step(m.spec, search::accelerator_step_device(arch), q.network, plan, c);
                  if (prediction.memory.fits) best = std::min(best, prediction.time.iteration_s);
                }
        }
    }
  return best;
}

/// Every point of `q` on two designs against brute_force_best; returns the configurations priced.
int expect_brute_force_best(const search::SearchQuestion& q) {
  const search::Workload w = search::prepare_workload(q);
  search::ScheduleCache cache, brute_cache;
  search::Scheduling scheduling{cost::Estimator{{}, q.network}, schedule::make_exact_solver(), &brute_cache};
  const search::ModelCase& m = q.models[0];
  int feasible = 0, infeasible = 0, configurations = 0;
  for (const hw::Design& d : {design(1, 8), design(4, 16)}) {
    search::Evaluator evaluator(w, cache);
    const std::vector<search::PointOutcome> points = evaluator.evaluate(d, [](const std::string&) { return true; });
    EXPECT_EQ(points.size(), q.micro_batches.size() * q.hbm_bytes.size() * 2);
    for (const search::PointOutcome& point : points) {
      hw::Architecture arch = d.arch;
      arch.hbm_bytes = point.design.hbm_bytes;
      const double best = brute_force_best(q, m, point, arch, scheduling, configurations);
      const search::ModelOutcome& outcome = point.models[0];
      if (best == std::numeric_limits<double>::infinity()) {
        EXPECT_FALSE(outcome.feasible) << point.key;
        ++infeasible;
        continue;
      }
      EXPECT_TRUE(outcome.feasible) << point.key << ": " << outcome.reason;
      if (!outcome.feasible) continue;
      EXPECT_NEAR(outcome.time_per_batch_s, best, 1e-12 * best) << point.key;
      EXPECT_TRUE(std::holds_alternative<search::MegatronSettings>(outcome.settings));
      EXPECT_EQ(outcome.stages.size() * static_cast<size_t>(outcome.width * outcome.data_parallel),
                static_cast<size_t>(q.devices));
      ++feasible;
    }
  }
  EXPECT_GT(feasible, 0);
  EXPECT_GT(infeasible, 0);
  return configurations;
}

TEST(MegatronExecution, EveryPointTakesTheBruteForceBestConfiguration) {
  EXPECT_GT(expect_brute_force_best(megatron_question()), 100);
}

TEST(MegatronExecution, FusedAttentionPointsTakeTheBruteForceBestConfiguration) {
  // With the attention core one kernel, selective recomputation has no scores to drop: the layer keeps the
  // same bytes as without recomputation (checked below), and every point still takes the fastest plan.
  search::SearchQuestion q = megatron_question();
  q.fused_attention = true;
  EXPECT_GT(expect_brute_force_best(q), 100);
  const search::ModelCase& m = q.models[0];
  const model::LayerGraph graph =
      model::build_layer_graph(m.spec, search::layer_shape(q, m, 1, 1), model::Precision{}, m.source);
  megatron::LayerCosts c = megatron::graph_costs(graph);
  c.embedding = c.transformer = c.head = {{1e-3, 0, 0}, {2e-3, 0, 0}};
  TrainingPlan plan;
  plan.micro_batch = 1, plan.global_batch = q.global_batch, plan.seq = m.seq, plan.dp = q.devices;
  plan.recompute = Recompute::None;
  const hw::Architecture arch = design(1, 8).arch;
  const auto none = megatron::predict_step(m.spec, search::accelerator_step_device(arch), q.network, plan, c);
  plan.recompute = Recompute::Selective;
  const auto selective = megatron::predict_step(m.spec, search::accelerator_step_device(arch), q.network, plan, c);
  EXPECT_EQ(selective.memory.activations_bytes, none.memory.activations_bytes);
  EXPECT_GT(none.memory.activations_bytes, 0);
}

TEST(MegatronExecution, ExpertParallelPointsTakeTheBruteForceBestConfiguration) {
  // A mixture of experts (4 experts of 1,024 columns, 2 per token) on 8 devices joined by two tiers (pairs on a
  // fast link, a slow one between them), its experts over e = 1, 2 or 4 groups of t: every point's plan is
  // the fastest of every configuration, each all-to-all priced on the tier its ranks, t apart, span. Experts
  // this large make some plans spread them: their gradients, reduced over the slow link, shrink e times.
  search::SearchQuestion q = megatron_question();
  search::ModelCase& m = q.models[0];
  m.spec.experts = 4;
  m.spec.experts_per_token = 2;
  m.spec.expert_ffn = 1024;
  m.widths = {1, 2};
  m.expert_widths = {1, 2, 4};
  q.network.tiers = {hw::NetworkTier{"pair", 2, 400e9, 1e-6, 1}, hw::NetworkTier{"cluster", 0, 4e9, 5e-6, 1}};
  search::validate(q);
  EXPECT_GT(expect_brute_force_best(q), 100);
  // Some point's plan spreads the experts.
  const search::Workload w = search::prepare_workload(q);
  search::ScheduleCache cache;
  search::Evaluator evaluator(w, cache);
  bool spread = false;
  for (const search::PointOutcome& point : evaluator.evaluate(design(4, 16), [](const std::string&) { return true; }))
    if (point.models[0].feasible)
      spread = spread || std::get<search::MegatronSettings>(point.models[0].settings).expert_parallel > 1;
  EXPECT_TRUE(spread);
}

TEST(MegatronExecution, AMixtureOfExpertsIsSlowerThanItsDenseTwin) {
  // Four experts of the dense FFN's size, one per token: each token does the dense model's work, but every
  // device holds four FFNs' weights, gradients and optimizer state, routes and permutes its tokens, and
  // reduces four times the FFN gradients. At every point the mixture is slower, and it fits
  // nowhere the dense model does not.
  search::SearchQuestion dense = megatron_question();
  search::SearchQuestion moe = dense;
  model::ModelSpec& spec = moe.models[0].spec;
  spec.experts = 4;
  spec.experts_per_token = 1;
  spec.expert_ffn = spec.ffn;
  const search::Workload wd = search::prepare_workload(dense), wm = search::prepare_workload(moe);
  search::ScheduleCache cache;
  int compared = 0;
  for (const hw::Design& d : {design(1, 8), design(4, 16)}) {
    search::Evaluator ed(wd, cache), em(wm, cache);
    const auto all = [](const std::string&) { return true; };
    const std::vector<search::PointOutcome> a = ed.evaluate(d, all), b = em.evaluate(d, all);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      ASSERT_EQ(a[i].key, b[i].key);
      if (!a[i].models[0].feasible) {
        EXPECT_FALSE(b[i].models[0].feasible) << b[i].key;
        continue;
      }
      if (!b[i].models[0].feasible) continue;
      EXPECT_GT(b[i].models[0].time_per_batch_s, a[i].models[0].time_per_batch_s) << b[i].key;
      ++compared;
    }
  }
  EXPECT_GT(compared, 5);
}

TEST(MegatronExecution, OneDeviceRunsEveryPassOfEveryMicroBatchThenTheOptimizer) {
  search::SearchQuestion q = megatron_question();
  q.devices = 1;
  q.global_batch = 4;
  q.micro_batches = {1};
  q.hbm_bytes = {int64_t{1} << 30};
  q.recompute = search::RecomputeChoice::Off;
  q.models[0].widths = {1};
  const search::Workload w = search::prepare_workload(q);
  search::ScheduleCache cache;
  search::Evaluator evaluator(w, cache);
  const hw::Design d = design(2, 16);
  const std::vector<search::PointOutcome> points = evaluator.evaluate(d, [](const std::string&) { return true; });
  ASSERT_EQ(points.size(), 1u);
  const search::ModelOutcome& m = points[0].models[0];
  ASSERT_TRUE(m.feasible) << m.reason;

  const search::ModelCase& mc = q.models[0];
  const model::LayerGraph graph = model::build_layer_graph(mc.spec, model::Shape{mc.seq, 1, 1}, {}, mc.source);
  search::Scheduling scheduling{cost::Estimator{}, schedule::make_exact_solver(), &cache};
  hw::Architecture arch = d.arch;
  arch.hbm_bytes = q.hbm_bytes[0];
  const search::LayerSchedules s = search::schedule_layers(graph, arch, scheduling);
  double passes = 0;
  for (int64_t i = 0; i < graph.size(); ++i)
    passes += s.node(graph, i).forward.makespan_s + s.node(graph, i).backward.makespan_s;
  // Adam's fused step moves 32 bytes per parameter; the tied head holds no parameters of its own.
  const double parameters = static_cast<double>(graph.embedding.parameters + 4 * graph.transformer.parameters +
                                                graph.head.parameters - graph.head.tied_copy_parameters);
  const double optimizer_s = parameters * 32 / arch.hbm_bandwidth;
  EXPECT_NEAR(m.time_per_batch_s, 4 * passes + optimizer_s, 1e-12 * m.time_per_batch_s);
  EXPECT_NEAR(m.parts.optimizer_step, optimizer_s, 1e-12 * optimizer_s);
  EXPECT_EQ(m.parts.fill_drain, 0);
  EXPECT_EQ(m.parts.data_parallel_sync, 0);
  EXPECT_EQ(m.stages.size(), 1u);
  // Model FLOP utilisation from the GEMM FLOPs of 4 micro-batches over the chip's peak. A causal model needs
  // half of the attention core's products: of Q·Kᵀ and P·V forward (2 · 2 s² h) and their four gradients
  // backward (4 · 2 s² h), per layer, at micro-batch 1 and t = 1.
  ASSERT_TRUE(mc.spec.causal());
  const double s2h = static_cast<double>(mc.seq) * static_cast<double>(mc.seq) * static_cast<double>(mc.spec.hidden);
  const double flops = 4.0 * (static_cast<double>(graph.forward_flops() + graph.backward_flops()) - 4 * (12 * s2h / 2));
  EXPECT_NEAR(m.flops_utilisation, flops / (2 * hw::peak_tensor_macs_per_s(arch) * m.time_per_batch_s), 1e-12);
}

TEST(MegatronExecution, HandSetPlansLieInTheSearchedSpace) {
  // A hand-set plan (v = 1, no sequence parallelism, full recomputation when on, no distributed optimizer)
  // is one of the configurations every point tries: it is never faster than the point's plan, and a p that
  // does not divide the layers is refused with Megatron-LM's reason.
  const search::SearchQuestion q = megatron_question();
  const search::Workload w = search::prepare_workload(q);
  search::ScheduleCache cache;
  search::Evaluator evaluator(w, cache);
  search::Scheduling scheduling{cost::Estimator{}, schedule::make_exact_solver(), &cache};
  const hw::Design d = design(4, 16);
  int compared = 0;
  for (const search::PointOutcome& point : evaluator.evaluate(d, [](const std::string&) { return true; })) {
    hw::Architecture arch = d.arch;
    arch.hbm_bytes = point.design.hbm_bytes;
    for (const placement::HandSetPlan plan :
         {placement::HandSetPlan{2, 2, 2}, placement::HandSetPlan{1, 4, 2}, placement::HandSetPlan{4, 1, 2}}) {
      const search::HandSetOutcome h =
          search::evaluate_hand_set_plan(q, 0, plan, arch, point.micro_batch, point.recompute, scheduling);
      if (!h.feasible) continue;
      ASSERT_TRUE(point.models[0].feasible) << point.key;
      EXPECT_LE(h.samples_per_s, point.models[0].samples_per_s * (1 + 1e-12)) << point.key;
      ++compared;
    }
  }
  EXPECT_GT(compared, 5);
  const search::HandSetOutcome odd =
      search::evaluate_hand_set_plan(q, 0, placement::HandSetPlan{3, 1, 2}, d.arch, 1, true, scheduling);
  EXPECT_FALSE(odd.feasible);
  EXPECT_NE(odd.reason.find("Megatron-LM cannot run it"), std::string::npos) << odd.reason;
}

TEST(MegatronExecution, RecordKeepsTheSettings) {
  search::PointOutcome p;
  p.key = "k";
  p.design = hw::tpuv4_like();
  p.feasible = true;
  search::ModelOutcome m;
  m.feasible = true;
  m.width = 2;
  m.data_parallel = 4;
  m.stages = {{0, 3, 2}, {3, 6, 2}};
  m.time_per_batch_s = 1.25;
  m.settings = search::MegatronSettings{2, true, Recompute::Selective, 3, 3.5e9};
  p.models = {m};
  nlohmann::json text = nlohmann::json::parse(search::to_record(p).dump());
  EXPECT_EQ(search::from_record(p.key, text).models, p.models);
  // Expert parallelism is kept where there is some.
  m.settings = search::MegatronSettings{2, true, Recompute::Selective, 3, 3.5e9, 4};
  search::PointOutcome experts = p;
  experts.models = {m};
  EXPECT_EQ(search::from_record(p.key, nlohmann::json::parse(search::to_record(experts).dump())).models,
            experts.models);
  // A record written before ZeRO 2 and 3 holds whether the optimizer was distributed: ZeRO 1 or 0.
  text["models"][0]["megatron"][3] = true;
  EXPECT_EQ(std::get<search::MegatronSettings>(search::from_record(p.key, text).models[0].settings).zero, 1);
  m.settings = search::UniformSettings{};
  p.models = {m};
  EXPECT_FALSE(search::to_record(p).at("models").at(0).contains("megatron"));
}

TEST(SequenceParallelLayer, SplitsOnlyTheOperatorsEveryRankRepeats) {
  const model::ModelSpec spec = model::megatron_gpt("gpt", "test GPT", 2, 256, 8, 128);
  const model::Shape one{128, 2, 1}, four{128, 2, 4};
  const model::Layer whole = model::build_transformer_layer(spec, one, {});
  const model::Layer split4 = model::build_transformer_layer(spec, four, {});
  const model::Layer sp = model::sequence_parallel_layer(split4, 4);
  int outside = 0;
  for (auto [a, b, full] : {std::tuple(&split4.forward, &sp.forward, &whole.forward),
                            std::tuple(&split4.backward, &sp.backward, &whole.backward)}) {
    ASSERT_EQ(a->ops.size(), b->ops.size());
    for (size_t i = 0; i < a->ops.size(); ++i) {
      const model::Operator &before = a->ops[i], &after = b->ops[i];
      if (before.engine == model::Engine::Vector && model::outside_tensor_parallel_region(before.id)) {
        // Without sequence parallelism each rank repeats the operator on the whole sequence: the t = 1 work.
        const int k = full->find(before.id);
        ASSERT_GE(k, 0) << before.id;
        EXPECT_EQ(before.read_bytes, full->ops[static_cast<size_t>(k)].read_bytes) << before.id;
        EXPECT_EQ(after.read_bytes, before.read_bytes / 4) << before.id;
        EXPECT_EQ(after.write_bytes, before.write_bytes / 4) << before.id;
        for (size_t j = 0; j < after.passes.size(); ++j)
          EXPECT_EQ(after.passes[j].elements, before.passes[j].elements / 4) << before.id;
        ++outside;
      } else {
        EXPECT_EQ(after.read_bytes, before.read_bytes) << before.id;
        EXPECT_EQ(after.passes, before.passes) << before.id;
        EXPECT_EQ(after.collective, before.collective) << before.id;
      }
    }
  }
  EXPECT_GE(outside, 6);  // two norms and two residual adds forward, and their backward passes
  EXPECT_EQ(model::sequence_parallel_layer(whole, 1).forward.ops[0].read_bytes, whole.forward.ops[0].read_bytes);
}

}  // namespace
