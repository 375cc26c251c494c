#include "search/megatron_execution.h"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>
#include <utility>

#include "megatron/plan_space.h"
#include "model/operator_roles.h"
#include "search/baselines.h"

namespace phaze::search {

namespace {

using megatron::for_each_megatron_plan;
using megatron::LayerTime;
using megatron::PassTime;
using megatron::PlanSpace;
using megatron::Recompute;
using megatron::TrainingPlan;

/// The plan space of one model at one micro-batch under the question.
PlanSpace plan_space(const SearchQuestion& q, const ModelCase& m, int64_t micro_batch, bool recompute) {
  PlanSpace space;
  space.devices = q.devices;
  space.global_batch = q.global_batch;
  space.seq = m.seq;
  space.widths = m.widths;
  space.micro_batches = {micro_batch};
  space.recomputes = megatron_recomputes(recompute);
  space.features.overlap_dp = q.overlap_dp;
  space.zero_stages = kMegatronZeroStages;
  space.expert_widths = m.expert_widths;
  space.expert_tensor_widths = {0};  // each expert's columns over the attention's t
  return space;
}

/// The scheduling problem of `problem`'s tasks that `keep` selects, with the edges among them.
schedule::Problem sub_problem(const schedule::Problem& problem, const std::vector<char>& keep) {
  schedule::Problem out = problem;
  out.tasks.clear();
  out.edges.clear();
  std::vector<int> index(problem.tasks.size(), -1);
  for (size_t i = 0; i < problem.tasks.size(); ++i)
    if (keep[i]) {
      index[i] = static_cast<int>(out.tasks.size());
      out.tasks.push_back(problem.tasks[i]);
    }
  for (const auto& [from, to] : problem.edges)
    if (index[static_cast<size_t>(from)] >= 0 && index[static_cast<size_t>(to)] >= 0)
      out.edges.emplace_back(index[static_cast<size_t>(from)], index[static_cast<size_t>(to)]);
  return out;
}

PassTime pass_time(const PassSummary& s, double attention_core_s = 0) {
  return PassTime{s.makespan_s, 0, attention_core_s};
}

/// Layer costs from the schedules of `graph`'s distinct layers (chain node 0 the embedding, then the
/// transformer layers, dense first ones where the model has them, the last the head).
megatron::LayerCosts costs_from(const model::LayerGraph& graph, const LayerSchedules& s, double attention_core_s) {
  megatron::LayerCosts c = megatron::graph_costs(graph);
  const LayerSchedules::Passes& emb = s.node(graph, 0);
  const LayerSchedules::Passes& layer = s.node(graph, graph.first_main_node());
  const LayerSchedules::Passes& head = s.node(graph, graph.size() - 1);
  c.embedding = LayerTime{pass_time(emb.forward), pass_time(emb.backward)};
  c.transformer = LayerTime{pass_time(layer.forward, attention_core_s), pass_time(layer.backward)};
  c.head = LayerTime{pass_time(head.forward), pass_time(head.backward)};
  if (graph.dense_layers() > 0) {
    // The dense layers' attention is the expert layers' own.
    const LayerSchedules::Passes& dense = s.node(graph, 1);
    c.dense_transformer = LayerTime{pass_time(dense.forward, attention_core_s), pass_time(dense.backward)};
  }
  return c;
}

/// The forward problem of the (expert, where the model has dense first layers) transformer layer among
/// layer_problems(graph, ...).
size_t transformer_forward(const model::LayerGraph& graph) {
  return 2 * graph.distinct_index(graph.first_main_node());
}

/// Per micro-batch and rank, the figures of every pass the plan runs: the layers' forward and backward passes
/// and the recomputed forward work (every stage recomputes under Megatron-LM).
struct PassTotals {
  double energy_j = 0, busy_tc = 0, busy_vc = 0, span = 0;
  void add(const PassSummary& s, double times = 1) {
    energy_j += times * s.energy_j;
    busy_tc += times * s.tensor_utilisation * s.makespan_s;
    busy_vc += times * s.vector_utilisation * s.makespan_s;
    span += times * s.makespan_s;
  }
};

}  // namespace

megatron::StepDevice accelerator_step_device(const hw::Architecture& design) {
  return megatron::StepDevice{design.hbm_bytes, 2.0 * hw::peak_tensor_macs_per_s(design), design.hbm_bandwidth, 0};
}

placement::BatchTimeParts megatron_parts(const megatron::StepTime& time) {
  placement::BatchTimeParts parts;
  parts.steady_state =
      time.forward_s + time.backward_s + time.recompute_s + time.tp_comm_s + time.ep_comm_s + time.pp_comm_s;
  parts.fill_drain = time.bubble_s;
  parts.data_parallel_sync = time.dp_comm_s;
  parts.optimizer_step = time.optimizer_s;
  return parts;
}

std::vector<Recompute> megatron_recomputes(bool recompute) {
  if (!recompute) return {Recompute::None};
  return {Recompute::Selective, Recompute::Full};
}

std::vector<TrainingPlan> fitting_megatron_plans(const SearchQuestion& q, const ModelCase& m,
                                                 const std::vector<model::LayerGraph>& graphs, int64_t hbm_bytes,
                                                 bool recompute) {
  std::vector<TrainingPlan> out;
  if (graphs.empty()) return out;
  // Memory depends on the layers' bytes alone: any finite times give the same answer.
  hw::Architecture base = enumeration_options(q).base;
  base.hbm_bytes = hbm_bytes;
  const megatron::StepDevice device = accelerator_step_device(base);
  std::vector<megatron::LayerCosts> unit(graphs.size());
  for (size_t i = 0; i < graphs.size(); ++i) {
    unit[i].graph = graphs[i];
    for (LayerTime* l : {&unit[i].embedding, &unit[i].transformer, &unit[i].head, &unit[i].dense_transformer})
      *l = {{1, 0, 0}, {1, 0, 0}};
  }
  // The bytes sequence parallelism leaves whole, per width: the expert (or only) layer's and a dense one's.
  std::vector<std::optional<std::pair<double, double>>> replicated(graphs.size());
  const int64_t micro_batch = graphs.front().shape.micro_batch;
  for_each_megatron_plan(m.spec, plan_space(q, m, micro_batch, recompute), [&](const TrainingPlan& plan) {
    const size_t wi = m.layout_index(plan.tp, plan.ep);
    megatron::LayerCosts& c = unit[wi];
    c.replicated_activation_bytes = 0;
    c.dense_replicated_activation_bytes = 0;
    if (plan.sequence_parallel) {
      if (!replicated[wi]) {
        megatron::set_replicated_activation_bytes(c, m.spec, plan);
        replicated[wi] = std::make_pair(c.replicated_activation_bytes, c.dense_replicated_activation_bytes);
      }
      std::tie(c.replicated_activation_bytes, c.dense_replicated_activation_bytes) = *replicated[wi];
    }
    if (megatron::predict_step(m.spec, device, q.network, plan, c).memory.fits) out.push_back(plan);
  });
  return out;
}

std::optional<MegatronWidth> megatron_width(const model::LayerGraph& graph, const hw::Architecture& design,
                                            Scheduling& scheduling) {
  const std::vector<schedule::Problem> problems = layer_problems(graph, design, scheduling.estimator);
  if (!all_finite(problems)) return std::nullopt;
  MegatronWidth w;
  w.schedules = solve_layers(problems, scheduling);

  const schedule::Problem& forward = problems[transformer_forward(graph)];
  std::vector<char> core(forward.tasks.size(), 0);
  for (size_t i = 0; i < forward.tasks.size(); ++i) core[i] = model::in_attention_core(forward.tasks[i].id) ? 1 : 0;
  w.attention_core = scheduling.cache->solve(sub_problem(forward, core), *scheduling.solver);
  w.costs = costs_from(graph, w.schedules, w.attention_core.makespan_s);

  const int64_t t = graph.shape.tp;
  // GSPMD's sharding (a graph whose key/value heads may be replicated: an accelerator system's plans) may split
  // the activations along the hidden size where the sequence does not divide.
  const bool splits = graph.shape.seq % t == 0 || (graph.shape.replicate_kv_heads && graph.spec.hidden % t == 0);
  if (t > 1 && splits) {
    model::LayerGraph split = graph;
    split.transformer = model::sequence_parallel_layer(graph.transformer, t);
    split.dense_transformer = model::sequence_parallel_layer(graph.dense_transformer, t);
    const std::vector<schedule::Problem> split_problems = layer_problems(split, design, scheduling.estimator);
    if (all_finite(split_problems)) {
      w.sequence_parallel_schedules = solve_layers(split_problems, scheduling);
      megatron::LayerCosts c = costs_from(graph, *w.sequence_parallel_schedules, w.attention_core.makespan_s);
      TrainingPlan plan;
      plan.tp = t;
      plan.ep = graph.shape.ep;
      plan.micro_batch = graph.shape.micro_batch;
      plan.seq = graph.shape.seq;
      plan.sequence_parallel = true;
      plan.gspmd_sharding = graph.shape.replicate_kv_heads;
      megatron::set_replicated_activation_bytes(c, graph.spec, plan);
      w.sequence_parallel_costs = std::move(c);
    }
  }
  return w;
}

ModelOutcome megatron_outcome(const SearchQuestion& q, const ModelCase& m,
                              const std::vector<std::optional<MegatronWidth>>& widths,
                              const std::vector<TrainingPlan>& fitting, const hw::Architecture& design) {
  const megatron::StepDevice device = accelerator_step_device(design);
  std::optional<megatron::StepPrediction> best;
  const MegatronWidth* best_width = nullptr;
  for (const TrainingPlan& plan : fitting) {
    const std::optional<MegatronWidth>& w = widths[m.layout_index(plan.tp, plan.ep)];
    if (!w || (plan.sequence_parallel && !w->sequence_parallel_costs)) continue;
    megatron::StepPrediction p = megatron::predict_step(
        m.spec, device, q.network, plan, plan.sequence_parallel ? *w->sequence_parallel_costs : w->costs);
    if (!best || p.time.iteration_s < best->time.iteration_s) {
      best = std::move(p);
      best_width = &*w;
    }
  }
  ModelOutcome out;
  if (!best) {
    out.reason = fitting.empty() ? fmt::format("no Megatron-LM configuration fits in {} GiB of HBM on {} devices",
                                               static_cast<double>(design.hbm_bytes) / kGiB, q.devices)
                                 : "an operator has no finite estimate on this design at every width that fits";
    return out;
  }
  const TrainingPlan& plan = best->plan;
  const megatron::StepTime& time = best->time;
  const LayerSchedules& schedules =
      plan.sequence_parallel ? *best_width->sequence_parallel_schedules : best_width->schedules;
  const model::LayerGraph& graph = best_width->costs.graph;

  out.feasible = true;
  out.width = plan.tp;
  out.data_parallel = plan.dp;
  out.stages = placement::hand_set_stages(m.spec.num_layers, placement::HandSetPlan{plan.pp, plan.tp, plan.dp});
  out.time_per_batch_s = time.iteration_s;
  out.parts = megatron_parts(time);
  out.samples_per_s = static_cast<double>(q.global_batch) / time.iteration_s;
  out.tokens_per_s = best->tokens_per_s;
  out.schedules_proven = schedules.proven() && best_width->attention_core.proven_optimal;
  for (const LayerSchedules::Passes& p : schedules.layers)
    out.layers.push_back({p.forward.makespan_s, p.backward.makespan_s, p.forward.energy_j, p.backward.energy_j});

  PassTotals totals;
  for (int64_t i = 0; i < graph.size(); ++i) {
    const LayerSchedules::Passes& p = schedules.node(graph, i);
    totals.add(p.forward);
    totals.add(p.backward);
  }
  const auto layers = static_cast<double>(m.spec.num_layers);
  if (plan.recompute == Recompute::Full) totals.add(schedules.node(graph, 1).forward, layers);
  if (plan.recompute == Recompute::Selective) totals.add(best_width->attention_core, layers);
  const double ranks_work = static_cast<double>(q.global_batch / plan.micro_batch) * static_cast<double>(plan.tp);
  out.energy_per_batch_j = totals.energy_j * ranks_work;
  out.tensor_utilisation = totals.span > 0 ? totals.busy_tc / totals.span : 0;
  out.vector_utilisation = totals.span > 0 ? totals.busy_vc / totals.span : 0;
  out.flops_utilisation = best->mfu;
  out.settings =
      MegatronSettings{plan.vp, plan.sequence_parallel, plan.recompute, plan.zero, best->memory.peak_bytes, plan.ep};
  return out;
}

}  // namespace phaze::search
