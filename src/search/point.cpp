#include "search/point.h"

#include <algorithm>

namespace phaze::search {

namespace {

using nlohmann::json;

json parts_json(const placement::BatchTimeParts& p) {
  return json::array({p.steady_state, p.fill_drain, p.data_parallel_sync, p.optimizer_step});
}

placement::BatchTimeParts parts_from(const json& j) {
  return {j.at(0).get<double>(), j.at(1).get<double>(), j.at(2).get<double>(), j.at(3).get<double>()};
}

json model_json(const ModelOutcome& m) {
  if (!m.feasible) return json{{"feasible", false}, {"reason", m.reason}};
  json stages = json::array();
  for (const placement::Stage& s : m.stages) stages.push_back(json::array({s.first, s.last, s.devices}));
  json layers = json::array();
  for (const LayerFigures& l : m.layers)
    layers.push_back(json::array({l.forward_s, l.backward_s, l.forward_j, l.backward_j}));
  json out{{"feasible", true},
           {"t", m.width},
           {"d", m.data_parallel},
           {"stages", stages},
           {"time", m.time_per_batch_s},
           {"parts", parts_json(m.parts)},
           {"samples_per_s", m.samples_per_s},
           {"tokens_per_s", m.tokens_per_s},
           {"energy_j", m.energy_per_batch_j},
           {"tc_util", m.tensor_utilisation},
           {"vc_util", m.vector_utilisation},
           {"mfu", m.flops_utilisation},
           {"proven", m.schedules_proven},
           {"layers", layers}};
  if (!m.stage_memory_bytes.empty()) out["memory"] = m.stage_memory_bytes;
  // Only under Megatron-LM execution or the stagewise planner, so that the records of PHAZE's planner stay
  // as they were.
  if (const auto* g = std::get_if<MegatronSettings>(&m.settings)) {
    out["megatron"] = json::array(
        {g->chunks, g->sequence_parallel, megatron::to_string(g->recompute), g->zero, g->peak_memory_bytes});
    // Only with expert parallelism, so that the records without it stay as they were.
    if (g->expert_parallel != 1) out["megatron"].push_back(g->expert_parallel);
  }
  if (const auto* w = std::get_if<StagewiseSettings>(&m.settings)) {
    json stagewise = json::array();
    for (const StageSettings& s : w->stages) stagewise.push_back(json::array({s.width, s.data_parallel, s.recomputed}));
    out["stagewise"] = stagewise;
  }
  return out;
}

ModelOutcome model_from(const json& j) {
  ModelOutcome m;
  m.feasible = j.at("feasible").get<bool>();
  if (!m.feasible) {
    m.reason = j.at("reason").get<std::string>();
    return m;
  }
  m.width = j.at("t").get<int64_t>();
  m.data_parallel = j.at("d").get<int64_t>();
  for (const json& s : j.at("stages"))
    m.stages.push_back({s.at(0).get<int>(), s.at(1).get<int>(), s.at(2).get<int64_t>()});
  m.time_per_batch_s = j.at("time").get<double>();
  m.parts = parts_from(j.at("parts"));
  m.samples_per_s = j.at("samples_per_s").get<double>();
  m.tokens_per_s = j.at("tokens_per_s").get<double>();
  m.energy_per_batch_j = j.at("energy_j").get<double>();
  m.tensor_utilisation = j.at("tc_util").get<double>();
  m.vector_utilisation = j.at("vc_util").get<double>();
  m.flops_utilisation = j.at("mfu").get<double>();
  m.schedules_proven = j.at("proven").get<bool>();
  const json& layers = j.at("layers");
  for (const json& l : layers)
    m.layers.push_back({l.at(0).get<double>(), l.at(1).get<double>(), l.at(2).get<double>(), l.at(3).get<double>()});
  if (j.contains("memory")) m.stage_memory_bytes = j.at("memory").get<std::vector<double>>();
  if (j.contains("megatron")) {
    const json& g = j.at("megatron");
    m.settings = MegatronSettings{g.at(0).get<int64_t>(), g.at(1).get<bool>(),
                                  megatron::parse_recompute(g.at(2).get<std::string>(), "megatron"),
                                  // Records of before ZeRO 2/3 hold whether the optimizer was distributed.
                                  g.at(3).is_boolean() ? int64_t{g.at(3).get<bool>()} : g.at(3).get<int64_t>(),
                                  g.at(4).get<double>(), g.size() > 5 ? g.at(5).get<int64_t>() : int64_t{1}};
  }
  if (j.contains("stagewise")) {
    StagewiseSettings w;
    for (const json& s : j.at("stagewise"))
      w.stages.push_back({s.at(0).get<int64_t>(), s.at(1).get<int64_t>(), s.at(2).get<std::vector<int>>()});
    m.settings = std::move(w);
  }
  return m;
}

}  // namespace

double peak_memory_bytes(const ModelOutcome& m) {
  if (const auto* g = std::get_if<MegatronSettings>(&m.settings)) return g->peak_memory_bytes;
  return m.stage_memory_bytes.empty() ? 0.0
                                      : *std::max_element(m.stage_memory_bytes.begin(), m.stage_memory_bytes.end());
}

json to_record(const PointOutcome& p) {
  json models = json::array();
  for (const ModelOutcome& m : p.models) models.push_back(model_json(m));
  return json{{"design", chip_array(p.design)},
              {"area_um2", p.area_um2},
              {"hbm_bytes", p.design.hbm_bytes},
              {"mbs", p.micro_batch},
              {"recompute", p.recompute},
              {"feasible", p.feasible},
              {"score", p.score},
              {"models", models}};
}

PointOutcome from_record(const std::string& key, const json& r) {
  PointOutcome p;
  p.key = key;
  read_chip_array(r.at("design"), p.design);
  p.design.hbm_bytes = r.at("hbm_bytes").get<int64_t>();
  p.area_um2 = r.at("area_um2").get<double>();
  p.micro_batch = r.at("mbs").get<int64_t>();
  p.recompute = r.at("recompute").get<bool>();
  p.feasible = r.at("feasible").get<bool>();
  p.score = r.at("score").get<double>();
  for (const json& m : r.at("models")) p.models.push_back(model_from(m));
  return p;
}

PointOutcome as_recorded(const PointOutcome& p) {
  return from_record(p.key, json::parse(to_record(p).dump()));
}

std::optional<PointOutcome> best_feasible(const std::vector<PointOutcome>& points, Ranking ranking) {
  std::optional<PointOutcome> best;
  for (const PointOutcome& p : points) {
    if (!p.feasible) continue;
    PointOutcome recorded = as_recorded(p);
    if (!best || better(recorded, *best, ranking)) best = std::move(recorded);
  }
  return best;
}

bool before(const PointOutcome& a, const PointOutcome& b) {
  return canonical_before(a, b);
}

namespace {

/// The order of points of equal score.
bool tie_before(const PointOutcome& a, const PointOutcome& b, Ranking ranking) {
  if (ranking == Ranking::SmallerArea && a.area_um2 != b.area_um2) return a.area_um2 < b.area_um2;
  return before(a, b);
}

}  // namespace

bool better(const PointOutcome& a, const PointOutcome& b, Ranking ranking) {
  if (a.feasible != b.feasible) return a.feasible;
  if (a.score != b.score) return a.score > b.score;
  return tie_before(a, b, ranking);
}

bool better_for_model(const PointOutcome& a, const PointOutcome& b, size_t m, Ranking ranking) {
  const bool fa = m < a.models.size() && a.models[m].feasible, fb = m < b.models.size() && b.models[m].feasible;
  if (fa != fb) return fa;
  if (fa && a.models[m].samples_per_s != b.models[m].samples_per_s)
    return a.models[m].samples_per_s > b.models[m].samples_per_s;
  return tie_before(a, b, ranking);
}

bool same_entry(const PointOutcome& a, const PointOutcome& b, Ranking ranking) {
  return ranking == Ranking::SmallerArea ? same_chip(a.design, b.design) : same_design(a.design, b.design);
}

}  // namespace phaze::search
