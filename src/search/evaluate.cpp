#include "search/evaluate.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <mutex>
#include <optional>
#include <tuple>

#include "placement/plan_check.h"
#include "search/pricer.h"

namespace phaze::search {

namespace {

/// Busy tensor- and vector-core seconds over the span of the layer passes added so far.
struct Utilisation {
  double busy_tc = 0, busy_vc = 0, span = 0;
  void add(const PassSummary& pass) {
    busy_tc += pass.tensor_utilisation * pass.makespan_s;
    busy_vc += pass.vector_utilisation * pass.makespan_s;
    span += pass.makespan_s;
  }
  double tensor() const { return span > 0 ? busy_tc / span : 0; }
  double vector() const { return span > 0 ? busy_vc / span : 0; }
};

}  // namespace

Workload prepare_workload(const SearchQuestion& q) {
  Workload w;
  w.question = &q;
  for (const ModelCase& m : q.models) {
    auto& per_model = w.graphs.emplace_back();
    for (int64_t b : q.micro_batches) {
      auto& per_mbs = per_model.emplace_back();
      for (int64_t t : m.widths)
        for (int64_t e : m.expert_widths)
          per_mbs.push_back(model::build_layer_graph(m.spec, layer_shape(q, m, b, t, e), model::Precision{}, m.source));
    }
  }

  // Which points have a plan that fits in memory: the pricer's own rule, whatever the design.
  w.fits_hbm_bytes = q.hbm_bytes;
  make_pricer(q)->find_fitting(w);
  return w;
}

bool Workload::fits_in_memory(size_t model, size_t micro_batch_index, int64_t hbm_bytes, bool recompute) const {
  const auto hbm =
      static_cast<size_t>(std::find(fits_hbm_bytes.begin(), fits_hbm_bytes.end(), hbm_bytes) - fits_hbm_bytes.begin());
  if (hbm == fits_hbm_bytes.size()) return true;  // e.g. a baseline's own HBM size
  return fits[model][micro_batch_index][hbm][recompute ? 1 : 0];
}

placement::Chain make_chain(const model::LayerGraph& graph, const LayerSchedules& schedules) {
  placement::Chain chain;
  chain.width = graph.shape.tp;
  const int64_t n = graph.size();
  for (int64_t i = 0; i < n; ++i) {
    const model::Layer& layer = graph.node(i);
    const LayerSchedules::Passes& p = schedules.node(graph, i);
    chain.nodes.push_back({p.forward.makespan_s, p.backward.makespan_s, static_cast<double>(layer.parameter_bytes),
                           static_cast<double>(layer.activation_bytes), layer.tensor_parallel});
    if (i + 1 < n) chain.edges.push_back({static_cast<int>(i), static_cast<int>(i + 1), double(graph.edge_bytes(i))});
  }
  return chain;
}

double optimizer_seconds_per_byte(placement::Optimizer optimizer, double hbm_bandwidth) {
  return placement::step_bytes_per_parameter_byte(optimizer) / hbm_bandwidth;
}

placement::Cluster make_cluster(const SearchQuestion& q, const hw::Architecture& design, int64_t micro_batch,
                                int64_t hbm_bytes, bool recompute) {
  placement::Cluster c;
  c.devices = q.devices;
  c.memory_bytes = static_cast<double>(hbm_bytes);
  placement::use_network(c, devices_network(q));
  c.micro_batches = q.global_batch / micro_batch;
  c.recompute = recompute;
  c.optimizer = q.optimizer;
  c.corrected.enabled = true;
  c.corrected.optimizer_seconds_per_byte = optimizer_seconds_per_byte(q.optimizer, design.hbm_bandwidth);
  return c;
}

double uniform_batch_energy_j(const model::LayerGraph& graph, const LayerSchedules& schedules, int64_t micro_batches,
                              int64_t recompute_before) {
  double energy_j = 0;
  for (int64_t i = 0; i < graph.size(); ++i) {
    const LayerSchedules::Passes& p = schedules.node(graph, i);
    energy_j += p.forward.energy_j + p.backward.energy_j;
    if (i < recompute_before) energy_j += p.forward.energy_j;
  }
  return energy_j * (static_cast<double>(micro_batches) * static_cast<double>(graph.shape.tp));
}

double stagewise_batch_energy_bound_j(const std::vector<model::LayerGraph>& graphs,
                                      const std::vector<std::optional<LayerSchedules>>& schedules,
                                      int64_t micro_batches) {
  if (graphs.empty()) return 0;
  double energy_j = 0;
  for (int64_t v = 0; v < graphs.front().size(); ++v) {
    double least = std::numeric_limits<double>::infinity();
    for (size_t wi = 0; wi < graphs.size(); ++wi) {
      if (!schedules[wi]) continue;
      const LayerSchedules::Passes& p = schedules[wi]->node(graphs[wi], v);
      least = std::min(least, static_cast<double>(graphs[wi].shape.tp) * (p.forward.energy_j + p.backward.energy_j));
    }
    if (least == std::numeric_limits<double>::infinity()) return 0;  // no usable width
    energy_j += least;
  }
  return energy_j * static_cast<double>(micro_batches) * (1 - 1e-9);
}

ModelOutcome model_outcome(const model::LayerGraph& graph, const LayerSchedules& schedules, const placement::Plan& plan,
                           const placement::Cluster& cluster, const hw::Architecture& design, int64_t global_batch) {
  ModelOutcome m;
  m.feasible = true;
  m.width = plan.width;
  m.data_parallel = plan.data_parallel;
  m.stages = plan.stages;
  m.time_per_batch_s = plan.time_per_batch;
  m.parts = plan.parts;
  m.samples_per_s = static_cast<double>(global_batch) / plan.time_per_batch;
  m.tokens_per_s = m.samples_per_s * static_cast<double>(graph.shape.seq);
  m.schedules_proven = schedules.proven();
  for (const LayerSchedules::Passes& p : schedules.layers)
    m.layers.push_back({p.forward.makespan_s, p.backward.makespan_s, p.forward.energy_j, p.backward.energy_j});
  m.stage_memory_bytes = placement::stage_peak_bytes(make_chain(graph, schedules), plan.stages, cluster);

  // With recomputation the layers outside the last stage run their forward pass again (the last stage keeps
  // its activations, placement.md).
  const int last_stage_first = plan.stages.empty() ? 0 : plan.stages.back().first;
  m.energy_per_batch_j =
      uniform_batch_energy_j(graph, schedules, cluster.micro_batches, cluster.recompute ? last_stage_first : 0);
  Utilisation use;
  for (int64_t i = 0; i < graph.size(); ++i) {
    const LayerSchedules::Passes& p = schedules.node(graph, i);
    use.add(p.forward);
    use.add(p.backward);
  }
  const double ranks_work = static_cast<double>(cluster.micro_batches) * static_cast<double>(graph.shape.tp);
  m.tensor_utilisation = use.tensor();
  m.vector_utilisation = use.vector();

  int64_t devices_per_replica = 0;
  for (const placement::Stage& s : plan.stages) devices_per_replica += s.devices;
  const double devices_used = static_cast<double>(plan.data_parallel * devices_per_replica);
  const double flops = ranks_work * static_cast<double>(graph.forward_flops() + graph.backward_flops());
  const double peak_flops = 2.0 * hw::peak_tensor_macs_per_s(design) * devices_used;
  m.flops_utilisation = peak_flops > 0 ? flops / (peak_flops * plan.time_per_batch) : 0;
  return m;
}

ModelOutcome stagewise_outcome(const std::vector<model::LayerGraph>& graphs,
                               const std::vector<std::optional<LayerSchedules>>& schedules,
                               const std::vector<size_t>& chain_width, const placement::StagewisePlan& plan,
                               const placement::Cluster& cluster, const hw::Architecture& design,
                               int64_t global_batch) {
  ModelOutcome m;
  m.feasible = true;
  m.time_per_batch_s = plan.time_per_batch;
  m.parts = plan.parts;
  m.samples_per_s = static_cast<double>(global_batch) / plan.time_per_batch;
  m.tokens_per_s = m.samples_per_s * static_cast<double>(graphs.front().shape.seq);
  size_t widest = chain_width[plan.stages.front().chain];
  // Per stage, every micro-batch of the batch passes its layers once on each of its t ranks (the d replicas
  // share the micro-batches), with the re-forward of its recomputed layers.
  double energy_j = 0, flops = 0;
  Utilisation use;
  StagewiseSettings stagewise;
  for (const placement::StagewiseStage& s : plan.stages) {
    const size_t wi = chain_width[s.chain];
    const model::LayerGraph& graph = graphs[wi];
    const LayerSchedules& sched = *schedules[wi];
    m.stages.push_back({s.first, s.last, s.devices});
    m.stage_memory_bytes.push_back(s.memory_bytes);
    stagewise.stages.push_back({s.width, s.data_parallel, s.recomputed});
    m.width = std::max(m.width, s.width);
    m.data_parallel = std::max(m.data_parallel, s.data_parallel);
    if (s.width >= graphs[widest].shape.tp) widest = wi;
    m.schedules_proven = m.schedules_proven && sched.proven();
    const double ranks = static_cast<double>(s.width);
    size_t r = 0;
    for (int v = s.first; v < s.last; ++v) {
      const LayerSchedules::Passes& p = sched.node(graph, v);
      double e = p.forward.energy_j + p.backward.energy_j;
      if (r < s.recomputed.size() && s.recomputed[r] == v) {
        e += p.forward.energy_j;
        ++r;
      }
      energy_j += e * ranks;
      use.add(p.forward);
      use.add(p.backward);
      const model::Layer& layer = graph.node(v);
      flops += ranks * static_cast<double>(layer.forward_flops() + layer.backward_flops());
    }
  }
  const double micro_batches = static_cast<double>(cluster.micro_batches);
  m.energy_per_batch_j = energy_j * micro_batches;
  m.tensor_utilisation = use.tensor();
  m.vector_utilisation = use.vector();
  for (const LayerSchedules::Passes& p : schedules[widest]->layers)
    m.layers.push_back({p.forward.makespan_s, p.backward.makespan_s, p.forward.energy_j, p.backward.energy_j});
  const double peak_flops = 2.0 * hw::peak_tensor_macs_per_s(design) * static_cast<double>(plan.devices());
  m.flops_utilisation = peak_flops > 0 ? flops * micro_batches / (peak_flops * plan.time_per_batch) : 0;
  m.settings = std::move(stagewise);
  return m;
}

Evaluator::Evaluator(const Workload& workload, ScheduleCache& cache)
    : workload_(workload),
      scheduling_(make_scheduling(*workload.question, cache)),
      pricer_(make_pricer(*workload.question)) {}

Evaluator::~Evaluator() = default;

int64_t Evaluator::unproven_passes() const {
  return pricer_->unproven_passes();
}

std::vector<PointOutcome> Evaluator::evaluate(const hw::Design& design,
                                              const std::function<bool(const std::string&)>& wanted,
                                              const LeaveOutTest& leave_out, std::vector<LeftOutPoint>* left_out) {
  // The estimator's GEMM estimates grow with every core configuration met: they are forgotten every so many
  // designs, but only where the tensor cores change, since designs with the same ones share their estimates.
  const auto array = std::tuple(design.arch.tc_width, design.arch.tc_depth, design.arch.num_tc);
  if (designs_since_reset_ >= kDesignsPerEstimator && array != last_array_) {
    scheduling_.estimator.forget_estimates();
    designs_since_reset_ = 0;
  }
  ++designs_since_reset_;
  last_array_ = array;
  return pricer_->price_points(workload_, scheduling_, design, wanted, pricer_->bounds_points() ? leave_out : nullptr,
                               left_out);
}

}  // namespace phaze::search
