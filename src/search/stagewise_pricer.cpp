#include "search/stagewise_pricer.h"

#include "schedule/layer_problem.h"

namespace phaze::search {

void StagewisePricer::find_fitting(Workload& w) {
  find_chain_fitting(w, [&](const std::vector<placement::Chain>& chains, const placement::Cluster& cluster) {
    return planner_.feasible(chains, cluster);
  });
}

StagewisePricer::ModelPlans StagewisePricer::plan_model(const std::vector<model::LayerGraph>& graphs,
                                                        const hw::Architecture& design,
                                                        const std::vector<placement::Cluster>& clusters,
                                                        Scheduling& scheduling) {
  ModelPlans out;
  out.schedules.resize(graphs.size());
  std::vector<placement::Chain> chains;
  for (size_t wi = 0; wi < graphs.size(); ++wi) {
    const std::vector<schedule::Problem> problems = layer_problems(graphs[wi], design, scheduling.estimator);
    if (!all_finite(problems)) continue;
    out.any_width = true;
    const LayerSchedules& s = out.schedules[wi].emplace(solve_layers(problems, scheduling));
    unproven_ += s.unproven_passes();
    chains.push_back(make_chain(graphs[wi], s));
    out.chain_width.push_back(wi);
  }
  if (chains.empty()) return out;
  // The points differ only in memory and recomputation: each one's plan is a good first incumbent for the
  // others (it changes the work, not the answer).
  for (const placement::Cluster& cluster : clusters) out.plans.push_back(planner_.solve(chains, cluster, out.plans));
  return out;
}

std::vector<PointOutcome> StagewisePricer::price_points(const Workload& workload, Scheduling& scheduling,
                                                        const hw::Design& design,
                                                        const std::function<bool(const std::string&)>& wanted,
                                                        const LeaveOutTest&, std::vector<LeftOutPoint>*) {
  const SearchQuestion& q = *workload.question;
  std::vector<ChainPoints> work;
  std::vector<std::vector<ModelPlans>> plans;  // [micro-batch with points][model]
  for (size_t bi = 0; bi < q.micro_batches.size(); ++bi) {
    std::optional<ChainPoints> points = chain_points(workload, design, bi, wanted);
    if (!points) continue;
    std::vector<ModelPlans>& per_model = plans.emplace_back(q.models.size());
    for (size_t mi = 0; mi < q.models.size(); ++mi)
      if (!points->clusters[mi].empty())
        per_model[mi] = plan_model(workload.graphs[mi][bi], design.arch, points->clusters[mi], scheduling);
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
