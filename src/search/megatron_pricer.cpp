#include "search/megatron_pricer.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "search/megatron_execution.h"
#include "util/input_error.h"

namespace phaze::search {

void MegatronPricer::find_fitting(Workload& w) {
  const SearchQuestion& q = *w.question;
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
}

std::vector<PointOutcome> MegatronPricer::price_points(const Workload& workload, Scheduling& scheduling,
                                                       const hw::Design& design,
                                                       const std::function<bool(const std::string&)>& wanted,
                                                       const LeaveOutTest&, std::vector<LeftOutPoint>*) {
  const SearchQuestion& q = *workload.question;
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
      std::vector<char> used(m.layouts(), 0);
      for (const Todo& t : todo)
        for (const megatron::TrainingPlan& plan : workload.megatron_fitting[mi][bi][t.hbm_index][t.recompute ? 1 : 0])
          used[m.layout_index(plan.tp, plan.ep)] = 1;
      widths[mi].resize(m.layouts());
      for (size_t wi = 0; wi < m.layouts(); ++wi) {
        if (!used[wi]) continue;
        widths[mi][wi] = megatron_width(workload.graphs[mi][bi][wi], design.arch, scheduling);
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
                                            workload.megatron_fitting[mi][bi][t.hbm_index][t.recompute ? 1 : 0],
                                            t.design));
      score_point(p);
      out.push_back(std::move(p));
    }
  }
  std::sort(out.begin(), out.end(), before);
  return out;
}

PlanPrice MegatronPricer::price_hand_set(const SearchQuestion& q, const ModelCase& mc, const model::LayerGraph& graph,
                                         const placement::HandSetPlan& plan, const std::vector<placement::Stage>&,
                                         const hw::Architecture& design, bool recompute, Scheduling& scheduling) {
  PlanPrice out;
  megatron::TrainingPlan run;
  run.tp = plan.width;
  run.pp = plan.pipeline;
  run.dp = plan.data_parallel;
  run.micro_batch = graph.shape.micro_batch;
  run.global_batch = q.global_batch;
  run.seq = mc.seq;
  run.recompute = recompute ? megatron::Recompute::Full : megatron::Recompute::None;
  run.overlap_dp = q.overlap_dp;
  try {
    megatron::validate(run, mc.spec);
  } catch (const InputError& e) {
    out.reason = fmt::format("Megatron-LM cannot run it: {}", e.what());
    return out;
  }
  const std::optional<MegatronWidth> width = megatron_width(graph, design, scheduling);
  if (!width) {
    out.reason = no_estimate_at_width_reason(plan.width);
    return out;
  }
  const megatron::StepPrediction p =
      megatron::predict_step(mc.spec, accelerator_step_device(design), q.network, run, width->costs);
  if (!p.memory.fits) {
    out.reason = fmt::format("stage {} needs {:.4g} GiB per device, more than the {:g} GiB of HBM", p.memory.stage + 1,
                             p.memory.peak_bytes / kGiB, static_cast<double>(design.hbm_bytes) / kGiB);
    return out;
  }
  out.feasible = true;
  out.time_per_batch_s = p.time.iteration_s;
  out.parts = megatron_parts(p.time);
  return out;
}

void MegatronPricer::describe(const SearchQuestion& q, nlohmann::ordered_json& settings) const {
  settings["execution"] = {{"kind", "megatron"}, {"overlap_dp", q.overlap_dp}, {"zero_stages", kMegatronZeroStages}};
}

std::string MegatronPricer::description(const SearchQuestion& q) const {
  return fmt::format(
      "execution: Megatron-LM (equal stages, 1F1B or interleaved, sequence parallelism, recomputation on = "
      "selective or full, ZeRO 0 to 3; gradient reduction {} the backward pass)\n",
      q.overlap_dp ? "overlapped with" : "after");
}

std::string MegatronPricer::hand_set_rule() const {
  return "L/p layers per stage, v = 1, no sequence parallelism, full recomputation when on, no distributed "
         "optimizer";
}

}  // namespace phaze::search
