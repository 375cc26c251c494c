#include "io/search_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <variant>
#include <vector>

#include "hw/architecture_json.h"
#include "hw/area.h"
#include "hw/network.h"
#include "hw/system_json.h"
#include "io/prediction_json.h"
#include "model/layer_graph.h"
#include "search/pricer.h"
#include "search/question_json.h"
#include "util/number_text.h"

namespace phaze::io {

using namespace phaze::search;

namespace {

using nlohmann::ordered_json;

/// A chip's cores and buffer, its HBM size unless `hbm` is false (a design chosen without one), its area.
ordered_json chip_json(const hw::Architecture& a, double area_um2, bool hbm = true) {
  ordered_json out = design_object(a, hbm);
  out["area_um2"] = area_um2;
  return out;
}

ordered_json design_json(const PointOutcome& p) {
  return chip_json(p.design, p.area_um2);
}

/// Devices of a plan: d replicas of the stages' devices, or each stage's own d under the stagewise planner.
int64_t devices_used(const ModelOutcome& m) {
  const auto* stagewise = std::get_if<StagewiseSettings>(&m.settings);
  int64_t devices = 0;
  for (size_t k = 0; k < m.stages.size(); ++k)
    devices += m.stages[k].devices * (stagewise ? stagewise->stages[k].data_parallel : m.data_parallel);
  return devices;
}

/// What the layer schedules' energy per batch gives per token and per device: tokens per joule, and the
/// average power of a device in use over the time per batch (watts; link and optimizer energy not included).
struct EnergyRates {
  double tokens_per_j = 0;
  double watts_per_device = 0;
};
EnergyRates energy_rates(const ModelOutcome& m) {
  EnergyRates r;
  const double devices = static_cast<double>(devices_used(m));
  if (m.energy_per_batch_j > 0) r.tokens_per_j = m.tokens_per_s * m.time_per_batch_s / m.energy_per_batch_j;
  if (m.time_per_batch_s > 0 && devices > 0) r.watts_per_device = m.energy_per_batch_j / m.time_per_batch_s / devices;
  return r;
}

ordered_json stage_json(const placement::Stage& s, int64_t layers) {
  if (s.first == s.last) return {{"layers", 0}, {"devices", s.devices}};
  return {{"first_layer", chain_position_name(s.first, layers)},
          {"last_layer", chain_position_name(s.last - 1, layers)},
          {"layers", s.last - s.first},
          {"devices", s.devices}};
}

ordered_json parts_json(const placement::BatchTimeParts& parts) {
  return {{"pipeline_steady_state", parts.steady_state},
          {"pipeline_fill_drain", parts.fill_drain},
          {"data_parallel_sync", parts.data_parallel_sync},
          {"optimizer_step", parts.optimizer_step}};
}

ordered_json model_json(const ModelCase& mc, const ModelOutcome& m) {
  ordered_json out{{"model", mc.spec.name}, {"feasible", m.feasible}};
  if (!m.feasible) {
    out["reason"] = m.reason;
    return out;
  }
  const int64_t layers = mc.spec.num_layers;
  const auto* stagewise = std::get_if<StagewiseSettings>(&m.settings);
  ordered_json stages = ordered_json::array();
  for (size_t k = 0; k < m.stages.size(); ++k) {
    ordered_json& stage = stages.emplace_back(stage_json(m.stages[k], layers));
    if (k < m.stage_memory_bytes.size()) stage["memory_bytes_per_device"] = m.stage_memory_bytes[k];
    // The stagewise planner's own settings of the stage.
    if (stagewise) {
      const StageSettings& s = stagewise->stages[k];
      stage["tensor_parallel"] = s.width;
      stage["data_parallel"] = s.data_parallel;
      ordered_json recomputed = ordered_json::array();
      for (int v : s.recomputed) recomputed.push_back(chain_position_name(v, layers));
      stage["recomputed_layers"] = recomputed;
    }
  }
  ordered_json figures = ordered_json::object();
  const std::vector<model::LayerKind> kinds = model::distinct_layer_kinds(mc.spec);
  for (size_t k = 0; k < m.layers.size() && k < kinds.size(); ++k)
    figures[model::to_string(kinds[k])] = {{"forward_s", m.layers[k].forward_s},
                                           {"backward_s", m.layers[k].backward_s},
                                           {"forward_energy_j", m.layers[k].forward_j},
                                           {"backward_energy_j", m.layers[k].backward_j}};
  out["plan"] = {{"tensor_parallel", m.width},
                 {"pipeline_stages", m.stages.size()},
                 {"data_parallel", m.data_parallel},
                 {"devices_used", devices_used(m)},
                 {"peak_memory_bytes_per_device", peak_memory_bytes(m)},
                 {"stages", stages}};
  if (stagewise) out["plan"]["stagewise"] = true;
  if (const auto* g = std::get_if<MegatronSettings>(&m.settings))
    out["plan"]["megatron"] = {{"chunks_per_device", g->chunks},
                               {"sequence_parallel", g->sequence_parallel},
                               {"recompute", megatron::to_string(g->recompute)},
                               {"distributed_optimizer", g->zero >= 1},
                               {"zero", g->zero},
                               {"peak_memory_bytes", g->peak_memory_bytes}};
  if (const auto* g = std::get_if<MegatronSettings>(&m.settings); g && g->expert_parallel != 1)
    out["plan"]["megatron"]["expert_parallel"] = g->expert_parallel;
  out["samples_per_s"] = m.samples_per_s;
  out["tokens_per_s"] = m.tokens_per_s;
  out["time_per_batch_s"] = m.time_per_batch_s;
  out["time_per_batch_parts_s"] = parts_json(m.parts);
  out["energy_per_batch_j"] = m.energy_per_batch_j;
  const EnergyRates rates = energy_rates(m);
  out["tokens_per_j"] = rates.tokens_per_j;
  out["watts_per_device"] = rates.watts_per_device;
  out["utilisation"] = {{"tensor_cores", m.tensor_utilisation},
                        {"vector_cores", m.vector_utilisation},
                        {"model_flops", m.flops_utilisation}};
  out["layer_schedules"] = figures;
  out["schedules_proven_optimal"] = m.schedules_proven;
  return out;
}

ordered_json point_json(const SearchQuestion& q, const PointOutcome& p) {
  ordered_json models = ordered_json::array();
  for (size_t m = 0; m < p.models.size(); ++m) models.push_back(model_json(q.models[m], p.models[m]));
  return {{"design", design_json(p)}, {"micro_batch", p.micro_batch},     {"recompute", p.recompute},
          {"feasible", p.feasible},   {"average_samples_per_s", p.score}, {"models", models}};
}

/// A baseline point with the best design's speed-up over it (null without a best design), and whether it is a
/// point of the searched space (which an exact answer is never slower than).
ordered_json baseline_point_json(const SearchQuestion& q, const PointOutcome& p, const SearchAnswer& a, bool in_space) {
  ordered_json out = point_json(q, p);
  out["speedup_of_best"] = a.best ? ordered_json(a.best->score / p.score) : ordered_json(nullptr);
  out["in_space"] = in_space;
  return out;
}

/// Whether the strict TPUv4-like point (32 GiB) is a point of the searched space.
bool strict_tpuv4_in_space(const SearchQuestion& q, const SearchAnswer& a) {
  return a.tpuv4_in_space && std::find(q.hbm_bytes.begin(), q.hbm_bytes.end(), kTpuv4HbmBytes) != q.hbm_bytes.end();
}

ordered_json hand_set_json(const ModelCase& mc, const HandSetOutcome& h) {
  ordered_json out{{"model", mc.spec.name}};
  if (!h.has_plan) {
    out["plan"] = nullptr;
    out["feasible"] = false;
    out["reason"] = h.reason;
    return out;
  }
  ordered_json stages = ordered_json::array();
  for (const placement::Stage& s : h.stages) stages.push_back(stage_json(s, mc.spec.num_layers));
  out["plan"] = {{"tensor_parallel", h.plan.width},
                 {"pipeline_stages", h.plan.pipeline},
                 {"data_parallel", h.plan.data_parallel},
                 {"devices_used", h.plan.pipeline * h.plan.width * h.plan.data_parallel},
                 {"stages", stages}};
  out["feasible"] = h.feasible;
  if (h.feasible) {
    out["samples_per_s"] = h.samples_per_s;
    out["time_per_batch_s"] = h.time_per_batch_s;
    out["time_per_batch_parts_s"] = parts_json(h.parts);
  } else {
    out["reason"] = h.reason;
  }
  const bool searched = h.searched_samples_per_s > 0;
  out["searched_samples_per_s"] = searched ? ordered_json(h.searched_samples_per_s) : ordered_json(nullptr);
  out["searched_over_hand_set"] =
      searched && h.feasible ? ordered_json(h.searched_samples_per_s / h.samples_per_s) : ordered_json(nullptr);
  return out;
}

/// The hand-set plans at one point; null when there is no such point.
ordered_json hand_set_point_json(const SearchQuestion& q, const std::optional<PointOutcome>& point,
                                 const std::vector<HandSetOutcome>& plans) {
  if (!point || plans.size() != q.models.size()) return nullptr;
  ordered_json models = ordered_json::array();
  for (size_t m = 0; m < plans.size(); ++m) models.push_back(hand_set_json(q.models[m], plans[m]));
  return {{"design", design_json(*point)},
          {"micro_batch", point->micro_batch},
          {"recompute", point->recompute},
          {"models", models}};
}

const char* const kSpotlightObjective =
    "single-chip training latency per sample: the forward and backward layer makespans at t = 1 summed over "
    "the chain, divided by the micro-batch, averaged over the models";
const char* const kNoSpotlightDesign = "no design has a finite single-chip latency at this micro-batch";
const char* const kNoSpotlightPoint = "no HBM size and recomputation setting gives every model a plan";

ordered_json spotlight_json(const SearchQuestion& q, const SearchAnswer& a) {
  const SpotlightBaseline& s = a.baselines.spotlight;
  ordered_json choices = ordered_json::array();
  for (const SpotlightChoice& c : s.per_micro_batch) {
    ordered_json j{{"micro_batch", c.micro_batch}};
    if (!c.found) {
      j["design"] = nullptr;
      j["reason"] = kNoSpotlightDesign;
    } else {
      j["design"] = chip_json(c.design.arch, c.design.area_um2, false);
      j["single_chip_s_per_sample"] = c.seconds_per_sample;
      j["best_point"] = c.best ? point_json(q, *c.best) : ordered_json(nullptr);
      if (!c.best) j["reason"] = kNoSpotlightPoint;
    }
    choices.push_back(j);
  }
  ordered_json out;
  if (s.chosen) {
    const SpotlightChoice& c = s.per_micro_batch[*s.chosen];
    out = baseline_point_json(q, *c.best, a, true);
    out["single_chip_s_per_sample"] = c.seconds_per_sample;
  } else {
    out = {{"feasible", false}, {"reason", "no micro-batch size's Spotlight-style design has a feasible point"}};
  }
  out["objective"] = kSpotlightObjective;
  out["per_micro_batch"] = choices;
  return out;
}

const char* const kNoStrictPoint =
    "no micro-batch size and recomputation setting gives every model a plan with 32 GiB of HBM";

ordered_json baselines_json(const SearchQuestion& q, const SearchAnswer& a) {
  const Baselines& b = a.baselines;
  ordered_json out;
  out["tpuv4_like"] =
      a.tpuv4_baseline ? baseline_point_json(q, *a.tpuv4_baseline, a, a.tpuv4_in_space) : ordered_json(nullptr);
  out["tpuv4_like_32gib"] = b.tpuv4_32gib ? baseline_point_json(q, *b.tpuv4_32gib, a, strict_tpuv4_in_space(q, a))
                                          : ordered_json{{"feasible", false}, {"reason", kNoStrictPoint}};
  out["spotlight_style"] = spotlight_json(q, a);
  out["megatron_hand_set"] = {{"on_best", hand_set_point_json(q, a.best, b.hand_set_on_best)},
                              {"on_tpuv4_like", hand_set_point_json(q, a.tpuv4_baseline, b.hand_set_on_tpuv4)}};
  // Written only when asked, so that the answers of earlier questions stay as they were.
  if (!b.gpu.empty()) {
    ordered_json gpus = ordered_json::array();
    for (const GpuBaseline& g : b.gpu) {
      ordered_json models = ordered_json::array();
      for (size_t m = 0; m < g.plans.size(); ++m)
        models.push_back(g.plans[m] ? ordered_json{{"model", q.models[m].source},
                                                   {"samples_per_s",
                                                    static_cast<double>(q.global_batch) / g.plans[m]->time.iteration_s},
                                                   {"prediction", ordered_json::parse(to_json(*g.plans[m]).dump())}}
                                    : ordered_json{{"model", q.models[m].source}, {"feasible", false}});
      ordered_json entry{{"system", g.system},
                         {"gpu", g.gpu},
                         {"peak_flop_per_s", g.peak_flop_per_s},
                         {"devices", q.devices},
                         {"average_samples_per_s", g.average_samples_per_s},
                         {"models", models}};
      if (a.best && g.average_samples_per_s > 0) entry["speedup_of_best"] = a.best->score / g.average_samples_per_s;
      gpus.push_back(std::move(entry));
    }
    out["gpu"] = std::move(gpus);
  }
  return out;
}

/// The optimizer for people.
const char* optimizer_text(placement::Optimizer o) {
  return o == placement::Optimizer::MixedPrecisionAdam ? "mixed-precision Adam"
         : o == placement::Optimizer::Adam             ? "PHAZE's Adam (one state copy)"
                                                       : "SGD";
}

/// A chip's cores and buffer for people (no HBM size).
std::string chip_text(const hw::Architecture& a) {
  return fmt::format("{} × {}×{} tensor cores, {} × {}-lane vector cores, {} MiB GLB", a.num_tc, a.tc_width, a.tc_depth,
                     a.num_vc, a.vc_width, a.glb_bytes >> 20);
}

std::string design_text(const PointOutcome& p) {
  return fmt::format("{}, {:g} GiB HBM at {} GB/s, {:.6g} mm²", chip_text(p.design), p.design.hbm_bytes / kGiB,
                     fixed_significant(p.design.hbm_bandwidth * 1e-9), p.area_um2 * 1e-6);
}

/// "layer3" or "layer3–layer5": the layers of a stage.
std::string stage_range_text(const placement::Stage& s, int64_t layers) {
  const std::string first = chain_position_name(s.first, layers), last = chain_position_name(s.last - 1, layers);
  return s.last - s.first == 1 ? first : first + "–" + last;
}

/// "embedding–layer2 (t 1, d 21, 2 of 3 recomputed) | …": each stage with its own settings.
std::string stagewise_text(const ModelOutcome& m, const StagewiseSettings& settings, int64_t layers) {
  std::string out;
  for (size_t k = 0; k < m.stages.size(); ++k) {
    const placement::Stage& s = m.stages[k];
    const StageSettings& w = settings.stages[k];
    if (!out.empty()) out += " | ";
    out += stage_range_text(s, layers);
    out += fmt::format(" (t {}, d {}", w.width, w.data_parallel);
    if (!w.recomputed.empty()) out += fmt::format(", {} of {} recomputed", w.recomputed.size(), s.last - s.first);
    out += ")";
  }
  return out;
}

std::string stages_text(const ModelOutcome& m, int64_t layers) {
  std::string out;
  for (const placement::Stage& s : m.stages) {
    if (!out.empty()) out += " | ";
    out += stage_range_text(s, layers);
  }
  return out;
}

void model_text(std::string& out, const ModelCase& mc, const ModelOutcome& m, int64_t hbm_bytes) {
  if (!m.feasible) {
    out += fmt::format("  {}: no plan ({})\n", mc.spec.name, m.reason);
    return;
  }
  if (const auto* stagewise = std::get_if<StagewiseSettings>(&m.settings)) {
    out += fmt::format("  {}: {}, each its own t and d ({})\n", mc.spec.name,
                       counted(static_cast<int64_t>(m.stages.size()), "pipeline stage"),
                       counted(devices_used(m), "device"));
    out += fmt::format("    stages: {}\n", stagewise_text(m, *stagewise, mc.spec.num_layers));
  } else {
    out += fmt::format("  {}: t = {}, {}, d = {} ({})\n", mc.spec.name, m.width,
                       counted(static_cast<int64_t>(m.stages.size()), "pipeline stage"), m.data_parallel,
                       counted(devices_used(m), "device"));
    out += fmt::format("    stages: {}\n", stages_text(m, mc.spec.num_layers));
  }
  if (!m.stage_memory_bytes.empty()) {
    std::string per_stage;
    for (double bytes : m.stage_memory_bytes)
      per_stage += (per_stage.empty() ? "" : " | ") + fixed_significant(bytes / kGiB, 4);
    out +=
        fmt::format("    memory per device: peak {} GiB of {} GiB HBM; per stage {} GiB\n",
                    fixed_significant(peak_memory_bytes(m) / kGiB, 4), fixed_significant(hbm_bytes / kGiB), per_stage);
  }
  if (const auto* g = std::get_if<MegatronSettings>(&m.settings))
    out += fmt::format(
        "    Megatron-LM: v = {}{}, sequence parallelism {}, recomputation {}, ZeRO {}; "
        "peak memory {:.4g} GiB\n",
        g->chunks, g->expert_parallel != 1 ? fmt::format(", experts over e = {} groups of t", g->expert_parallel) : "",
        g->sequence_parallel ? "on" : "off", megatron::to_string(g->recompute), g->zero, g->peak_memory_bytes / kGiB);
  // Fixed notation throughout: a person reads these.
  const auto f = [](double x) { return fixed_significant(x); };
  out += fmt::format("    throughput {} samples/s, {} tokens/s\n", f(m.samples_per_s), f(m.tokens_per_s));
  out +=
      fmt::format("    time per batch {} s = steady state {} + fill/drain {} + data-parallel sync {} + optimizer {}\n",
                  f(m.time_per_batch_s), f(m.parts.steady_state), f(m.parts.fill_drain), f(m.parts.data_parallel_sync),
                  f(m.parts.optimizer_step));
  const EnergyRates rates = energy_rates(m);
  out += fmt::format(
      "    energy per batch {} J ({} tokens/J, {} W per device); utilisation: tensor cores {:.1f} %, "
      "vector cores {:.1f} %, model FLOPs {:.1f} %\n",
      f(m.energy_per_batch_j), f(rates.tokens_per_j), fixed_significant(rates.watts_per_device, 4),
      100 * m.tensor_utilisation, 100 * m.vector_utilisation, 100 * m.flops_utilisation);
  const std::vector<model::LayerKind> kinds = model::distinct_layer_kinds(mc.spec);
  for (size_t k = 0; k < m.layers.size() && k < kinds.size(); ++k)
    if (kinds[k] == model::LayerKind::Transformer)
      out += fmt::format("    transformer layer: forward {} s, backward {} s{}\n", f(m.layers[k].forward_s),
                         f(m.layers[k].backward_s),
                         m.schedules_proven ? "" : " (a layer schedule is the best found, not proven optimal)");
}

/// "X samples/s on <design>, micro-batch b, recomputation on; per model t, stages, d".
std::string point_brief(const SearchQuestion& q, const PointOutcome& p) {
  std::string out = fmt::format("{:.6g} samples/s on {}, micro-batch {}, recomputation {}", p.score, design_text(p),
                                p.micro_batch, p.recompute ? "on" : "off");
  for (size_t m = 0; m < q.models.size(); ++m)
    out +=
        !std::holds_alternative<StagewiseSettings>(p.models[m].settings)
            ? fmt::format("; {} t = {}, {}, d = {}", q.models[m].spec.name, p.models[m].width,
                          counted(static_cast<int64_t>(p.models[m].stages.size()), "stage"), p.models[m].data_parallel)
            : fmt::format("; {} {}, t ≤ {}, d ≤ {}", q.models[m].spec.name,
                          counted(static_cast<int64_t>(p.models[m].stages.size()), "stage"), p.models[m].width,
                          p.models[m].data_parallel);
  return out;
}

/// One baseline point and the best design's speed-up over it, or why there is none.
void baseline_point_text(std::string& out, const std::string& label, const SearchQuestion& q,
                         const std::optional<PointOutcome>& point, const PointOutcome& best, bool in_space,
                         const std::string& missing) {
  if (!point) {
    out += fmt::format("  {}: {}\n", label, missing);
    return;
  }
  out += fmt::format("  {}: {}\n    the best design is {:.4g}× as fast ({} the searched space)\n", label,
                     point_brief(q, *point), best.score / point->score, in_space ? "a point of" : "outside");
}

void hand_set_text(std::string& out, const std::string& label, const SearchQuestion& q,
                   const std::optional<PointOutcome>& point, const std::vector<HandSetOutcome>& plans) {
  if (!point || plans.size() != q.models.size()) {
    out += fmt::format("    {}: no such point\n", label);
    return;
  }
  out += fmt::format("    {} ({:g} GiB HBM, micro-batch {}, recomputation {}):\n", label,
                     point->design.hbm_bytes / kGiB, point->micro_batch, point->recompute ? "on" : "off");
  for (size_t m = 0; m < plans.size(); ++m) {
    const HandSetOutcome& h = plans[m];
    const std::string& name = q.models[m].spec.name;
    if (!h.has_plan) {
      out += fmt::format("      {}: {}\n", name, h.reason);
      continue;
    }
    const std::string plan =
        fmt::format("p = {}, t = {}, d = {} ({})", h.plan.pipeline, h.plan.width, h.plan.data_parallel,
                    counted(h.plan.pipeline * h.plan.width * h.plan.data_parallel, "device"));
    if (!h.feasible) {
      out += fmt::format("      {}: {}: infeasible: {}\n", name, plan, h.reason);
      continue;
    }
    out += fmt::format(
        "      {}: {}: {:.6g} samples/s; time per batch {:.6g} s = steady state {:.6g} + fill/drain {:.6g} + "
        "data-parallel sync {:.6g} + optimizer {:.6g}\n        the searched plan is {:.4g}× as fast\n",
        name, plan, h.samples_per_s, h.time_per_batch_s, h.parts.steady_state, h.parts.fill_drain,
        h.parts.data_parallel_sync, h.parts.optimizer_step, h.searched_samples_per_s / h.samples_per_s);
  }
}

void baselines_text(std::string& out, const SearchQuestion& q, const SearchAnswer& a) {
  const PointOutcome& best = *a.best;
  const Baselines& b = a.baselines;
  out += "\nbaselines:\n";
  baseline_point_text(out, "TPUv4-like chip, best over the HBM sizes", q, a.tpuv4_baseline, best, a.tpuv4_in_space,
                      "no feasible point");
  baseline_point_text(out, "TPUv4-like chip with 32 GiB of HBM (TPUv4's)", q, b.tpuv4_32gib, best,
                      strict_tpuv4_in_space(q, a), kNoStrictPoint);
  const SpotlightBaseline& s = b.spotlight;
  std::optional<PointOutcome> spotlight;
  if (s.chosen) spotlight = s.per_micro_batch[*s.chosen].best;
  baseline_point_text(out, "Spotlight-style design (least single-chip latency per sample at t = 1)", q, spotlight, best,
                      true, "no micro-batch size's design has a feasible point");
  for (const SpotlightChoice& c : s.per_micro_batch) {
    if (!c.found) {
      out += fmt::format("    micro-batch {}: {}\n", c.micro_batch, kNoSpotlightDesign);
      continue;
    }
    out +=
        fmt::format("    micro-batch {}: {}, {:.6g} mm²: {:.6g} s per sample on one chip; {}\n", c.micro_batch,
                    chip_text(c.design.arch), c.design.area_um2 * 1e-6, c.seconds_per_sample,
                    c.best ? fmt::format("best point {:.6g} samples/s ({:g} GiB HBM, recomputation {})", c.best->score,
                                         c.best->design.hbm_bytes / kGiB, c.best->recompute ? "on" : "off")
                           : std::string(kNoSpotlightPoint));
  }
  out += fmt::format("  hand-set Megatron-style plans ({}):\n", make_pricer(q)->hand_set_rule());
  hand_set_text(out, "at the best point", q, a.best, b.hand_set_on_best);
  hand_set_text(out, "at the TPUv4-like point", q, a.tpuv4_baseline, b.hand_set_on_tpuv4);
  for (const GpuBaseline& g : b.gpu) {
    out += fmt::format("  {} × {} ({}, {:.4g} TFLOP/s dense BF16), the fastest Megatron-LM configuration in BF16: ",
                       q.devices, g.gpu, g.system, g.peak_flop_per_s / 1e12);
    out += g.average_samples_per_s > 0 ? fmt::format("{:.6g} samples/s\n    the best design is {:.4g}× as fast\n",
                                                     g.average_samples_per_s, best.score / g.average_samples_per_s)
                                       : std::string("a model has no configuration that fits\n");
    for (size_t m = 0; m < g.plans.size(); ++m)
      if (g.plans[m]) {
        const megatron::TrainingPlan& p = g.plans[m]->plan;
        out += fmt::format("    {}: t {} · p {} · d {}{}, micro-batch {}, recompute {}, ZeRO {}: {:.6g} samples/s\n",
                           q.models[m].source, p.tp, p.pp, p.dp, p.vp > 1 ? fmt::format(" (v {})", p.vp) : "",
                           p.micro_batch, megatron::to_string(p.recompute), p.zero,
                           static_cast<double>(q.global_batch) / g.plans[m]->time.iteration_s);
      }
  }
}

const char* stop_rule_name(const SearchQuestion& q) {
  return q.stop_rule == StopRule::Exact ? "exact" : "buckets";
}

/// The Spotlight-style baseline's point when it is faster than the answer: a point of the searched space
/// (its argmin runs over the searched designs, its best point over the question's HBM sizes and
/// recomputation settings) that the bucket rule's answer missed, so the optimum is at least that fast.
std::optional<PointOutcome> known_better_point(const SearchAnswer& a) {
  const SpotlightBaseline& s = a.baselines.spotlight;
  if (!a.best || !s.chosen) return std::nullopt;
  const std::optional<PointOutcome>& point = s.per_micro_batch[*s.chosen].best;
  if (!point || !point->feasible || point->score <= a.best->score) return std::nullopt;
  return point;
}

/// Whether the answer is the proven optimum, and for the bucket rule what is known of its distance to it.
ordered_json optimum_json(const SearchQuestion& q, const SearchAnswer& a) {
  if (q.stop_rule == StopRule::Exact) return {{"proven", true}};
  ordered_json out{{"proven", false}, {"known_better_point", nullptr}};
  if (const auto better = known_better_point(a))
    out["known_better_point"] = {{"baseline", "spotlight_style"},
                                 {"average_samples_per_s", better->score},
                                 {"answer_below_by", 1 - a.best->score / better->score}};
  return out;
}

ordered_json combination_json(const CombinationResult& r) {
  ordered_json best_design = nullptr, best_score = nullptr;
  if (r.best) {
    best_design = design_json(*r.best);
    best_score = r.best->score;
  }
  return {{"micro_batch", r.combination.micro_batch}, {"hbm_bytes", r.combination.hbm_bytes},
          {"recompute", r.combination.recompute},     {"buckets_visited", r.buckets_visited},
          {"designs_visited", r.designs_visited},     {"stop_rule_fired", r.stop_fired},
          {"best_average_samples_per_s", best_score}, {"best_design", best_design}};
}

std::string combination_text(const SearchQuestion& q, const SearchAnswer& a, const CombinationResult& r) {
  const Combination& c = r.combination;
  std::string out = fmt::format("  mbs {}, {:g} GiB HBM, recomputation {}: ", c.micro_batch, c.hbm_bytes / kGiB,
                                c.recompute ? "on" : "off");
  if (r.stop_fired) {
    out += fmt::format("stopped after {} of {} ({})", r.buckets_visited, counted(a.buckets, "bucket"),
                       counted(r.designs_visited, "design"));
  } else {
    out += fmt::format("{} {} ({})", q.stop_rule == StopRule::Exact ? "visited all" : "no stop, visited all",
                       counted(r.buckets_visited, "bucket"), counted(r.designs_visited, "design"));
  }
  if (!r.best) return out + "; no feasible point\n";
  const hw::Architecture& d = r.best->design;
  return out + fmt::format("; best {:.6g} samples/s on {} × {}×{} TC, {} × {} VC, {} MiB GLB, {:.6g} mm²\n",
                           r.best->score, d.num_tc, d.tc_width, d.tc_depth, d.num_vc, d.vc_width, d.glb_bytes >> 20,
                           r.best->area_um2 * 1e-6);
}

std::string csv_name(const ModelCase& mc, size_t index) {
  const std::string& name = mc.spec.name;
  const bool plain = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
  return plain ? name : fmt::format("model{}", index + 1);
}

}  // namespace

std::string chain_position_name(int64_t index, int64_t layers) {
  if (index == 0) return "embedding";
  if (index == layers + 1) return "head";
  return fmt::format("layer{}", index);
}

namespace {

/// A frontier's name: its model's, or "average".
std::string frontier_name(const SearchQuestion& q, const ParetoFrontier& f) {
  return f.model ? q.models[*f.model].spec.name : "average";
}

/// The Pareto frontiers, each point with its chip and figures.
ordered_json pareto_json(const SearchQuestion& q, const SearchAnswer& a) {
  ordered_json out = ordered_json::array();
  hw::Architecture design;
  for (const ParetoFrontier& f : a.pareto) {
    ordered_json points = ordered_json::array();
    for (const FrontierPoint& p : f.points) {
      set_design_values(design, p.row.design);
      points.push_back({{"design", chip_json(design, p.row.area_um2)},
                        {"micro_batch", p.row.micro_batch},
                        {"recompute", p.row.recompute},
                        {"samples_per_s", p.figures.samples_per_s},
                        {"energy_per_sample_j", p.figures.energy_per_sample_j},
                        {"area_frontier", p.area_frontier}});
    }
    out.push_back({{"frontier", frontier_name(q, f)}, {"points", points}});
  }
  return out;
}

}  // namespace

ordered_json answer_json(const SearchQuestion& q, const SearchAnswer& a) {
  ordered_json models = ordered_json::array();
  for (const ModelCase& m : q.models)
    models.push_back({{"model", m.spec.name}, {"source", m.source}, {"seq", m.seq}, {"tensor_parallel", m.widths}});
  const hw::EnumerationOptions space = enumeration_options(q);
  std::vector<double> hbm_gib;
  for (int64_t b : q.hbm_bytes) hbm_gib.push_back(b / kGiB);
  ordered_json out;
  out["models"] = models;
  out["settings"] = {{"devices", q.devices},
                     {"global_batch", q.global_batch},
                     {"micro_batches", q.micro_batches},
                     {"hbm_bytes", q.hbm_bytes},
                     {"recompute", recompute_values(q.recompute)}};
  // A plain link stays the one figure it always was; a tiered network is listed.
  if (const auto link = hw::single_link_bandwidth(q.network)) {
    out["settings"]["link_bandwidth_bytes_per_s"] = *link;
  } else {
    out["settings"]["network"] = hw::to_json(q.network);
  }
  out["settings"]["optimizer"] = optimizer_name(q.optimizer);
  if (q.fused_attention) out["settings"]["attention"] = "fused";  // absent: materialised, PHAZE's
  if (q.chip) out["settings"]["chip"] = hw::to_json(*q.chip);     // phaze evaluate's one chip
  make_pricer(q)->describe(q, out["settings"]);
  out["settings"]["area_budget_um2"] =
      space.budget_um2 ? *space.budget_um2 : hw::default_area_budget_um2(space.core_overheads);
  out["settings"]["lower_fraction"] = space.lower_fraction;
  out["settings"]["stop_rule"] = stop_rule_name(q);
  if (q.stop_rule == StopRule::Buckets) {
    out["settings"]["stop_window"] = q.stop_window;
    out["settings"]["bucket_um2"] = q.bucket_um2;
  }
  out["designs"] = a.designs;
  out["points"] = a.points;
  out["feasible_points"] = a.feasible_points;
  // Search statistics (method.md 9): what was explored, and per combination where its visit ended.
  ordered_json combos = ordered_json::array();
  for (const CombinationResult& r : a.combinations) combos.push_back(combination_json(r));
  out["search"] = {
      {"stop_rule", stop_rule_name(q)},         {"optimum", optimum_json(q, a)},        {"buckets", a.buckets},
      {"designs_explored", a.designs_explored}, {"points_explored", a.points_explored}, {"combinations", combos}};
  out["best"] = a.best ? point_json(q, *a.best) : ordered_json(nullptr);
  ordered_json per_model = ordered_json::array();
  for (size_t m = 0; m < q.models.size(); ++m) {
    const auto& best = a.best_per_model[m];
    if (!best) {
      per_model.push_back({{"model", q.models[m].spec.name}, {"best", nullptr}});
      continue;
    }
    ordered_json p = point_json(q, *best);
    per_model.push_back({{"model", q.models[m].spec.name},
                         {"samples_per_s", best->models[m].samples_per_s},
                         {"design", p["design"]},
                         {"micro_batch", best->micro_batch},
                         {"recompute", best->recompute},
                         {"plan", model_json(q.models[m], best->models[m])}});
  }
  out["best_per_model"] = per_model;
  ordered_json top = ordered_json::array();
  for (const PointOutcome& p : a.top) top.push_back(point_json(q, p));
  out["top"] = top;
  // Baselines side by side, each with how much faster the best design is.
  out["baselines"] = baselines_json(q, a);
  if (!a.pareto.empty()) out["pareto"] = pareto_json(q, a);
  return out;
}

namespace {

/// "link 4 GiB/s" for a plain link; else every tier, innermost first.
std::string network_text(const hw::Network& network) {
  if (const auto link = hw::single_link_bandwidth(network)) return fmt::format("link {:g} GiB/s", *link / kGiB);
  std::string out = "network";
  for (const hw::NetworkTier& t : network.tiers)
    out += fmt::format("{} {} ({}, {:g} GiB/s, {:g} s, efficiency {:g})", out == "network" ? "" : " /", t.name,
                       hw::tier_members_text(t), t.bandwidth / kGiB, t.latency_s, t.efficiency);
  return out;
}

}  // namespace

/// The text of `phaze evaluate`: one chip, its best plan, the TPUv4-like chip and the hand-set plans beside it,
/// and its best throughput at each micro-batch, HBM size and recomputation setting.
void evaluation_text(std::string& out, const SearchQuestion& q, const SearchAnswer& a) {
  const hw::Architecture& c = *q.chip;
  out += fmt::format("chip: {}{}, {} GiB HBM at {} GB/s, {} GHz, {} mm²\n", c.name.empty() ? "" : c.name + ": ",
                     chip_text(c), fixed_significant(c.hbm_bytes / kGiB), fixed_significant(c.hbm_bandwidth * 1e-9),
                     fixed_significant(c.clock_hz * 1e-9),
                     fixed_significant(hw::area_um2(c, q.space.core_overheads) * 1e-6));
  const size_t recomputes = recompute_values(q.recompute).size();
  out += fmt::format("points: {} × {} × {} = {}, {} with a plan{}\n",
                     counted(static_cast<int64_t>(q.hbm_bytes.size()), "HBM size"),
                     counted(static_cast<int64_t>(q.micro_batches.size()), "micro-batch size"),
                     counted(static_cast<int64_t>(recomputes), "recomputation setting"), a.points, a.feasible_points,
                     q.models.size() > 1 ? " for every model" : "");
  if (!a.best) {
    out += "no plan: no point has a training plan for every model that fits in memory\n";
    return;
  }
  const PointOutcome& b = *a.best;
  out += fmt::format("\nbest plan: {:g} GiB HBM, micro-batch {}, recomputation {}, {} {} samples/s\n",
                     b.design.hbm_bytes / kGiB, b.micro_batch, b.recompute ? "on" : "off",
                     q.models.size() > 1 ? "average" : "throughput", fixed_significant(b.score));
  for (size_t m = 0; m < q.models.size(); ++m) model_text(out, q.models[m], b.models[m], b.design.hbm_bytes);
  out += "\nbeside:\n";
  for (const auto& [label, point] : {std::pair("the TPUv4-like chip, best over the HBM sizes", a.tpuv4_baseline),
                                     std::pair("the TPUv4-like chip with 32 GiB of HBM", a.baselines.tpuv4_32gib)}) {
    if (!point) {
      out += fmt::format("  {}: no feasible point\n", label);
      continue;
    }
    out += fmt::format("  {}: {}\n    this chip is {}× as fast\n", label, point_brief(q, *point),
                       fixed_significant(b.score / point->score, 4));
  }
  out += fmt::format("  hand-set Megatron-style plans ({}):\n", make_pricer(q)->hand_set_rule());
  hand_set_text(out, "at the best point", q, a.best, a.baselines.hand_set_on_best);
  out += "\nper micro-batch, HBM size and recomputation setting:\n";
  for (const CombinationResult& r : a.combinations) {
    const Combination& k = r.combination;
    out += fmt::format("  mbs {}, {:g} GiB HBM, recomputation {}: {}\n", k.micro_batch, k.hbm_bytes / kGiB,
                       k.recompute ? "on" : "off",
                       r.best ? fixed_significant(r.best->score) + " samples/s" : std::string("no plan"));
  }
}

std::string answer_text(const SearchQuestion& q, const SearchAnswer& a) {
  std::string out;
  for (const ModelCase& m : q.models)
    out += fmt::format("model {}: {} layers, seq {}, t ∈ {{{}}}{}\n", m.spec.name, m.spec.num_layers, m.seq,
                       fmt::join(m.widths, ", "),
                       m.spec.moe() ? fmt::format("{}; {} of {} experts per token, routing balanced",
                                                  m.expert_widths == std::vector<int64_t>{1}
                                                      ? std::string()
                                                      : fmt::format(", e ∈ {{{}}}", fmt::join(m.expert_widths, ", ")),
                                                  m.spec.experts_per_token, m.spec.experts)
                                    : "");
  out += fmt::format("cluster: {} devices, global batch {}, {}, {} optimizer\n", q.devices, q.global_batch,
                     network_text(q.network), optimizer_text(q.optimizer));
  if (q.fused_attention)
    out +=
        "attention: one fused kernel per layer and pass, its scores in the on-chip buffers (a causal mask's blocks "
        "above the diagonal skipped)\n";
  out += make_pricer(q)->description(q);
  if (q.chip) {
    evaluation_text(out, q, a);
    return out;
  }
  const size_t bandwidths = q.space.hbm_bandwidths.size();
  out += fmt::format("space: {}{} in {} × {} × {} × {} = {}\n", counted(a.designs, "design"),
                     bandwidths > 1 ? fmt::format(" ({} chips × {} HBM bandwidths)",
                                                  a.designs / static_cast<int64_t>(bandwidths), bandwidths)
                                    : "",
                     counted(a.buckets, "area bucket"), counted(static_cast<int64_t>(q.hbm_bytes.size()), "HBM size"),
                     counted(static_cast<int64_t>(q.micro_batches.size()), "micro-batch size"),
                     counted(static_cast<int64_t>(recompute_values(q.recompute).size()), "recomputation setting"),
                     counted(a.points, "point"));
  if (q.stop_rule == StopRule::Exact) {
    out += fmt::format(
        "search: exact, every point explored (evaluated, or left out by a bound that proves it cannot enter the "
        "answer); {} feasible; the answer and the top list are the optimum\n",
        a.feasible_points);
  } else {
    const auto fired = std::count_if(a.combinations.begin(), a.combinations.end(),
                                     [](const CombinationResult& r) { return r.stop_fired; });
    out += fmt::format(
        "search: area buckets of {:g} µm², largest area first; a combination stops once the best scores of its "
        "last {} buckets with a feasible design are non-increasing\n  the stop fired for {} of {} combinations; "
        "{} designs and {} points explored, {} feasible\n",
        q.bucket_um2, q.stop_window, fired, a.combinations.size(), a.designs_explored, a.points_explored,
        a.feasible_points);
    if (!a.best) {
    } else if (const auto better = known_better_point(a)) {
      out += fmt::format(
          "  not proven optimal: the Spotlight-style baseline, a point of this space, reaches {:.6g} samples/s, "
          "{:.3g} % above this answer (--stop-rule exact finds the optimum)\n",
          better->score, 100 * (better->score / a.best->score - 1));
    } else {
      out += "  not proven optimal (--stop-rule exact finds the optimum)\n";
    }
  }
  if (!a.best) {
    out += "no feasible design: no point of the space has a training plan for every model that fits in memory\n";
    return out;
  }
  const PointOutcome& b = *a.best;
  out += fmt::format("\nbest design: {}\n", design_text(b));
  out += fmt::format("  micro-batch {}, recomputation {}, {} {:.6g} samples/s\n", b.micro_batch,
                     b.recompute ? "on" : "off", q.models.size() > 1 ? "average" : "throughput", b.score);
  for (size_t m = 0; m < q.models.size(); ++m) model_text(out, q.models[m], b.models[m], b.design.hbm_bytes);
  if (q.models.size() > 1) {
    out += "\nbest per model:\n";
    for (size_t m = 0; m < q.models.size(); ++m) {
      const auto& best = a.best_per_model[m];
      if (!best) {
        out += fmt::format("  {}: no feasible point\n", q.models[m].spec.name);
        continue;
      }
      out += fmt::format("  {}: {:.6g} samples/s on {}, micro-batch {}, recomputation {}\n", q.models[m].spec.name,
                         best->models[m].samples_per_s, design_text(*best), best->micro_batch,
                         best->recompute ? "on" : "off");
    }
  }
  baselines_text(out, q, a);
  if (!a.top.empty()) {
    out += fmt::format("\ntop {}:\n", a.top.size());
    for (size_t i = 0; i < a.top.size(); ++i) {
      const PointOutcome& p = a.top[i];
      out += fmt::format("  {:>3}. {:>12.6g} samples/s  {}; mbs {}, recompute {}\n", i + 1, p.score, design_text(p),
                         p.micro_batch, p.recompute ? "on" : "off");
    }
  }
  if (!a.pareto.empty()) {
    out += "\nPareto frontiers (more samples/s, less chip area, less energy per sample):\n";
    for (const ParetoFrontier& f : a.pareto) {
      const auto on_area =
          std::count_if(f.points.begin(), f.points.end(), [](const FrontierPoint& p) { return p.area_frontier; });
      out += fmt::format("  {}: {} points, {} of them on the frontier of samples/s against area alone\n",
                         frontier_name(q, f), f.points.size(), on_area);
    }
  }
  out += "\nper combination:\n";
  for (const CombinationResult& r : a.combinations) out += combination_text(q, a, r);
  return out;
}

void write_points_csv(std::ostream& to, const SearchQuestion& q, const SearchAnswer& a) {
  std::string out = design_csv_header() + ",area_um2,micro_batch,recompute,feasible,average_samples_per_s";
  for (size_t m = 0; m < q.models.size(); ++m) {
    const std::string n = csv_name(q.models[m], m);
    out += fmt::format(
        ",{0}_t,{0}_pipeline_stages,{0}_data_parallel,{0}_time_per_batch_s,{0}_samples_per_s,"
        "{0}_energy_per_batch_j",
        n);
  }
  out += "\n";
  to << out;
  hw::Architecture design;
  for (const PointRow& p : a.all) {
    out.clear();
    set_design_values(design, p.design);
    out += fmt::format("{},{:.17g},{},{},{},{:.17g}", design_csv(design), p.area_um2, p.micro_batch,
                       p.recompute ? 1 : 0, p.feasible ? 1 : 0, p.score);
    for (const ModelRow& m : p.models) {
      if (!m.feasible) {
        out += ",,,,,,";
        continue;
      }
      out += fmt::format(",{},{},{},{:.17g},{:.17g},{:.17g}", m.width, m.stages, m.data_parallel, m.time_per_batch_s,
                         m.samples_per_s, m.energy_per_batch_j);
    }
    out += "\n";
    to << out;
  }
}

void write_pareto_csv(std::ostream& to, const SearchQuestion& q, const SearchAnswer& a) {
  to << "frontier," << design_csv_header()
     << ",area_um2,micro_batch,recompute,samples_per_s,energy_per_sample_j,area_frontier\n";
  hw::Architecture design;
  for (const ParetoFrontier& f : a.pareto)
    for (const FrontierPoint& p : f.points) {
      set_design_values(design, p.row.design);
      to << fmt::format("{},{},{:.17g},{},{},{:.17g},{:.17g},{}\n",
                        f.model ? csv_name(q.models[*f.model], *f.model) : "average", design_csv(design),
                        p.row.area_um2, p.row.micro_batch, p.row.recompute ? 1 : 0, p.figures.samples_per_s,
                        p.figures.energy_per_sample_j, p.area_frontier ? 1 : 0);
    }
}

}  // namespace phaze::io
