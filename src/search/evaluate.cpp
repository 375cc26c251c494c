#include "search/evaluate.h"

#include <fmt/format.h>

#include <algorithm>

#include "schedule/layer_problem.h"

namespace phaze::search {

namespace {

LayerSchedules::Passes schedule_layer(const model::Layer& layer, const hw::Architecture& design,
                                      cost::Estimator& estimator, schedule::Solver& solver, ScheduleCache& cache) {
  return {cache.solve(schedule::layer_problem(layer.forward, design, estimator), solver),
          cache.solve(schedule::layer_problem(layer.backward, design, estimator), solver)};
}

}  // namespace

Workload prepare_workload(const SearchQuestion& q) {
  Workload w;
  w.question = &q;
  for (const ModelCase& m : q.models) {
    auto& per_model = w.graphs.emplace_back();
    for (int64_t b : q.micro_batches) {
      auto& per_mbs = per_model.emplace_back();
      for (int64_t t : m.widths)
        per_mbs.push_back(model::build_layer_graph(m.spec, model::Shape{m.seq, b, t}, model::Precision{}, m.source));
    }
  }

  // Which points have a plan that fits in memory: the exact planner on chains of one-second layers. Feasibility
  // is the existence of a plan within the memory limit and the devices, whatever the latencies, so any finite
  // latencies give the answer of every design.
  LayerSchedules unit;
  for (LayerSchedules::Passes& p : unit.layers)
    for (PassSummary* s : {&p.forward, &p.backward}) *s = {true, 1.0, 0, 0, 0, true, 1.0};
  const hw::Architecture base = enumeration_options(q).base;
  placement::Planner planner;
  w.fits_hbm_bytes = q.hbm_bytes;
  for (size_t mi = 0; mi < q.models.size(); ++mi) {
    auto& per_model = w.fits.emplace_back();
    for (size_t bi = 0; bi < q.micro_batches.size(); ++bi) {
      std::vector<placement::Chain> chains;
      for (const model::LayerGraph& graph : w.graphs[mi][bi]) chains.push_back(make_chain(graph, unit));
      auto& per_mbs = per_model.emplace_back();
      for (int64_t hbm : q.hbm_bytes) {
        std::array<bool, 2>& fits = per_mbs.emplace_back();
        for (bool rc : {false, true})
          fits[rc ? 1 : 0] = planner.solve(chains, make_cluster(q, base, q.micro_batches[bi], hbm, rc, 0)).feasible;
      }
    }
  }
  return w;
}

bool Workload::fits_in_memory(size_t model, size_t micro_batch_index, int64_t hbm_bytes, bool recompute) const {
  const auto hbm =
      static_cast<size_t>(std::find(fits_hbm_bytes.begin(), fits_hbm_bytes.end(), hbm_bytes) - fits_hbm_bytes.begin());
  if (hbm == fits_hbm_bytes.size()) return true;  // e.g. a baseline's own HBM size
  return fits[model][micro_batch_index][hbm][recompute ? 1 : 0];
}

bool LayerSchedules::feasible() const {
  return std::all_of(layers.begin(), layers.end(),
                     [](const Passes& p) { return p.forward.feasible && p.backward.feasible; });
}

bool LayerSchedules::proven() const {
  return std::all_of(layers.begin(), layers.end(),
                     [](const Passes& p) { return p.forward.proven_optimal && p.backward.proven_optimal; });
}

const LayerSchedules::Passes& LayerSchedules::node(int64_t index, int64_t size) const {
  return index == 0 ? layers[0] : index == size - 1 ? layers[2] : layers[1];
}

LayerSchedules schedule_layers(const model::LayerGraph& graph, const hw::Architecture& design,
                               cost::Estimator& estimator, schedule::Solver& solver, ScheduleCache& cache) {
  LayerSchedules s;
  s.layers[0] = schedule_layer(graph.embedding, design, estimator, solver, cache);
  s.layers[1] = schedule_layer(graph.transformer, design, estimator, solver, cache);
  s.layers[2] = schedule_layer(graph.head, design, estimator, solver, cache);
  return s;
}

placement::Chain make_chain(const model::LayerGraph& graph, const LayerSchedules& schedules) {
  placement::Chain chain;
  chain.width = graph.shape.tp;
  const int64_t n = graph.size();
  for (int64_t i = 0; i < n; ++i) {
    const model::Layer& layer = graph.node(i);
    const LayerSchedules::Passes& p = schedules.node(i, n);
    chain.nodes.push_back({p.forward.makespan_s, p.backward.makespan_s, static_cast<double>(layer.parameter_bytes),
                           static_cast<double>(layer.activation_bytes), layer.tensor_parallel});
    if (i + 1 < n) chain.edges.push_back({static_cast<int>(i), static_cast<int>(i + 1), double(graph.edge_bytes(i))});
  }
  return chain;
}

double optimizer_seconds_per_byte(placement::Optimizer optimizer, double hbm_bandwidth) {
  const double bytes_moved = optimizer == placement::Optimizer::Adam ? 5.0 : 3.0;
  return bytes_moved / hbm_bandwidth;
}

placement::Cluster make_cluster(const SearchQuestion& q, const hw::Architecture& design, int64_t micro_batch,
                                int64_t hbm_bytes, bool recompute, double ring_latency_s) {
  placement::Cluster c;
  c.devices = q.devices;
  c.memory_bytes = static_cast<double>(hbm_bytes);
  c.bandwidth = q.link_bandwidth;
  c.micro_batches = q.global_batch / micro_batch;
  c.recompute = recompute;
  c.optimizer = q.optimizer;
  c.corrected.enabled = true;
  c.corrected.ring_latency_s = ring_latency_s;
  c.corrected.sync_bandwidth = q.link_bandwidth;
  c.corrected.optimizer_seconds_per_byte = optimizer_seconds_per_byte(q.optimizer, design.hbm_bandwidth);
  return c;
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
  for (size_t k = 0; k < 3; ++k) {
    const LayerSchedules::Passes& p = schedules.layers[k];
    m.layers[k] = {p.forward.makespan_s, p.backward.makespan_s, p.forward.energy_j, p.backward.energy_j};
  }

  // Per micro-batch and rank: every layer's forward and backward, plus the re-forward of the layers outside
  // the last stage with recomputation (the last stage keeps its activations, placement.md).
  const int64_t n = graph.size();
  const int last_stage_first = plan.stages.empty() ? 0 : plan.stages.back().first;
  double energy_j = 0, busy_tc = 0, busy_vc = 0, span = 0;
  for (int64_t i = 0; i < n; ++i) {
    const LayerSchedules::Passes& p = schedules.node(i, n);
    energy_j += p.forward.energy_j + p.backward.energy_j;
    if (cluster.recompute && i < last_stage_first) energy_j += p.forward.energy_j;
    for (const PassSummary* s : {&p.forward, &p.backward}) {
      busy_tc += s->tensor_utilisation * s->makespan_s;
      busy_vc += s->vector_utilisation * s->makespan_s;
      span += s->makespan_s;
    }
  }
  const double ranks_work = static_cast<double>(cluster.micro_batches) * static_cast<double>(graph.shape.tp);
  m.energy_per_batch_j = energy_j * ranks_work;
  m.tensor_utilisation = span > 0 ? busy_tc / span : 0;
  m.vector_utilisation = span > 0 ? busy_vc / span : 0;

  int64_t devices_per_replica = 0;
  for (const placement::Stage& s : plan.stages) devices_per_replica += s.devices;
  const double devices_used = static_cast<double>(plan.data_parallel * devices_per_replica);
  const double flops = ranks_work * static_cast<double>(graph.forward_flops() + graph.backward_flops());
  const double peak_flops = 2.0 * hw::peak_tensor_macs_per_s(design) * devices_used;
  m.flops_utilisation = peak_flops > 0 ? flops / (peak_flops * plan.time_per_batch) : 0;
  return m;
}

Evaluator::Evaluator(const Workload& workload, ScheduleCache& cache)
    : workload_(workload),
      cache_(cache),
      solver_(workload.question->schedule_node_budget > 0
                  ? schedule::make_exact_solver(workload.question->schedule_node_budget)
                  : schedule::make_exact_solver()) {}

std::vector<PointOutcome> Evaluator::evaluate(const hw::Design& design,
                                              const std::function<bool(const std::string&)>& wanted) {
  const SearchQuestion& q = *workload_.question;
  if (!estimator_ || designs_since_reset_ >= kDesignsPerEstimator) {
    estimator_ = std::make_unique<cost::Estimator>();
    designs_since_reset_ = 0;
  }
  ++designs_since_reset_;
  const double ring_latency_s = estimator_->params().collective_latency_s;
  const std::vector<bool> recomputes = recompute_values(q.recompute);
  std::vector<PointOutcome> out;

  for (size_t bi = 0; bi < q.micro_batches.size(); ++bi) {
    const int64_t b = q.micro_batches[bi];
    // The points of this micro-batch still to do.
    std::vector<std::pair<int64_t, bool>> todo;
    for (int64_t hbm : q.hbm_bytes)
      for (bool rc : recomputes) {
        hw::Architecture a = design.arch;
        a.hbm_bytes = hbm;
        if (wanted(point_key(a, b, hbm, rc))) todo.emplace_back(hbm, rc);
      }
    if (todo.empty()) continue;

    // Schedules and chains per model and width; a width with an operator without estimate is left out. A model
    // that fits in memory at none of the points to do has no plan at any of them, schedules or not.
    std::vector<std::vector<LayerSchedules>> schedules(q.models.size());
    std::vector<std::vector<placement::Chain>> chains(q.models.size());
    std::vector<std::vector<size_t>> chain_width(q.models.size());  // width index of each chain
    for (size_t mi = 0; mi < q.models.size(); ++mi) {
      if (std::none_of(todo.begin(), todo.end(),
                       [&](const auto& point) { return workload_.fits_in_memory(mi, bi, point.first, point.second); }))
        continue;
      const auto& graphs = workload_.graphs[mi][bi];
      for (size_t wi = 0; wi < graphs.size(); ++wi) {
        LayerSchedules s = schedule_layers(graphs[wi], design.arch, *estimator_, *solver_, cache_);
        for (const auto& p : s.layers) unproven_ += !p.forward.proven_optimal + !p.backward.proven_optimal;
        if (s.feasible()) {
          chains[mi].push_back(make_chain(graphs[wi], s));
          chain_width[mi].push_back(wi);
        }
        schedules[mi].push_back(s);
      }
    }

    for (const auto& [hbm, rc] : todo) {
      PointOutcome p;
      p.design = design.arch;
      p.design.hbm_bytes = hbm;
      p.key = point_key(p.design, b, hbm, rc);
      p.area_um2 = design.area_um2;
      p.micro_batch = b;
      p.recompute = rc;
      p.feasible = true;
      double sum = 0;
      for (size_t mi = 0; mi < q.models.size(); ++mi) {
        ModelOutcome m;
        auto no_fit = [&] { return fmt::format("no plan fits in {} GiB of HBM on {} devices", hbm / kGiB, q.devices); };
        if (!workload_.fits_in_memory(mi, bi, hbm, rc)) {
          m.reason = no_fit();
        } else if (chains[mi].empty()) {
          m.reason = "an operator has no finite estimate on this design at every width";
        } else {
          const placement::Cluster cluster = make_cluster(q, p.design, b, hbm, rc, ring_latency_s);
          const placement::Plan plan = planner_.solve(chains[mi], cluster);
          if (!plan.feasible) {
            m.reason = no_fit();
          } else {
            size_t k = 0;
            while (chains[mi][k].width != plan.width) ++k;
            const size_t wi = chain_width[mi][k];
            m = model_outcome(workload_.graphs[mi][bi][wi], schedules[mi][wi], plan, cluster, p.design, q.global_batch);
          }
        }
        p.feasible = p.feasible && m.feasible;
        sum += m.samples_per_s;
        p.models.push_back(std::move(m));
      }
      p.score = p.feasible ? sum / static_cast<double>(q.models.size()) : 0;
      out.push_back(std::move(p));
    }
  }
  std::sort(out.begin(), out.end(), before);
  return out;
}

}  // namespace phaze::search
