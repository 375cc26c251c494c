#include "search/chain_points.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "placement/plan_check.h"
#include "placement/stage_costs.h"

namespace phaze::search {

std::optional<size_t> ChainPoints::fitting_index(size_t model, size_t j) const {
  const std::vector<size_t>& f = fitting[model];
  const auto at = std::find(f.begin(), f.end(), j);
  if (at == f.end()) return std::nullopt;
  return static_cast<size_t>(at - f.begin());
}

std::optional<ChainPoints> chain_points(const Workload& workload, const hw::Design& design, size_t index,
                                        const std::function<bool(const std::string&)>& wanted) {
  const SearchQuestion& q = *workload.question;
  const int64_t b = q.micro_batches[index];
  ChainPoints mb;
  mb.index = index;
  for (int64_t hbm : q.hbm_bytes)
    for (bool rc : recompute_values(q.recompute)) {
      hw::Architecture a = design.arch;
      a.hbm_bytes = hbm;
      std::string key = point_key(a, b, rc);
      if (!wanted(key)) continue;
      mb.todo.emplace_back(hbm, rc);
      mb.keys.push_back(std::move(key));
    }
  if (mb.todo.empty()) return std::nullopt;
  // A model that fits at none of the points to do has no plan at any of them, schedules or not.
  mb.clusters.resize(q.models.size());
  mb.fitting.resize(q.models.size());
  for (size_t mi = 0; mi < q.models.size(); ++mi)
    for (size_t j = 0; j < mb.todo.size(); ++j) {
      const auto& [hbm, rc] = mb.todo[j];
      if (!workload.fits_in_memory(mi, index, hbm, rc)) continue;
      hw::Architecture a = design.arch;
      a.hbm_bytes = hbm;
      mb.clusters[mi].push_back(make_cluster(q, a, b, hbm, rc));
      mb.fitting[mi].push_back(j);
    }
  mb.left_out.assign(mb.todo.size(), 0);
  mb.dropped.assign(mb.todo.size(), 0);
  return mb;
}

std::vector<PointOutcome> assemble_points(const Workload& workload, const hw::Design& design,
                                          const std::vector<const ChainPoints*>& points,
                                          const std::function<bool(const std::string&)>& wanted,
                                          const ModelOutcomeOf& outcome) {
  const SearchQuestion& q = *workload.question;
  std::vector<PointOutcome> out;
  for (size_t batch = 0; batch < points.size(); ++batch) {
    const ChainPoints& mb = *points[batch];
    const int64_t b = q.micro_batches[mb.index];
    for (size_t j = 0; j < mb.todo.size(); ++j) {
      if (mb.left_out[j] || mb.dropped[j] || !wanted(mb.keys[j])) continue;
      const auto& [hbm, rc] = mb.todo[j];
      PointOutcome p = empty_point(design, hbm, b, rc);
      for (size_t mi = 0; mi < q.models.size(); ++mi) {
        const std::optional<size_t> k = mb.fitting_index(mi, j);
        if (k) {
          p.models.push_back(outcome(batch, mi, *k, p.design));
        } else {
          ModelOutcome m;
          m.reason = no_plan_fits_reason(hbm, q.devices);
          p.models.push_back(std::move(m));
        }
      }
      score_point(p);
      out.push_back(std::move(p));
    }
  }
  std::sort(out.begin(), out.end(), before);
  return out;
}

ModelOutcome chain_outcome(const ChainPoints& points, size_t model, size_t k, int64_t devices, bool any_width,
                           bool planned, const std::function<ModelOutcome()>& outcome) {
  ModelOutcome m;
  if (!any_width) {
    m.reason = no_estimate_reason();
  } else if (!planned) {
    m.reason = no_plan_fits_reason(points.todo[points.fitting[model][k]].first, devices);
  } else {
    m = outcome();
  }
  return m;
}

void find_chain_fitting(
    Workload& w,
    const std::function<bool(const std::vector<placement::Chain>&, const placement::Cluster&)>& any_plan_fits) {
  const SearchQuestion& q = *w.question;
  auto unit_chain = [](const model::LayerGraph& graph) {
    LayerSchedules unit;
    unit.layers.resize(graph.distinct_layers().size());
    for (LayerSchedules::Passes& p : unit.layers)
      for (PassSummary* s : {&p.forward, &p.backward}) *s = {true, 1.0, 0, 0, 0, true, 1.0};
    return make_chain(graph, unit);
  };
  const hw::Architecture base = enumeration_options(q).base;
  for (size_t mi = 0; mi < q.models.size(); ++mi) {
    auto& per_model = w.fits.emplace_back();
    for (size_t bi = 0; bi < q.micro_batches.size(); ++bi) {
      std::vector<placement::Chain> chains;
      for (const model::LayerGraph& graph : w.graphs[mi][bi]) chains.push_back(unit_chain(graph));
      auto& per_mbs = per_model.emplace_back();
      for (int64_t hbm : q.hbm_bytes) {
        std::array<bool, 2>& fits = per_mbs.emplace_back();
        for (bool rc : {false, true})
          fits[rc ? 1 : 0] = any_plan_fits(chains, make_cluster(q, base, q.micro_batches[bi], hbm, rc));
      }
    }
  }
}

std::string ChainPricer::hand_set_rule() const {
  return "embedding in the first stage, ⌈L/p⌉ layers per stage, head in the last";
}

PlanPrice ChainPricer::price_hand_set(const SearchQuestion& q, const ModelCase&, const model::LayerGraph& graph,
                                      const placement::HandSetPlan& plan, const std::vector<placement::Stage>& stages,
                                      const hw::Architecture& design, bool recompute, Scheduling& scheduling) {
  PlanPrice out;
  const LayerSchedules schedules = schedule_layers(graph, design, scheduling);
  if (!schedules.feasible()) {
    out.reason = no_estimate_at_width_reason(plan.width);
    return out;
  }
  const placement::Cluster cluster = make_cluster(q, design, graph.shape.micro_batch, design.hbm_bytes, recompute);
  placement::StageCosts costs;
  costs.compute(make_chain(graph, schedules), cluster);
  const placement::PlanCheck check = placement::check_plan(costs, stages, plan.data_parallel, cluster);
  if (!check.feasible) {
    out.reason = check.reason;
    return out;
  }
  out.feasible = true;
  out.time_per_batch_s = check.time_per_batch;
  out.parts = check.parts;
  return out;
}

}  // namespace phaze::search
