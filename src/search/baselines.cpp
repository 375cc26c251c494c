#include "search/baselines.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <limits>
#include <optional>
#include <queue>
#include <set>
#include <tuple>
#include <unordered_map>

#include "megatron/plan_search.h"
#include "model/layer_graph.h"
#include "placement/plan_check.h"
#include "placement/stage_costs.h"
#include "schedule/layer_problem.h"
#include "schedule/usable_cores.h"
#include "search/driver.h"
#include "search/evaluate.h"
#include "search/pricer.h"
#include "util/input_error.h"
#include "util/run_on_threads.h"

namespace phaze::search {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

/// Lower bounds are scaled by this before they are compared with exact objectives: a bound that is tight in
/// exact arithmetic may land a few ulps above the makespan it bounds once rounded, and pruning on it would
/// then be wrong.
constexpr double kBoundSlack = 1 - 1e-9;

/// A hard pass of a design that leads the argmin is first shown to be no faster than what would put the
/// design behind its rival, at least this much (relative) above what is known of it; only when the solver
/// finds a shorter schedule, or cannot show it within kProbeNodes search nodes, is the pass scheduled exactly.
constexpr double kProbeStep = 0.02;
constexpr int64_t kProbeNodes = 1'000'000;
/// At most this many probes per layer problem (each raises what is shown by 0.1 % at least): past them, the
/// pass is scheduled exactly, which bounds the work however the designs leapfrog one another.
constexpr int kMostProbes = 16;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// ---- Spotlight-style objective ----

/// The pass times of a model's distinct layers, seconds: per distinct layer (model::LayerGraph::distinct_layers)
/// forward then backward.
using PassTimes = std::vector<double>;

/// Single-chip training latency per sample, seconds: per model Σ over distinct layers of (forward + backward)
/// times the layer's chain nodes (embedding + L transformer layers + head), over b, averaged over the models.
/// Every operation is monotone in the pass times, so lower bounds of the passes give a lower bound of the
/// objective, bit for bit.
double per_sample(const std::vector<PassTimes>& passes, const std::vector<std::vector<double>>& nodes,
                  int64_t micro_batch) {
  double sum = 0;
  for (size_t m = 0; m < passes.size(); ++m) {
    const PassTimes& p = passes[m];
    double model = 0;
    for (size_t k = 0; k < nodes[m].size(); ++k) model += nodes[m][k] * (p[2 * k] + p[2 * k + 1]);
    sum += model / static_cast<double>(micro_batch);
  }
  return sum / static_cast<double>(passes.size());
}

/// The operator graphs of a model's distinct layer passes, in the order of PassTimes.
std::vector<const model::OperatorGraph*> pass_graphs(const model::LayerGraph& g) {
  std::vector<const model::OperatorGraph*> out;
  for (const model::DistinctLayer& d : g.distinct_layers()) {
    out.push_back(&d.layer->forward);
    out.push_back(&d.layer->backward);
  }
  return out;
}

/// A design's place in the best-first visit: its objective bound and how far it has been refined.
struct Visit {
  double bound = 0;
  int level = 0;  // 0: bound without estimates; 1: root bounds of the estimated passes; 2: some passes scheduled
  size_t design = 0;
};
struct LaterVisit {
  bool operator()(const Visit& a, const Visit& b) const {
    return std::tie(a.bound, a.design, a.level) > std::tie(b.bound, b.design, b.level);
  }
};

/// What a design refined past level 0 knows of its passes: per model and pass, a lower bound (the root bound,
/// or what the solver showed since) or, once scheduled, the makespan.
struct Refined {
  std::vector<PassTimes> passes;
  size_t scheduled = 0;           ///< passes whose makespan is known
  std::vector<char> exact, hard;  ///< per pass of pass_order: makespan known; a probe found it faster than asked
};

/// What one argmin has learnt of its layer problems, which recur across designs (designs that differ only in
/// what a layer cannot feel): the least makespan shown for each, and the makespan of those scheduled.
class PassKnowledge {
 public:
  struct Known {
    double floor_s = 0;            ///< no schedule is shorter (before kBoundSlack)
    double ceiling_s = kInfinity;  ///< a shorter schedule exists
    bool tried = false;            ///< by the solver on a few nodes
    int probes = 0;                ///< asked of it so far
    std::optional<double> makespan_s;
  };
  /// Keyed as the schedule cache keys problems: by the cores their schedules can use.
  Known& of(const schedule::Problem& problem) {
    schedule::Problem usable = problem;
    const schedule::CoreCounts cores = schedule::usable_cores(problem);
    usable.tensor_cores = cores.tensor_cores;
    usable.vector_cores = cores.vector_cores;
    auto& bucket = known_[problem_hash(usable)];
    for (auto& [key, known] : bucket)
      if (same_problem(key, usable)) return known;
    return bucket.emplace_back(std::move(usable), Known{}).second;
  }

 private:
  std::unordered_map<uint64_t, std::vector<std::pair<schedule::Problem, Known>>> known_;
};

}  // namespace

hw::Architecture point_architecture(const SearchQuestion& q, const hw::Architecture& design) {
  // Beside a chip given whole, another design (the TPUv4-like baseline) keeps the preset's bandwidth, clock
  // and SRAMs.
  hw::Architecture a = q.chip && !same_chip(design, *q.chip) ? hw::tpuv4_like() : enumeration_options(q).base;
  a.name.clear();
  copy_design(a, design);
  return a;
}

// ---- Hand-set plans ----

std::optional<placement::HandSetPlan> megatron_table_plan(const std::string& preset) {
  struct Row {
    const char* name;
    placement::HandSetPlan plan;
  };
  // method.md 8.2.
  static const Row kTable[] = {
      {"opt-350m", {12, 1, 85}},        {"bert-large", {8, 1, 128}},       {"gpt2-xl", {32, 1, 32}},
      {"megatron-bert", {8, 1, 128}},   {"megatron-gpt2-xl", {8, 1, 128}}, {"megatron-gpt2-54", {8, 4, 32}},
      {"megatron-gpt2-72", {8, 8, 16}}, {"gpt3-175b", {32, 4, 8}},         {"llama2-7b", {8, 1, 128}},
  };
  for (const Row& row : kTable)
    if (preset == row.name) return row.plan;
  return std::nullopt;
}

HandSetOutcome evaluate_hand_set_plan(const SearchQuestion& q, size_t model, const placement::HandSetPlan& plan,
                                      const hw::Architecture& design, int64_t micro_batch, bool recompute,
                                      Scheduling& scheduling) {
  HandSetOutcome out;
  out.has_plan = true;
  out.plan = plan;
  const ModelCase& mc = q.models[model];
  const int64_t layers = mc.spec.num_layers;
  out.stages = placement::hand_set_stages(layers, plan);
  // The checks that need no schedule come first: they cost nothing and name the plan's own problem.
  for (size_t k = 0; k < out.stages.size(); ++k)
    if (out.stages[k].first == out.stages[k].last) {
      out.reason = fmt::format("⌈{}/{}⌉ = {} transformer layers per stage leave stage {} of {} empty", layers,
                               plan.pipeline, (layers + plan.pipeline - 1) / plan.pipeline, k + 1, plan.pipeline);
      return out;
    }
  const int64_t devices = plan.pipeline * plan.width * plan.data_parallel;
  if (devices > q.devices) {
    out.reason = fmt::format("the plan needs p·t·d = {}·{}·{} = {} devices, the cluster has {}", plan.pipeline,
                             plan.width, plan.data_parallel, devices, q.devices);
    return out;
  }
  const int64_t micro_batches = q.global_batch / micro_batch;
  if (plan.data_parallel > micro_batches) {
    out.reason =
        fmt::format("d = {} replicas exceed the {} micro-batches of a batch", plan.data_parallel, micro_batches);
    return out;
  }

  model::LayerGraph graph;
  try {
    graph =
        model::build_layer_graph(mc.spec, layer_shape(q, mc, micro_batch, plan.width), model::Precision{}, mc.source);
  } catch (const InputError& e) {
    out.reason = fmt::format("no layer graph at t = {}: {}", plan.width, e.what());
    return out;
  }
  const PlanPrice price = make_pricer(q)->price_hand_set(q, mc, graph, plan, out.stages, design, recompute, scheduling);
  out.feasible = price.feasible;
  out.reason = price.reason;
  if (!price.feasible) return out;
  out.time_per_batch_s = price.time_per_batch_s;
  out.parts = price.parts;
  out.samples_per_s = static_cast<double>(q.global_batch) / price.time_per_batch_s;
  return out;
}

std::vector<HandSetOutcome> hand_set_at(const SearchQuestion& q, const PointOutcome& searched, Scheduling& scheduling) {
  const hw::Architecture design = point_architecture(q, searched.design);
  std::vector<HandSetOutcome> out;
  for (size_t m = 0; m < q.models.size(); ++m) {
    const std::optional<placement::HandSetPlan> plan = megatron_table_plan(q.models[m].source);
    HandSetOutcome h;
    if (plan) {
      h = evaluate_hand_set_plan(q, m, *plan, design, searched.micro_batch, searched.recompute, scheduling);
    } else {
      h.reason = "no hand-set plan: method.md 8.2's table covers the seed zoo's dense models only";
    }
    if (m < searched.models.size() && searched.models[m].feasible)
      h.searched_samples_per_s = searched.models[m].samples_per_s;
    out.push_back(std::move(h));
  }
  return out;
}

// ---- Spotlight-style design ----

namespace {

/// The exact argmin of spotlight_choice: designs visited best-first by a lower bound of their objective,
/// refined a level at a time (level 0: no estimate; 1: the root bounds of the estimated passes; 2: some passes
/// scheduled exactly), the leader refining its passes while it stays ahead.
class SpotlightSearch {
 public:
  SpotlightSearch(const SearchQuestion& q, const std::vector<hw::Design>& designs, int64_t b, Scheduling& scheduling,
                  int64_t quick_nodes);
  SpotlightChoice run();

 private:
  enum class Step { kNext, kBehind };
  /// A design at level 0 estimated: the root bounds of its passes (nothing when some operator cannot run).
  void estimate(const Visit& visit);
  /// A design past level 0 refined pass by pass while it leads; waits again with its raised bound, or wins.
  void refine(const Visit& visit);
  /// Refines pass j of design `design` (its bound `bound`, raised here): kBehind once the design falls behind.
  Step refine_pass(Refined& r, size_t design, size_t j, double& bound);
  /// Asks the solver to show that pass (m, k), held at `held` seconds in a design of bound `bound`, is no
  /// faster than a target that would put the design behind; whether it showed one.
  bool probe(PassKnowledge::Known& known, const schedule::Problem& problem, double held, double bound, size_t m,
             size_t k);
  /// A design whose bound exceeds the best objective found cannot win, nor can one whose bound equals it and
  /// that loses the tie (larger area, or later in canonical order).
  bool loses(double bound, size_t design) const {
    return bound > best_ || (choice_.found && bound == best_ && tie_key(design) > tie_key(best_design_));
  }
  bool behind(double bound, size_t design) const {
    return loses(bound, design) || (!queue_.empty() && bound > queue_.top().bound);
  }
  std::pair<double, size_t> tie_key(size_t i) const { return std::make_pair(designs_[i].area_um2, i); }
  /// The next pass to refine: in pass order, those no probe has found faster than its target first.
  std::optional<size_t> next_pass(const Refined& r, bool easy_only) const;
  /// A design's layer problems are built again for each pass scheduled rather than kept from its estimate:
  /// the designs still waiting when the visit stops would hold them all.
  schedule::Problem problem_of(const hw::Architecture& arch, size_t m, size_t k) {
    return schedule::layer_problem(*pass_graphs(graphs_[m])[k], arch, scheduling_.estimator);
  }

  const std::vector<hw::Design>& designs_;
  const int64_t b_;
  Scheduling& scheduling_;
  const int64_t quick_nodes_;
  const size_t models_;
  SpotlightChoice choice_;
  std::vector<model::LayerGraph> graphs_;
  std::vector<std::vector<double>> nodes_;  // per model, the chain nodes of each distinct layer
  std::vector<PassTimes> level0_passes_;    // per model, the pass bounds of the design being seeded
  /// The order in which a design's passes are scheduled: forward passes first, then backward ones, each by
  /// model and distinct layer. The forward passes are the quicker to schedule exactly, and with their
  /// makespans in place of their bounds a design often already loses.
  std::vector<std::pair<size_t, size_t>> pass_order_;  // (model, pass)
  std::priority_queue<Visit, std::vector<Visit>, LaterVisit> queue_;
  double best_ = kInfinity;
  size_t best_design_ = 0;
  int64_t since_reset_ = 0;
  std::unordered_map<size_t, Refined> refined_;  // designs past level 0 still in the queue
  PassKnowledge knowledge_;
  std::unique_ptr<schedule::Solver> quick_;
};

SpotlightSearch::SpotlightSearch(const SearchQuestion& q, const std::vector<hw::Design>& designs, int64_t b,
                                 Scheduling& scheduling, int64_t quick_nodes)
    : designs_(designs),
      b_(b),
      scheduling_(scheduling),
      quick_nodes_(quick_nodes),
      models_(q.models.size()),
      nodes_(models_),
      level0_passes_(models_),
      quick_(schedule::make_exact_solver(std::max<int64_t>(quick_nodes, 1))) {
  choice_.micro_batch = b;
  std::vector<PassTimes> macs(models_);  // tensor-core MACs of each pass
  for (size_t m = 0; m < models_; ++m) {
    const ModelCase& mc = q.models[m];
    graphs_.push_back(model::build_layer_graph(mc.spec, layer_shape(q, mc, b, 1), model::Precision{}, mc.source));
    for (const model::DistinctLayer& d : graphs_.back().distinct_layers())
      nodes_[m].push_back(static_cast<double>(d.nodes));
    const auto pass_ops = pass_graphs(graphs_.back());
    macs[m].assign(pass_ops.size(), 0.0);
    level0_passes_[m].assign(pass_ops.size(), 0.0);
    for (size_t k = 0; k < pass_ops.size(); ++k)
      for (const model::Operator& op : pass_ops[k]->ops)
        if (op.gemm) macs[m][k] += static_cast<double>(op.gemm->macs());
  }

  // Level 0: every tensor-core operator needs at least its MACs over the design's peak MAC rate of
  // tensor-core time (its padded compute cycles on the cores it uses are never fewer, accelerator.md 5.5),
  // and a pass keeps its n_TC tensor cores busy at most all the time. No estimate needed.
  for (size_t i = 0; i < designs.size(); ++i) {
    const double peak = hw::peak_tensor_macs_per_s(designs[i].arch);
    for (size_t m = 0; m < models_; ++m)
      for (size_t k = 0; k < level0_passes_[m].size(); ++k) level0_passes_[m][k] = macs[m][k] / peak * kBoundSlack;
    queue_.push({per_sample(level0_passes_, nodes_, b), 0, i});
  }

  for (size_t direction : {0, 1})
    for (size_t m = 0; m < models_; ++m)
      for (size_t k = direction; k < level0_passes_[m].size(); k += 2) pass_order_.emplace_back(m, k);
}

SpotlightChoice SpotlightSearch::run() {
  while (!queue_.empty()) {
    const Visit visit = queue_.top();
    queue_.pop();
    if (visit.bound > best_) break;
    if (loses(visit.bound, visit.design)) {
      refined_.erase(visit.design);
      continue;
    }
    if (visit.level == 0) {
      estimate(visit);
    } else {
      refine(visit);
    }
  }
  if (choice_.found) {
    choice_.design = designs_[best_design_];
    choice_.seconds_per_sample = best_;
  }
  return choice_;
}

void SpotlightSearch::estimate(const Visit& visit) {
  const hw::Architecture& arch = designs_[visit.design].arch;
  if (++since_reset_ > kDesignsPerEstimator) {
    scheduling_.estimator.forget_estimates();
    since_reset_ = 1;
  }
  ++choice_.designs_estimated;
  Refined r;
  r.passes = level0_passes_;
  bool finite = true;
  for (size_t m = 0; m < models_ && finite; ++m)
    for (size_t k = 0; k < r.passes[m].size() && finite; ++k) {
      const schedule::Problem problem = problem_of(arch, m, k);
      finite = schedule::has_finite_latencies(problem);
      if (finite) r.passes[m][k] = scheduling_.cache->root_bound(problem) * kBoundSlack;
    }
  // A design where some operator cannot run has no single-chip latency.
  if (!finite) return;
  const double bound = std::max(visit.bound, per_sample(r.passes, nodes_, b_));
  refined_.emplace(visit.design, std::move(r));
  queue_.push({bound, 1, visit.design});
}

std::optional<size_t> SpotlightSearch::next_pass(const Refined& r, bool easy_only) const {
  for (const bool hard : {false, true})
    for (size_t j = 0; j < pass_order_.size(); ++j)
      if (!r.exact[j] && r.hard[j] == hard && !(hard && easy_only)) return j;
  return std::nullopt;
}

void SpotlightSearch::refine(const Visit& visit) {
  // Refine the design's passes in turn while it stays ahead of every other design waiting; once it falls
  // behind one, it waits with its raised bound.
  Refined& r = refined_.at(visit.design);
  if (r.exact.empty()) {
    ++choice_.designs_scheduled;
    r.exact.assign(pass_order_.size(), 0);
    r.hard.assign(pass_order_.size(), 0);
  }
  double bound = visit.bound;
  while (r.scheduled < pass_order_.size())
    if (refine_pass(r, visit.design, *next_pass(r, false), bound) == Step::kBehind) break;
  if (r.scheduled < pass_order_.size()) {
    if (loses(bound, visit.design))
      refined_.erase(visit.design);
    else
      queue_.push({bound, 2, visit.design});
    return;
  }
  const double objective = per_sample(r.passes, nodes_, b_);
  refined_.erase(visit.design);
  if (!choice_.found || objective < best_ || (objective == best_ && tie_key(visit.design) < tie_key(best_design_))) {
    choice_.found = true;
    best_ = objective;
    best_design_ = visit.design;
  }
}

SpotlightSearch::Step SpotlightSearch::refine_pass(Refined& r, size_t design, size_t j, double& bound) {
  const auto [m, k] = pass_order_[j];
  const schedule::Problem problem = problem_of(designs_[design].arch, m, k);
  PassKnowledge::Known& known = knowledge_.of(problem);
  double& pass = r.passes[m][k];
  if (!known.makespan_s && !known.tried) {
    // Most passes are scheduled exactly in a few nodes (or by segments): those are simply solved. The
    // makespan is the schedule cache's (the default solver's), not the quick solve's, so that it is the one
    // every other path reports, to the last bit.
    known.tried = true;
    if (quick_nodes_ < 0 || (quick_nodes_ > 0 && quick_->solve(problem).proven_optimal))
      known.makespan_s = scheduling_.cache->solve(problem, *scheduling_.solver).makespan_s;
  }
  if (!known.makespan_s) {
    // A design most often loses on a bound of its pass a little above the root bound: showing that no
    // schedule beats it costs a fraction of proving the optimum.
    pass = std::max(pass, known.floor_s * kBoundSlack);
    bound = std::max(bound, per_sample(r.passes, nodes_, b_));
    if (behind(bound, design)) return Step::kBehind;
    if (probe(known, problem, pass, bound, m, k)) {
      pass = std::max(pass, known.floor_s * kBoundSlack);
      bound = std::max(bound, per_sample(r.passes, nodes_, b_));
      return behind(bound, design) ? Step::kBehind : Step::kNext;
    }
    // The pass is faster than any target that would help: it is scheduled exactly, after the passes still to
    // be refined otherwise (its bound may yet make do once theirs are known).
    if (!r.hard[j]) {
      r.hard[j] = 1;
      if (next_pass(r, true)) return Step::kNext;
    }
    known.makespan_s = scheduling_.cache->solve(problem, *scheduling_.solver).makespan_s;
  }
  pass = *known.makespan_s;
  r.exact[j] = 1;
  if (++r.scheduled == pass_order_.size()) return Step::kNext;
  bound = std::max(bound, per_sample(r.passes, nodes_, b_));
  return behind(bound, design) ? Step::kBehind : Step::kNext;
}

bool SpotlightSearch::probe(PassKnowledge::Known& known, const schedule::Problem& problem, double held, double bound,
                            size_t m, size_t k) {
  const double next = queue_.empty() ? kInfinity : queue_.top().bound;
  // The objective is linear in the pass time: the time at which the design's bound would reach a figure.
  // Past the best objective the design is out for good, so that target is never exceeded. Below it, the
  // target is first a step above what is known, so that a design does not come back for every small lead of
  // the one behind it; if the pass is faster than that, the target is what just puts the design behind the
  // next one, unless that is hardly more than is known.
  // The pass's weight in per_sample: its layer's chain nodes, over b and the number of models.
  const double slope = nodes_[m][k / 2] / static_cast<double>(b_) / static_cast<double>(models_);
  auto reach = [&](double objective) { return (held + (objective - bound) / slope) * (1 + 1e-6); };
  const double cap = choice_.found ? reach(best_) : kInfinity;
  const double first = std::min(cap, std::max(reach(next), held / kBoundSlack * (1 + kProbeStep)));
  const double last = std::min(cap, reach(next));
  bool shown = false;
  for (const double target : {first, last}) {
    if (shown || target == kInfinity || target >= known.ceiling_s || known.probes >= kMostProbes) continue;
    if (target == last && (last >= first || last < held / kBoundSlack * (1 + kProbeStep / 20))) continue;
    ++known.probes;
    if (schedule::exact_proves_at_least(problem, target, kProbeNodes))
      shown = true, known.floor_s = std::max(known.floor_s, target);
    else
      known.ceiling_s = std::min(known.ceiling_s, target);
  }
  return shown;
}

}  // namespace

SpotlightChoice spotlight_choice(const SearchQuestion& q, const std::vector<hw::Design>& designs, int64_t b,
                                 Scheduling& scheduling, int64_t quick_nodes) {
  return SpotlightSearch(q, designs, b, scheduling, quick_nodes).run();
}

SpotlightArgmins::SpotlightArgmins(const SearchQuestion& question, const std::vector<hw::Design>& designs,
                                   ScheduleCache& cache)
    : question_(question), designs_(designs), cache_(cache), choices_(question.micro_batches.size()) {}

void SpotlightArgmins::work() {
  size_t i = next_++;
  if (i >= choices_.size()) return;
  const auto start = std::chrono::steady_clock::now();
  // Each thread with its own estimator and solver (the schedule cache is shared).
  Scheduling own = make_scheduling(question_, cache_);
  for (; i < choices_.size(); i = next_++)
    choices_[i] = spotlight_choice(question_, designs_, question_.micro_batches[i], own);
  std::lock_guard lock(mutex_);
  seconds_ += seconds_since(start);
}

std::vector<SpotlightChoice> SpotlightArgmins::take() {
  work();  // any size no thread took
  return std::move(choices_);
}

// ---- GPU clusters ----

GpuBaseline gpu_baseline(const SearchQuestion& q, const hw::System& system) {
  GpuBaseline out;
  out.system = system.name;
  const hw::Gpu& gpu = hw::gpu_of(system);
  out.gpu = gpu.name;
  out.peak_flop_per_s = hw::peak_tensor_flop_per_s(gpu);
  double sum = 0;
  bool all = true;
  for (const ModelCase& m : q.models) {
    megatron::GpuPlanQuestion plan_q;
    plan_q.gpus = q.devices;
    plan_q.global_batch = q.global_batch;
    plan_q.seq = m.seq;
    plan_q.features = megatron::current_practice();
    plan_q.features.memory_reserve_bytes = 0;  // what fits, as the designs' memory rule has it
    plan_q.try_fp8 = false;
    plan_q.top = 1;
    const megatron::GpuPlanAnswer a = megatron::search_gpu_plans(m.spec, system, plan_q);
    if (a.best.empty()) {
      out.plans.emplace_back();
      all = false;
      continue;
    }
    out.plans.push_back(a.best.front());
    sum += static_cast<double>(q.global_batch) / a.best.front().time.iteration_s;
  }
  if (all && !q.models.empty()) out.average_samples_per_s = sum / static_cast<double>(q.models.size());
  return out;
}

// ---- All of them ----

Baselines compute_baselines(const SearchQuestion& q, const std::optional<PointOutcome>& best,
                            const std::optional<PointOutcome>& tpuv4_best, const Workload& workload,
                            ScheduleCache& cache, int threads, BaselineTimes* times, SpotlightArgmins* argmins) {
  const auto begin = std::chrono::steady_clock::now();
  const double taken_before_s = argmins ? argmins->seconds() : 0.0;  // argmins the search's threads took
  Baselines out;
  BaselineTimes spent;
  Scheduling scheduling = make_scheduling(q, cache);

  // The strict TPUv4-like point: the same evaluation as the search's, with 32 GiB as the only HBM size.
  auto start = std::chrono::steady_clock::now();
  SearchQuestion strict = q;
  strict.hbm_bytes = {kTpuv4HbmBytes};
  Workload strict_workload = workload;
  strict_workload.question = &strict;
  Evaluator strict_evaluator(strict_workload, cache);
  out.tpuv4_32gib = best_feasible(
      strict_evaluator.evaluate(tpuv4_design(strict), [](const std::string&) { return true; }), q.ranking);
  spent.tpuv4_32gib_s = seconds_since(start);

  start = std::chrono::steady_clock::now();
  if (best) out.hand_set_on_best = hand_set_at(q, *best, scheduling);
  if (tpuv4_best) out.hand_set_on_tpuv4 = hand_set_at(q, *tpuv4_best, scheduling);
  spent.hand_set_s = seconds_since(start);

  // Spotlight-style: the argmin per micro-batch, then that design through the search's evaluation at that
  // micro-batch over every HBM size and recomputation setting.
  // The argmins of the micro-batch sizes are independent: threads take them in turn, and the results stay in
  // the question's order.
  std::vector<hw::Design> designs;
  std::optional<SpotlightArgmins> own_argmins;
  if (!argmins) {
    designs = search_designs(q);
    argmins = &own_argmins.emplace(q, designs, cache);
    run_on_threads(std::min<int>(threads, static_cast<int>(q.micro_batches.size())), [&] { argmins->work(); });
  }
  std::vector<SpotlightChoice> choices = argmins->take();
  const auto evaluating = std::chrono::steady_clock::now();
  Evaluator evaluator(workload, cache);
  for (SpotlightChoice& choice : choices) {
    const int64_t b = choice.micro_batch;
    spent.spotlight_estimated += choice.designs_estimated;
    spent.spotlight_scheduled += choice.designs_scheduled;
    if (choice.found) {
      std::set<std::string> keys;
      for (int64_t hbm : q.hbm_bytes)
        for (bool rc : recompute_values(q.recompute)) {
          hw::Architecture a = choice.design.arch;
          a.hbm_bytes = hbm;
          keys.insert(point_key(a, b, rc));
        }
      choice.best = best_feasible(
          evaluator.evaluate(choice.design, [&](const std::string& key) { return keys.contains(key); }), q.ranking);
    }
    const SpotlightBaseline& s = out.spotlight;
    if (choice.best && (!s.chosen || better(*choice.best, *s.per_micro_batch[*s.chosen].best, q.ranking)))
      out.spotlight.chosen = s.per_micro_batch.size();
    out.spotlight.per_micro_batch.push_back(std::move(choice));
  }
  spent.spotlight_s = argmins->seconds() + seconds_since(evaluating);
  start = std::chrono::steady_clock::now();
  for (const hw::System& system : q.gpu_baselines) out.gpu.push_back(gpu_baseline(q, system));
  spent.gpu_s = seconds_since(start);
  spent.total_s = seconds_since(begin) + taken_before_s;
  if (times) *times = spent;
  return out;
}

}  // namespace phaze::search
