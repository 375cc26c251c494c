#include "search/stagewise_pricer.h"

#include <algorithm>
#include <limits>

#include "placement/stagewise_bound.h"
#include "schedule/layer_problem.h"

namespace phaze::search {

void StagewisePricer::find_fitting(Workload& w) {
  find_chain_fitting(w, [&](const std::vector<placement::Chain>& chains, const placement::Cluster& cluster) {
    return planner_.feasible(chains, cluster);
  });
}

StagewisePricer::ModelBounds StagewisePricer::bound_model(const std::vector<model::LayerGraph>& graphs,
                                                          const hw::Architecture& design, Scheduling& scheduling,
                                                          bool with_chains) const {
  ModelBounds out;
  out.stand_ins.resize(graphs.size());
  for (size_t wi = 0; wi < graphs.size(); ++wi) {
    std::vector<schedule::Problem>& problems =
        out.problems.emplace_back(layer_problems(graphs[wi], design, scheduling.estimator));
    if (!all_finite(problems)) continue;
    if (with_chains) {
      const LayerSchedules& stand_ins = out.stand_ins[wi].emplace(bound_layers(problems, *scheduling.cache));
      out.chains.push_back(make_chain(graphs[wi], stand_ins));
    }
    out.chain_width.push_back(wi);
  }
  return out;
}

void StagewisePricer::leave_out_on_bounds(const Workload& workload, ChainPoints& points,
                                          const std::vector<ModelBounds>& bounds, const LeaveOutTest& leave_out,
                                          std::vector<LeftOutPoint>* left_out) {
  const SearchQuestion& q = *workload.question;
  // The points of a micro-batch share N, so each model's least energy per sample is the same for all of them.
  std::vector<double> least_energy(q.models.size(), 0);
  for (size_t mi = 0; mi < q.models.size(); ++mi)
    if (!points.clusters[mi].empty())
      least_energy[mi] = stagewise_batch_energy_bound_j(workload.graphs[mi][points.index], bounds[mi].stand_ins,
                                                        points.clusters[mi].front().micro_batches) /
                         static_cast<double>(q.global_batch);
  std::vector<std::optional<ModelBound>> most(q.models.size());
  for (size_t j = 0; j < points.todo.size(); ++j) {
    for (size_t mi = 0; mi < q.models.size(); ++mi) {
      const std::optional<size_t> k = points.fitting_index(mi, j);
      most[mi] = std::nullopt;
      if (!k || bounds[mi].chains.empty()) continue;
      const double floor_s = placement::stagewise_work_bound_s(bounds[mi].chains, points.clusters[mi][*k]);
      most[mi] = ModelBound{
          floor_s > 0 ? static_cast<double>(q.global_batch) / floor_s : std::numeric_limits<double>::infinity(),
          least_energy[mi]};
    }
    if (!leave_out(points.keys[j], most)) continue;
    points.left_out[j] = 1;
    // Whether a plan fits does not depend on the latencies: the chains at the root bounds tell.
    bool feasible = true;
    for (size_t mi = 0; mi < q.models.size() && feasible; ++mi) {
      const std::optional<size_t> k = points.fitting_index(mi, j);
      feasible = k && !bounds[mi].chains.empty() && planner_.feasible(bounds[mi].chains, points.clusters[mi][*k]);
    }
    if (left_out) left_out->push_back({points.keys[j], feasible});
  }
}

StagewisePricer::ModelPlans StagewisePricer::plan_model(const std::vector<model::LayerGraph>& graphs,
                                                        const ModelBounds& bounds,
                                                        const std::vector<placement::Cluster>& clusters,
                                                        const std::function<bool(size_t)>& needed,
                                                        Scheduling& scheduling) {
  ModelPlans out;
  out.schedules.resize(graphs.size());
  out.any_width = !bounds.chain_width.empty();
  out.plans.resize(clusters.size());
  bool any_needed = false;
  for (size_t k = 0; k < clusters.size(); ++k) any_needed = any_needed || needed(k);
  // Without a usable width there is nothing to schedule or plan (the planner takes at least one chain).
  if (!any_needed || !out.any_width) return out;
  std::vector<placement::Chain> chains;
  for (const size_t wi : bounds.chain_width) {
    const LayerSchedules& s = out.schedules[wi].emplace(solve_layers(bounds.problems[wi], scheduling));
    unproven_ += s.unproven_passes();
    chains.push_back(make_chain(graphs[wi], s));
    out.chain_width.push_back(wi);
  }
  // The points differ only in memory and recomputation: each one's plan is a good first incumbent for the
  // others (it changes the work, not the answer).
  std::vector<placement::StagewisePlan> hints;
  for (size_t k = 0; k < clusters.size(); ++k) {
    if (!needed(k)) continue;
    out.plans[k] = planner_.solve(chains, clusters[k], hints);
    hints.push_back(out.plans[k]);
  }
  return out;
}

std::vector<PointOutcome> StagewisePricer::price_points(const Workload& workload, Scheduling& scheduling,
                                                        const hw::Design& design,
                                                        const std::function<bool(const std::string&)>& wanted,
                                                        const LeaveOutTest& leave_out,
                                                        std::vector<LeftOutPoint>* left_out) {
  const SearchQuestion& q = *workload.question;
  std::vector<ChainPoints> work;
  std::vector<std::vector<ModelPlans>> plans;  // [micro-batch with points][model]
  for (size_t bi = 0; bi < q.micro_batches.size(); ++bi) {
    std::optional<ChainPoints> points = chain_points(workload, design, bi, wanted);
    if (!points) continue;
    std::vector<ModelBounds> bounds(q.models.size());
    for (size_t mi = 0; mi < q.models.size(); ++mi)
      if (!points->clusters[mi].empty())
        bounds[mi] = bound_model(workload.graphs[mi][bi], design.arch, scheduling, bool(leave_out));
    if (leave_out) leave_out_on_bounds(workload, *points, bounds, leave_out, left_out);
    std::vector<ModelPlans>& per_model = plans.emplace_back(q.models.size());
    for (size_t mi = 0; mi < q.models.size(); ++mi)
      if (!points->clusters[mi].empty())
        per_model[mi] = plan_model(
            workload.graphs[mi][bi], bounds[mi], points->clusters[mi],
            [&](size_t k) { return !points->left_out[points->fitting[mi][k]]; }, scheduling);
    work.push_back(std::move(*points));
  }
  std::vector<const ChainPoints*> points;
  for (const ChainPoints& mb : work) points.push_back(&mb);
  return assemble_points(
      workload, design, points, wanted, [&](size_t batch, size_t mi, size_t k, const hw::Architecture& point_design) {
        const ChainPoints& at = work[batch];
        const ModelPlans& mp = plans[batch][mi];
        return chain_outcome(at, mi, k, q.devices, mp.any_width, mp.any_width && mp.plans[k].feasible, [&] {
          return stagewise_outcome(workload.graphs[mi][at.index], mp.schedules, mp.chain_width, mp.plans[k],
                                   at.clusters[mi][k], point_design, q.global_batch);
        });
      });
}

void StagewisePricer::describe(const SearchQuestion&, nlohmann::ordered_json& settings) const {
  settings["planner"] = "stagewise";
}

std::string StagewisePricer::description(const SearchQuestion&) const {
  return "placement: stagewise (each stage its own t and d, each layer its own recomputation when on)\n";
}

}  // namespace phaze::search
