#include "io/pipeline_trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <variant>

#include "io/schedule_trace.h"
#include "io/search_report.h"
#include "model/layer_graph.h"
#include "schedule/layer_problem.h"
#include "search/baselines.h"
#include "search/layer_scheduling.h"

namespace phaze::io {

namespace {

/// One part of a micro-batch's slot on a stage: a pass or a communication, in the order the slot runs them.
struct Phase {
  std::string name;  ///< "forward", "backward", "tensor-parallel collectives", ...
  bool communication = false;
  double duration_s = 0;
};

/// One stage: its name, the micro-batches each of its replicas runs and what a micro-batch's slot holds
/// (nothing: the whole slot, one event).
struct StageTrack {
  std::string label;
  int64_t micro_batches = 0;
  std::vector<Phase> phases;
};

/// What an iteration's time is made of, in seconds.
struct IterationParts {
  double steady_s = 0;  ///< the critical stage's micro-batches
  double fill_s = 0;    ///< filling and draining the pipeline
  double sync_s = 0;    ///< the gradients' synchronisation left exposed
  double optimizer_s = 0;
  std::string sync_name;
};

/// Micro-batch i's phases from `start_s`, compute on `compute`, communication on `comm`.
void slot_events(Timeline& t, const StageTrack& stage, size_t compute, size_t comm, int64_t i, double start_s,
                 double slot_s) {
  if (stage.phases.empty()) {
    t.events.push_back({fmt::format("micro-batch {}", i + 1), "compute", compute, start_s, slot_s, {}});
    return;
  }
  double at = start_s;
  for (const Phase& ph : stage.phases) {
    if (ph.duration_s > 0)
      t.events.push_back({fmt::format("{} {}", ph.name, i + 1),
                          ph.communication ? "communication" : "compute",
                          ph.communication ? comm : compute,
                          at,
                          ph.duration_s,
                          {}});
    at += ph.duration_s;
  }
}

/// A stage's micro-batches back to back from `start_s`; beyond kTracedMicroBatches the middle ones as one event
/// per track.
void stage_events(Timeline& t, const StageTrack& stage, size_t compute, size_t comm, double start_s, double slot_s) {
  const int64_t half = kTracedMicroBatches / 2;
  const bool merged = stage.micro_batches > kTracedMicroBatches;
  const bool any_comm = std::any_of(stage.phases.begin(), stage.phases.end(),
                                    [](const Phase& ph) { return ph.communication && ph.duration_s > 0; });
  for (int64_t i = 0; i < stage.micro_batches; ++i) {
    const double at = start_s + static_cast<double>(i) * slot_s;
    if (merged && i == half) {
      const int64_t next = stage.micro_batches - half;  // the first micro-batch after the merged run (0-based)
      const std::string name = fmt::format("micro-batches {}–{}", half + 1, next);
      const double span = static_cast<double>(next - half) * slot_s;
      t.events.push_back({name, "compute", compute, at, span, {}});
      if (any_comm) t.events.push_back({name, "communication", comm, at, span, {}});
      i = next - 1;
      continue;
    }
    slot_events(t, stage, compute, comm, i, at, slot_s);
  }
}

Timeline pipeline_timeline(const std::string& name, const std::vector<StageTrack>& stages,
                           const IterationParts& parts) {
  Timeline t;
  t.name = name;
  int64_t most = 1;
  for (const StageTrack& s : stages) most = std::max(most, s.micro_batches);
  const double slot_s = parts.steady_s / static_cast<double>(most);
  const double step_s = stages.size() > 1 ? parts.fill_s / static_cast<double>(stages.size() - 1) : 0;
  for (size_t k = 0; k < stages.size(); ++k) {
    const size_t compute = t.tracks.size();
    t.tracks.push_back(stages[k].label);
    size_t comm = compute;
    if (std::any_of(stages[k].phases.begin(), stages[k].phases.end(),
                    [](const Phase& ph) { return ph.communication && ph.duration_s > 0; })) {
      comm = t.tracks.size();
      t.tracks.push_back(stages[k].label + " communication");
    }
    stage_events(t, stages[k], compute, comm, static_cast<double>(k) * step_s, slot_s);
  }
  const size_t tail = t.tracks.size();
  t.tracks.push_back("gradients and optimizer");
  const double pipeline_s = parts.steady_s + parts.fill_s;
  t.events.push_back({parts.sync_name, "communication", tail, pipeline_s, parts.sync_s, {}});
  t.events.push_back({"optimizer step", "optimizer", tail, pipeline_s + parts.sync_s, parts.optimizer_s, {}});
  return t;
}

Timeline model_timeline(const search::SearchQuestion& q, const search::ModelCase& mc, const search::PointOutcome& p,
                        const search::ModelOutcome& m) {
  const auto* stagewise = std::get_if<search::StagewiseSettings>(&m.settings);
  const auto* megatron = std::get_if<search::MegatronSettings>(&m.settings);
  const int64_t micro_batches = q.global_batch / p.micro_batch;
  std::vector<StageTrack> stages;
  for (size_t k = 0; k < m.stages.size(); ++k) {
    const placement::Stage& s = m.stages[k];
    const int64_t width = stagewise ? stagewise->stages[k].width : m.width;
    const int64_t degree = stagewise ? stagewise->stages[k].data_parallel : m.data_parallel;
    StageTrack track{
        fmt::format("stage {}: {}–{} (t {}, d {})", k + 1, chain_position_name(s.first, mc.spec.num_layers),
                    chain_position_name(s.last - 1, mc.spec.num_layers), width, degree),
        (micro_batches + degree - 1) / degree,
        {}};
    // Under PHAZE's execution a slot holds the stage's layer passes at the chosen width, then waits for the
    // slowest stage (the time model gives every slot the largest load); a stage's own passes come from the
    // layers' figures, which stagewise plans at other widths do not have.
    if (!megatron && !stagewise && !m.layers.empty()) {
      double forward = 0, backward = 0, recompute = 0;
      for (int v = s.first; v < s.last; ++v) {
        const search::LayerFigures& f = m.layers[model::distinct_layer_index(mc.spec, v)];
        forward += f.forward_s;
        backward += f.backward_s;
      }
      if (p.recompute && k + 1 < m.stages.size()) recompute = forward;
      track.phases = {{"forward", false, forward}, {"recompute", false, recompute}, {"backward", false, backward}};
    }
    stages.push_back(std::move(track));
  }
  const IterationParts parts{m.parts.steady_state, m.parts.fill_drain, m.parts.data_parallel_sync,
                             m.parts.optimizer_step, "data-parallel gradient synchronisation"};
  return pipeline_timeline(
      fmt::format("{} at micro-batch {}, recomputation {}", mc.spec.name, p.micro_batch, p.recompute ? "on" : "off"),
      stages, parts);
}

}  // namespace

std::vector<Timeline> best_point_timelines(const search::SearchQuestion& q, const search::PointOutcome& p) {
  std::vector<Timeline> out;
  for (size_t i = 0; i < q.models.size() && i < p.models.size(); ++i)
    if (p.models[i].feasible) out.push_back(model_timeline(q, q.models[i], p, p.models[i]));
  return out;
}

std::vector<Timeline> best_point_layer_timelines(const search::SearchQuestion& q, const search::PointOutcome& p) {
  std::vector<Timeline> out;
  search::ScheduleCache cache;
  search::Scheduling scheduling = search::make_scheduling(q, cache);
  for (size_t i = 0; i < q.models.size() && i < p.models.size(); ++i) {
    const search::ModelOutcome& m = p.models[i];
    if (!m.feasible) continue;
    const search::ModelCase& mc = q.models[i];
    const auto* megatron = std::get_if<search::MegatronSettings>(&m.settings);
    const int64_t experts = megatron ? megatron->expert_parallel : 1;
    const model::LayerGraph graph = model::build_layer_graph(
        mc.spec, search::layer_shape(q, mc, p.micro_batch, m.width, experts), model::Precision{}, mc.source);
    const model::Layer& layer = graph.node(graph.first_main_node());
    for (const auto& [pass, name] : {std::pair(&layer.forward, "forward"), std::pair(&layer.backward, "backward")}) {
      // The whole chip: the point keeps its cores and buffers, the question its bandwidth, clock and SRAMs.
      const schedule::Problem problem =
          schedule::layer_problem(*pass, search::point_architecture(q, p.design), scheduling.estimator);
      const schedule::Schedule schedule = scheduling.solver->solve(problem);
      out.push_back(
          schedule_timeline(fmt::format("{}: a transformer layer's {} pass on the best design (t {}, micro-batch {})",
                                        mc.spec.name, name, m.width, p.micro_batch),
                            problem, schedule));
    }
  }
  return out;
}

Timeline prediction_timeline(const std::string& name, const megatron::StepPrediction& prediction) {
  const megatron::TrainingPlan& plan = prediction.plan;
  const megatron::StepTime& time = prediction.time;
  const double m = static_cast<double>(std::max<int64_t>(prediction.micro_batches, 1));
  // The busiest stage's micro-batch, every kernel, collective and send of it, priced one after the other.
  const std::vector<Phase> phases{{"forward", false, time.forward_s / m},
                                  {"recompute", false, time.recompute_s / m},
                                  {"backward", false, time.backward_s / m},
                                  {"tensor-parallel collectives", true, time.tp_comm_s / m},
                                  {"context-parallel exchange", true, time.cp_comm_s / m},
                                  {"expert all-to-alls", true, time.ep_comm_s / m},
                                  {"pipeline sends", true, time.pp_comm_s / m}};
  std::vector<StageTrack> stages;
  for (int64_t k = 0; k < plan.pp; ++k)
    stages.push_back({fmt::format("stage {} (t {}, c {}, d {}, v {})", k + 1, plan.tp, plan.cp, plan.dp, plan.vp),
                      prediction.micro_batches, phases});
  const double steady_s = time.forward_s + time.backward_s + time.recompute_s + time.tp_comm_s + time.cp_comm_s +
                          time.ep_comm_s + time.pp_comm_s;
  const IterationParts parts{steady_s, time.bubble_s, time.dp_comm_s, time.optimizer_s,
                             "exposed gradient reduction and parameter gathering"};
  return pipeline_timeline(name, stages, parts);
}

}  // namespace phaze::io
