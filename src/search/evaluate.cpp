#include "search/evaluate.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <mutex>
#include <optional>
#include <tuple>

#include "placement/plan_check.h"
#include "placement/time_floor.h"
#include "schedule/layer_problem.h"
#include "search/megatron_execution.h"

namespace phaze::search {

namespace {

/// Whether a plan of `time_s` per batch (infinity: none) at width index `width` beats `best` of width index
/// `best_width`: faster, or as fast with a smaller width (the planner's rule over widths). Applied to a bound
/// of the width's time, whether the width could still beat `best`.
bool could_beat(double time_s, size_t width, const placement::Plan& best, size_t best_width) {
  return time_s < std::numeric_limits<double>::infinity() &&
         (!best.feasible || time_s < best.time_per_batch || (time_s == best.time_per_batch && width < best_width));
}

bool beats(const placement::Plan& plan, size_t width, const placement::Plan& best, size_t best_width) {
  return plan.feasible && could_beat(plan.time_per_batch, width, best, best_width);
}

/// A point of `design` with HBM size `hbm_bytes`, micro-batch b and recomputation setting rc, no model yet.
PointOutcome empty_point(const hw::Design& design, int64_t hbm_bytes, int64_t b, bool rc) {
  PointOutcome p;
  p.design = design.arch;
  p.design.hbm_bytes = hbm_bytes;
  p.key = point_key(p.design, b, rc);
  p.area_um2 = design.area_um2;
  p.micro_batch = b;
  p.recompute = rc;
  return p;
}

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

/// A point is feasible when every model has a plan; its score is then their mean throughput.
void score_point(PointOutcome& p) {
  p.feasible = true;
  double sum = 0;
  for (const ModelOutcome& m : p.models) {
    p.feasible = p.feasible && m.feasible;
    sum += m.samples_per_s;
  }
  p.score = p.feasible ? sum / static_cast<double>(p.models.size()) : 0;
}

/// The indices of `clusters`, those with more memory per device first (in their order among equals).
std::vector<size_t> roomiest_first(const std::vector<placement::Cluster>& clusters) {
  std::vector<size_t> order(clusters.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return clusters[a].memory_bytes > clusters[b].memory_bytes; });
  return order;
}

/// Per point of `clusters`: the points that differ from it only in having more memory per device, in index
/// order.
std::vector<std::vector<size_t>> roomier_points(const std::vector<placement::Cluster>& clusters) {
  std::vector<std::vector<size_t>> roomier(clusters.size());
  for (size_t k = 0; k < clusters.size(); ++k)
    for (size_t r = 0; r < clusters.size(); ++r)
      if (clusters[r].memory_bytes > clusters[k].memory_bytes &&
          placement::differ_only_in_memory(clusters[r], clusters[k]))
        roomier[k].push_back(r);
  return roomier;
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
  auto unit_chain = [](const model::LayerGraph& graph) {
    LayerSchedules unit;
    unit.layers.resize(graph.distinct_layers().size());
    for (LayerSchedules::Passes& p : unit.layers)
      for (PassSummary* s : {&p.forward, &p.backward}) *s = {true, 1.0, 0, 0, 0, true, 1.0};
    return make_chain(graph, unit);
  };
  w.fits_hbm_bytes = q.hbm_bytes;
  if (q.execution == Execution::Megatron) {
    for (size_t mi = 0; mi < q.models.size(); ++mi) {
      auto& fits = w.fits.emplace_back();
      auto& lists = w.megatron_fitting.emplace_back();
      for (size_t bi = 0; bi < q.micro_batches.size(); ++bi) {
        auto& fits_b = fits.emplace_back();
        auto& lists_b = lists.emplace_back();
        for (int64_t hbm : q.hbm_bytes) {
          auto& l = lists_b.emplace_back();
          auto& f = fits_b.emplace_back();
          for (bool rc : {false, true}) {
            l[rc ? 1 : 0] = fitting_megatron_plans(q, q.models[mi], w.graphs[mi][bi], hbm, rc);
            f[rc ? 1 : 0] = !l[rc ? 1 : 0].empty();
          }
        }
      }
    }
    return w;
  }
  const hw::Architecture base = enumeration_options(q).base;
  placement::CorrectedPlanner planner;
  placement::StagewisePlanner stagewise;
  for (size_t mi = 0; mi < q.models.size(); ++mi) {
    auto& per_model = w.fits.emplace_back();
    for (size_t bi = 0; bi < q.micro_batches.size(); ++bi) {
      std::vector<placement::Chain> chains;
      for (const model::LayerGraph& graph : w.graphs[mi][bi]) chains.push_back(unit_chain(graph));
      auto& per_mbs = per_model.emplace_back();
      for (int64_t hbm : q.hbm_bytes) {
        std::array<bool, 2>& fits = per_mbs.emplace_back();
        for (bool rc : {false, true}) {
          const placement::Cluster cluster = make_cluster(q, base, q.micro_batches[bi], hbm, rc);
          fits[rc ? 1 : 0] = q.planner == PlannerChoice::Stagewise ? stagewise.feasible(chains, cluster)
                                                                   : planner.solve(chains, cluster).feasible;
        }
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
  const double bytes_moved = optimizer == placement::Optimizer::Adam ? 5.0 : 3.0;
  return bytes_moved / hbm_bandwidth;
}

placement::Cluster make_cluster(const SearchQuestion& q, const hw::Architecture& design, int64_t micro_batch,
                                int64_t hbm_bytes, bool recompute) {
  placement::Cluster c;
  c.devices = q.devices;
  c.memory_bytes = static_cast<double>(hbm_bytes);
  placement::use_network(c, q.network);
  c.micro_batches = q.global_batch / micro_batch;
  c.recompute = recompute;
  c.optimizer = q.optimizer;
  c.corrected.enabled = true;
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
  for (const LayerSchedules::Passes& p : schedules.layers)
    m.layers.push_back({p.forward.makespan_s, p.backward.makespan_s, p.forward.energy_j, p.backward.energy_j});

  // Per micro-batch and rank: every layer's forward and backward, plus the re-forward of the layers outside
  // the last stage with recomputation (the last stage keeps its activations, placement.md).
  const int64_t n = graph.size();
  const int last_stage_first = plan.stages.empty() ? 0 : plan.stages.back().first;
  double energy_j = 0;
  Utilisation use;
  for (int64_t i = 0; i < n; ++i) {
    const LayerSchedules::Passes& p = schedules.node(graph, i);
    energy_j += p.forward.energy_j + p.backward.energy_j;
    if (cluster.recompute && i < last_stage_first) energy_j += p.forward.energy_j;
    use.add(p.forward);
    use.add(p.backward);
  }
  const double ranks_work = static_cast<double>(cluster.micro_batches) * static_cast<double>(graph.shape.tp);
  m.energy_per_batch_j = energy_j * ranks_work;
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
  for (const placement::StagewiseStage& s : plan.stages) {
    const size_t wi = chain_width[s.chain];
    const model::LayerGraph& graph = graphs[wi];
    const LayerSchedules& sched = *schedules[wi];
    m.stages.push_back({s.first, s.last, s.devices});
    m.stagewise.push_back({s.width, s.data_parallel, s.recomputed});
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
  return m;
}

Evaluator::Evaluator(const Workload& workload, ScheduleCache& cache)
    : workload_(workload), scheduling_(make_scheduling(*workload.question, cache)) {}

bool Evaluator::ModelBounds::any_width() const {
  return std::any_of(usable.begin(), usable.end(), [](char u) { return u != 0; });
}

double Evaluator::ModelBounds::least_time_s(size_t k) const {
  double least = std::numeric_limits<double>::infinity();
  for (const std::vector<double>& t : time_s) least = std::min(least, t[k]);
  return least;
}

// Every width is placed on the root bounds of its layers, which bound its time per batch from below. A
// placement costs a fraction of a millisecond, a width's layer schedules up to seconds. Unless every point
// is asked for, a point's placement waits until the floor that needs none (placement::time_floor_s) could
// decide something. Points with more memory come first: their placements serve the others (refine).
Evaluator::ModelBounds Evaluator::bound_model(const std::vector<model::LayerGraph>& graphs,
                                              const hw::Architecture& design,
                                              const std::vector<placement::Cluster>& clusters, bool every_point) {
  const size_t widths = graphs.size(), points = clusters.size();
  ModelBounds out;
  out.problems.resize(widths);
  out.usable.assign(widths, 0);
  out.time_s.assign(widths, std::vector<double>(points, std::numeric_limits<double>::infinity()));
  out.level.assign(widths, std::vector<BoundLevel>(points, BoundLevel::kPlaced));
  out.stages.assign(widths, std::vector<std::vector<placement::Stage>>(points));
  out.stand_ins.resize(widths);
  out.chains.resize(widths);
  out.roomiest_first = roomiest_first(clusters);
  out.roomier = roomier_points(clusters);
  for (size_t wi = 0; wi < widths; ++wi) {
    out.problems[wi] = layer_problems(graphs[wi], design, scheduling_.estimator);
    if (!all_finite(out.problems[wi])) continue;
    out.usable[wi] = 1;
    out.stand_ins[wi] = bound_layers(out.problems[wi], *scheduling_.cache);
    out.chains[wi] = make_chain(graphs[wi], out.stand_ins[wi]);
    for (const size_t k : out.roomiest_first) {
      out.level[wi][k] = BoundLevel::kFloor;
      if (!every_point) {
        out.time_s[wi][k] = placement::time_floor_s(out.chains[wi], clusters[k]);
        continue;
      }
      out.time_s[wi][k] = 0;  // no floor needed: the point is placed (or settled by a roomier one) at once
      while (out.level[wi][k] != BoundLevel::kPlaced) refine(out, graphs, clusters, wi, k);
    }
  }
  return out;
}

placement::Plan Evaluator::place(const model::LayerGraph& graph, const LayerSchedules& schedules,
                                 const placement::Chain& chain, const placement::Cluster& cluster) {
  std::lock_guard lock(placing_);
  return plans_.solve(graph, schedules, chain, cluster, planner_);
}

void Evaluator::refine(ModelBounds& bounds, const std::vector<model::LayerGraph>& graphs,
                       const std::vector<placement::Cluster>& clusters, size_t wi, size_t k) {
  constexpr double kNoPlan = std::numeric_limits<double>::infinity();
  double& time = bounds.time_s[wi][k];
  BoundLevel& level = bounds.level[wi][k];
  if (level == BoundLevel::kFloor) {
    // Every plan that fits here fits at a roomier point and takes as long there: the slowest best plan of the
    // placed roomier points is the tightest bound they give, and the best time here when its plan fits here.
    std::optional<size_t> roomier;
    for (const size_t r : bounds.roomier[k])
      if (bounds.level[wi][r] == BoundLevel::kPlaced &&
          (!roomier || bounds.time_s[wi][r] > bounds.time_s[wi][*roomier]))
        roomier = r;
    if (roomier) {
      const double roomier_s = bounds.time_s[wi][*roomier];
      const std::vector<placement::Stage>& stages = bounds.stages[wi][*roomier];
      if (roomier_s == kNoPlan || placement::stages_fit_memory(bounds.chains[wi], stages, clusters[k])) {
        time = roomier_s;
        level = BoundLevel::kPlaced;
        bounds.stages[wi][k] = stages;
        return;
      }
      time = std::max(time, roomier_s);
      level = BoundLevel::kRoomier;
      return;
    }
  }
  placement::Plan plan = place(graphs[wi], bounds.stand_ins[wi], bounds.chains[wi], clusters[k]);
  time = plan.feasible ? plan.time_per_batch : kNoPlan;
  level = BoundLevel::kPlaced;
  bounds.stages[wi][k] = std::move(plan.stages);
}

Evaluator::ModelPlans Evaluator::plan_model(const std::vector<model::LayerGraph>& graphs, ModelBounds& bounds,
                                            const std::vector<placement::Cluster>& clusters,
                                            const std::function<bool(size_t)>& needed) {
  const size_t widths = graphs.size(), points = clusters.size();
  ModelPlans out;
  out.any_width = bounds.any_width();
  out.schedules.resize(widths);
  out.plans.resize(points);
  out.width_of.assign(points, widths);
  const std::vector<size_t>& order = bounds.roomiest_first;
  // Schedules one width exactly and lets its plans compete for every point where neither its bound nor its
  // plan at a roomier point (no faster than its plan here) already loses to the best plan there.
  std::vector<double> placed_s(points);  // this width's best time at each point placed (infinity: no plan)
  auto solve = [&](size_t wi) {
    const LayerSchedules& s = out.schedules[wi].emplace(solve_layers(bounds.problems[wi], scheduling_));
    unproven_ += s.unproven_passes();
    const placement::Chain chain = make_chain(graphs[wi], s);
    std::fill(placed_s.begin(), placed_s.end(), -1.0);  // -1: not placed
    for (const size_t k : order) {
      if (out.plans[k].feasible && bounds.time_s[wi][k] > out.plans[k].time_per_batch) continue;
      // The width's plan at a roomier point is no slower than its plan here (none there: none here).
      bool settled = false;
      for (const size_t r : bounds.roomier[k])
        settled = settled || (placed_s[r] >= 0 && !could_beat(placed_s[r], wi, out.plans[k], out.width_of[k]));
      if (settled) continue;
      placement::Plan plan = place(graphs[wi], s, chain, clusters[k]);
      placed_s[k] = plan.feasible ? plan.time_per_batch : std::numeric_limits<double>::infinity();
      if (beats(plan, wi, out.plans[k], out.width_of[k])) {
        out.plans[k] = std::move(plan);
        out.width_of[k] = wi;
      }
    }
  };

  // A width is scheduled only while it could still beat (or tie with a smaller width) the best plan of some
  // needed point: the plans are those of scheduling every width. Most points need one or two widths.
  // A weak bound that could win is refined first, a level at a time. Points are taken roomiest first, so that
  // their placements serve the others.
  auto could_win = [&](size_t wi, size_t k) {
    if (!bounds.usable[wi] || out.schedules[wi] || !needed(k)) return false;
    auto below_best = [&] { return could_beat(bounds.time_s[wi][k], wi, out.plans[k], out.width_of[k]); };
    if (!below_best()) return false;
    while (bounds.level[wi][k] != BoundLevel::kPlaced) {
      refine(bounds, graphs, clusters, wi, k);
      if (!below_best()) return false;
    }
    return true;
  };
  while (true) {
    // The first point that an unscheduled width could still improve, and its most promising such width.
    std::optional<size_t> next;
    for (size_t i = 0; i < points && !next; ++i)
      for (size_t wi = 0, k = order[i]; wi < widths; ++wi)
        if (could_win(wi, k) && (!next || bounds.time_s[wi][k] < bounds.time_s[*next][k])) next = wi;
    if (!next) break;
    solve(*next);
  }
  return out;
}

Evaluator::ModelPlans Evaluator::plan_model_stagewise(const std::vector<model::LayerGraph>& graphs,
                                                      const hw::Architecture& design,
                                                      const std::vector<placement::Cluster>& clusters) {
  ModelPlans out;
  out.schedules.resize(graphs.size());
  std::vector<placement::Chain> chains;
  for (size_t wi = 0; wi < graphs.size(); ++wi) {
    const std::vector<schedule::Problem> problems = layer_problems(graphs[wi], design, scheduling_.estimator);
    if (!all_finite(problems)) continue;
    out.any_width = true;
    const LayerSchedules& s = out.schedules[wi].emplace(solve_layers(problems, scheduling_));
    unproven_ += s.unproven_passes();
    chains.push_back(make_chain(graphs[wi], s));
    out.chain_width.push_back(wi);
  }
  if (chains.empty()) return out;
  // The points differ only in memory and recomputation: each one's plan is a good first incumbent for the
  // others (it changes the work, not the answer).
  for (const placement::Cluster& cluster : clusters)
    out.stagewise.push_back(stagewise_.solve(chains, cluster, out.stagewise));
  return out;
}

std::vector<PointOutcome> Evaluator::evaluate_megatron(const hw::Design& design,
                                                       const std::function<bool(const std::string&)>& wanted) {
  const SearchQuestion& q = *workload_.question;
  std::vector<PointOutcome> out;
  for (size_t bi = 0; bi < q.micro_batches.size(); ++bi) {
    const int64_t b = q.micro_batches[bi];
    struct Todo {
      size_t hbm_index;
      bool recompute;
      hw::Architecture design;
    };
    std::vector<Todo> todo;
    for (size_t hi = 0; hi < q.hbm_bytes.size(); ++hi)
      for (bool rc : recompute_values(q.recompute)) {
        hw::Architecture a = design.arch;
        a.hbm_bytes = q.hbm_bytes[hi];
        if (wanted(point_key(a, b, rc))) todo.push_back({hi, rc, a});
      }
    if (todo.empty()) continue;

    // Per model, the widths some fitting configuration of these points uses, scheduled once.
    std::vector<std::vector<std::optional<MegatronWidth>>> widths(q.models.size());
    for (size_t mi = 0; mi < q.models.size(); ++mi) {
      const ModelCase& m = q.models[mi];
      std::vector<char> used(m.widths.size(), 0);
      for (const Todo& t : todo)
        for (const megatron::TrainingPlan& plan : workload_.megatron_fitting[mi][bi][t.hbm_index][t.recompute ? 1 : 0])
          used[static_cast<size_t>(std::find(m.widths.begin(), m.widths.end(), plan.tp) - m.widths.begin())] = 1;
      widths[mi].resize(m.widths.size());
      for (size_t wi = 0; wi < m.widths.size(); ++wi) {
        if (!used[wi]) continue;
        widths[mi][wi] = megatron_width(workload_.graphs[mi][bi][wi], design.arch, scheduling_);
        if (widths[mi][wi]) {
          unproven_ += widths[mi][wi]->schedules.unproven_passes();
          if (widths[mi][wi]->sequence_parallel_schedules)
            unproven_ += widths[mi][wi]->sequence_parallel_schedules->unproven_passes();
        }
      }
    }

    for (const Todo& t : todo) {
      PointOutcome p = empty_point(design, t.design.hbm_bytes, b, t.recompute);
      for (size_t mi = 0; mi < q.models.size(); ++mi)
        p.models.push_back(megatron_outcome(q, q.models[mi], widths[mi],
                                            workload_.megatron_fitting[mi][bi][t.hbm_index][t.recompute ? 1 : 0],
                                            t.design));
      score_point(p);
      out.push_back(std::move(p));
    }
  }
  std::sort(out.begin(), out.end(), before);
  return out;
}

std::vector<PointOutcome> Evaluator::evaluate(const hw::Design& design,
                                              const std::function<bool(const std::string&)>& wanted,
                                              const LeaveOutTest& leave_out, std::vector<LeftOutPoint>* left_out) {
  const SearchQuestion& q = *workload_.question;
  // The estimator's GEMM estimates grow with every core configuration met: they are forgotten every so many
  // designs, but only where the tensor cores change, since designs with the same ones share their estimates.
  const auto array = std::tuple(design.arch.tc_width, design.arch.tc_depth, design.arch.num_tc);
  if (designs_since_reset_ >= kDesignsPerEstimator && array != last_array_) {
    scheduling_.estimator.forget_estimates();
    designs_since_reset_ = 0;
  }
  ++designs_since_reset_;
  last_array_ = array;
  if (q.execution == Execution::Megatron) return evaluate_megatron(design, wanted);
  const std::vector<bool> recomputes = recompute_values(q.recompute);
  std::vector<PointOutcome> out;

  // Per micro-batch with points to do: its points, and per model the clusters of those that fit, the bounds
  // of its widths, and its plans.
  struct MicroBatch {
    size_t index;
    std::vector<std::pair<int64_t, bool>> todo;  ///< HBM size and recomputation of each point
    std::vector<std::string> keys;               ///< the key of each point
    /// [model][k]: the cluster of point todo[fitting[model][k]]
    std::vector<std::vector<placement::Cluster>> clusters;
    std::vector<std::vector<size_t>> fitting;
    std::vector<ModelBounds> bounds;
    std::vector<ModelPlans> plans;
    std::vector<char> out_of_it;  ///< per point: left out on its bounds
    std::vector<char> dropped;    ///< per point: no longer wanted before a width was scheduled for it
  };
  std::vector<MicroBatch> work;
  const bool stagewise = q.planner == PlannerChoice::Stagewise;
  for (size_t bi = 0; bi < q.micro_batches.size(); ++bi) {
    const int64_t b = q.micro_batches[bi];
    MicroBatch mb;
    mb.index = bi;
    for (int64_t hbm : q.hbm_bytes)
      for (bool rc : recomputes) {
        hw::Architecture a = design.arch;
        a.hbm_bytes = hbm;
        std::string key = point_key(a, b, rc);
        if (!wanted(key)) continue;
        mb.todo.emplace_back(hbm, rc);
        mb.keys.push_back(std::move(key));
      }
    if (mb.todo.empty()) continue;

    // Per model, the best plan of every point that fits in memory. A model that fits at none of the points to do
    // has no plan at any of them, schedules or not.
    mb.plans.resize(q.models.size());
    mb.bounds.resize(q.models.size());
    mb.clusters.resize(q.models.size());
    mb.fitting.resize(q.models.size());
    for (size_t mi = 0; mi < q.models.size(); ++mi) {
      for (size_t j = 0; j < mb.todo.size(); ++j) {
        const auto& [hbm, rc] = mb.todo[j];
        if (!workload_.fits_in_memory(mi, bi, hbm, rc)) continue;
        hw::Architecture a = design.arch;
        a.hbm_bytes = hbm;
        mb.clusters[mi].push_back(make_cluster(q, a, b, hbm, rc));
        mb.fitting[mi].push_back(j);
      }
      if (mb.clusters[mi].empty()) continue;
      if (stagewise) {
        mb.plans[mi] = plan_model_stagewise(workload_.graphs[mi][bi], design.arch, mb.clusters[mi]);
      } else {
        mb.bounds[mi] =
            bound_model(workload_.graphs[mi][bi], design.arch, mb.clusters[mi], static_cast<bool>(leave_out));
      }
    }

    // The points left out on their bounds: a model's samples/s at a point is at most the global batch over
    // its least time-per-batch bound, and it has a plan there exactly when some width's bound plan fits.
    mb.out_of_it.assign(mb.todo.size(), 0);
    mb.dropped.assign(mb.todo.size(), 0);
    if (leave_out && !stagewise) {
      for (size_t j = 0; j < mb.todo.size(); ++j) {
        std::vector<std::optional<double>> most(q.models.size());
        bool feasible = true;
        for (size_t mi = 0; mi < q.models.size(); ++mi) {
          const auto at = std::find(mb.fitting[mi].begin(), mb.fitting[mi].end(), j);
          const double t = at == mb.fitting[mi].end() || !mb.bounds[mi].any_width()
                               ? std::numeric_limits<double>::infinity()
                               : mb.bounds[mi].least_time_s(static_cast<size_t>(at - mb.fitting[mi].begin()));
          if (t < std::numeric_limits<double>::infinity()) most[mi] = static_cast<double>(q.global_batch) / t;
          feasible = feasible && most[mi].has_value();
        }
        if (!leave_out(mb.keys[j], most)) continue;
        mb.out_of_it[j] = 1;
        if (left_out) left_out->push_back({mb.keys[j], feasible});
      }
    }
    work.push_back(std::move(mb));
  }

  // The micro-batches' plans are independent of each other (only their layer problems needed this thread's
  // estimator): with threads to share them, each is planned by whichever thread takes it.
  if (!stagewise) {
    std::vector<std::function<void()>> tasks;
    for (MicroBatch& mb : work)
      tasks.emplace_back([&] {
        for (size_t mi = 0; mi < q.models.size(); ++mi) {
          if (mb.clusters[mi].empty()) continue;
          // A point that is no longer wanted (its combination stopped meanwhile) is dropped before the next
          // width is scheduled for it.
          auto needed = [&](size_t k) {
            const size_t j = mb.fitting[mi][k];
            if (mb.out_of_it[j] || mb.dropped[j]) return false;
            if (wanted(mb.keys[j])) return true;
            mb.dropped[j] = 1;
            return false;
          };
          mb.plans[mi] = plan_model(workload_.graphs[mi][mb.index], mb.bounds[mi], mb.clusters[mi], needed);
        }
      });
    run_tasks(scheduling_.sharing, std::move(tasks));
  }

  for (const MicroBatch& mb : work) {
    const size_t bi = mb.index;
    const int64_t b = q.micro_batches[bi];
    for (size_t j = 0; j < mb.todo.size(); ++j) {
      if (mb.out_of_it[j] || mb.dropped[j] || !wanted(mb.keys[j])) continue;
      const auto& [hbm, rc] = mb.todo[j];
      PointOutcome p = empty_point(design, hbm, b, rc);
      for (size_t mi = 0; mi < q.models.size(); ++mi) {
        ModelOutcome m;
        auto no_fit = [&, hbm_bytes = hbm] {
          return fmt::format("no plan fits in {} GiB of HBM on {} devices", hbm_bytes / kGiB, q.devices);
        };
        const auto at = std::find(mb.fitting[mi].begin(), mb.fitting[mi].end(), j);
        if (at == mb.fitting[mi].end()) {
          m.reason = no_fit();
        } else {
          const ModelPlans& mp = mb.plans[mi];
          const auto k = static_cast<size_t>(at - mb.fitting[mi].begin());
          if (!mp.any_width) {
            m.reason = "an operator has no finite estimate on this design at every width";
          } else if (!mp.feasible(k)) {
            m.reason = no_fit();
          } else if (!mp.stagewise.empty()) {
            m = stagewise_outcome(workload_.graphs[mi][bi], mp.schedules, mp.chain_width, mp.stagewise[k],
                                  mb.clusters[mi][k], p.design, q.global_batch);
          } else {
            const size_t wi = mp.width_of[k];
            m = model_outcome(workload_.graphs[mi][bi][wi], *mp.schedules[wi], mp.plans[k], mb.clusters[mi][k],
                              p.design, q.global_batch);
          }
        }
        p.models.push_back(std::move(m));
      }
      score_point(p);
      out.push_back(std::move(p));
    }
  }
  std::sort(out.begin(), out.end(), before);
  return out;
}

}  // namespace phaze::search
