#include "search/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "hw/area.h"

namespace phaze::search {

namespace {

using nlohmann::ordered_json;

const char* const kLayerNames[3] = {"embedding", "transformer", "head"};

ordered_json design_json(const PointOutcome& p) {
  const hw::Architecture& a = p.design;
  return {{"num_tc", a.num_tc},     {"tc_width", a.tc_width},   {"tc_depth", a.tc_depth},   {"num_vc", a.num_vc},
          {"vc_width", a.vc_width}, {"glb_bytes", a.glb_bytes}, {"hbm_bytes", a.hbm_bytes}, {"area_um2", p.area_um2}};
}

ordered_json model_json(const ModelCase& mc, const ModelOutcome& m) {
  ordered_json out{{"model", mc.spec.name}, {"feasible", m.feasible}};
  if (!m.feasible) {
    out["reason"] = m.reason;
    return out;
  }
  const int64_t layers = mc.spec.num_layers;
  ordered_json stages = ordered_json::array();
  for (const placement::Stage& s : m.stages)
    stages.push_back({{"first_layer", chain_position_name(s.first, layers)},
                      {"last_layer", chain_position_name(s.last - 1, layers)},
                      {"layers", s.last - s.first},
                      {"devices", s.devices}});
  int64_t per_replica = 0;
  for (const placement::Stage& s : m.stages) per_replica += s.devices;
  ordered_json figures = ordered_json::object();
  for (size_t k = 0; k < m.layers.size(); ++k)
    figures[kLayerNames[k]] = {{"forward_s", m.layers[k].forward_s},
                               {"backward_s", m.layers[k].backward_s},
                               {"forward_energy_j", m.layers[k].forward_j},
                               {"backward_energy_j", m.layers[k].backward_j}};
  out["plan"] = {{"tensor_parallel", m.width},
                 {"pipeline_stages", m.stages.size()},
                 {"data_parallel", m.data_parallel},
                 {"devices_used", m.data_parallel * per_replica},
                 {"stages", stages}};
  out["samples_per_s"] = m.samples_per_s;
  out["tokens_per_s"] = m.tokens_per_s;
  out["time_per_batch_s"] = m.time_per_batch_s;
  out["time_per_batch_parts_s"] = {{"pipeline_steady_state", m.parts.steady_state},
                                   {"pipeline_fill_drain", m.parts.fill_drain},
                                   {"data_parallel_sync", m.parts.data_parallel_sync},
                                   {"optimizer_step", m.parts.optimizer_step}};
  out["energy_per_batch_j"] = m.energy_per_batch_j;
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

std::string design_text(const PointOutcome& p) {
  const hw::Architecture& a = p.design;
  return fmt::format("{} × {}×{} tensor cores, {} × {}-lane vector cores, {} MiB GLB, {:g} GiB HBM, {:.6g} mm²",
                     a.num_tc, a.tc_width, a.tc_depth, a.num_vc, a.vc_width, a.glb_bytes >> 20, a.hbm_bytes / kGiB,
                     p.area_um2 * 1e-6);
}

std::string stages_text(const ModelOutcome& m, int64_t layers) {
  std::string out;
  for (const placement::Stage& s : m.stages) {
    if (!out.empty()) out += " | ";
    const std::string first = chain_position_name(s.first, layers), last = chain_position_name(s.last - 1, layers);
    out += s.last - s.first == 1 ? first : first + "–" + last;
  }
  return out;
}

void model_text(std::string& out, const ModelCase& mc, const ModelOutcome& m) {
  if (!m.feasible) {
    out += fmt::format("  {}: no plan ({})\n", mc.spec.name, m.reason);
    return;
  }
  int64_t per_replica = 0;
  for (const placement::Stage& s : m.stages) per_replica += s.devices;
  out += fmt::format("  {}: t = {}, {} pipeline stage{}, d = {} ({} devices)\n", mc.spec.name, m.width, m.stages.size(),
                     m.stages.size() == 1 ? "" : "s", m.data_parallel, m.data_parallel * per_replica);
  out += fmt::format("    stages: {}\n", stages_text(m, mc.spec.num_layers));
  out += fmt::format("    throughput {:.6g} samples/s, {:.6g} tokens/s\n", m.samples_per_s, m.tokens_per_s);
  out += fmt::format(
      "    time per batch {:.6g} s = steady state {:.6g} + fill/drain {:.6g} + data-parallel sync {:.6g} + "
      "optimizer {:.6g}\n",
      m.time_per_batch_s, m.parts.steady_state, m.parts.fill_drain, m.parts.data_parallel_sync, m.parts.optimizer_step);
  out += fmt::format(
      "    energy per batch {:.6g} J; utilisation: tensor cores {:.1f} %, vector cores {:.1f} %, model FLOPs {:.1f} "
      "%\n",
      m.energy_per_batch_j, 100 * m.tensor_utilisation, 100 * m.vector_utilisation, 100 * m.flops_utilisation);
  out += fmt::format("    transformer layer: forward {:.6g} s, backward {:.6g} s{}\n", m.layers[1].forward_s,
                     m.layers[1].backward_s,
                     m.schedules_proven ? "" : " (a layer schedule is the best found, not proven optimal)");
}

const char* strategy_name(const SearchQuestion& q) {
  return q.exhaustive ? "exhaustive" : "area buckets";
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
    out += fmt::format("stopped after {} of {} buckets ({} designs)", r.buckets_visited, a.buckets, r.designs_visited);
  } else {
    out += fmt::format("{} {} buckets ({} designs)", q.exhaustive ? "visited all" : "no stop, visited all",
                       r.buckets_visited, r.designs_visited);
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
                     {"recompute", recompute_values(q.recompute)},
                     {"link_bandwidth_bytes_per_s", q.link_bandwidth},
                     {"optimizer", q.optimizer == placement::Optimizer::Adam ? "adam" : "sgd"},
                     {"area_budget_um2", space.budget_um2 ? *space.budget_um2 : hw::default_area_budget_um2()},
                     {"lower_fraction", space.lower_fraction},
                     {"strategy", strategy_name(q)}};
  if (!q.exhaustive) {
    out["settings"]["stop_window"] = q.stop_window;
    out["settings"]["bucket_um2"] = q.bucket_um2;
  }
  out["designs"] = a.designs;
  out["points"] = a.points;
  out["feasible_points"] = a.feasible_points;
  // Search statistics (method.md 9): what was explored, and per combination where its visit ended.
  ordered_json combos = ordered_json::array();
  for (const CombinationResult& r : a.combinations) combos.push_back(combination_json(r));
  out["search"] = {{"strategy", strategy_name(q)},
                   {"buckets", a.buckets},
                   {"designs_explored", a.designs_explored},
                   {"points_explored", a.points_explored},
                   {"combinations", combos}};
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
  // Baselines side by side: the TPUv4-like chip with its best plan, and how much faster the best design is.
  ordered_json tpu = nullptr;
  if (a.tpuv4_baseline) {
    tpu = point_json(q, *a.tpuv4_baseline);
    tpu["speedup_of_best"] = a.best ? ordered_json(a.best->score / a.tpuv4_baseline->score) : ordered_json(nullptr);
  }
  out["baselines"] = {{"tpuv4_like", tpu}};
  return out;
}

std::string answer_text(const SearchQuestion& q, const SearchAnswer& a) {
  std::string out;
  for (const ModelCase& m : q.models)
    out += fmt::format("model {}: {} layers, seq {}, t ∈ {{{}}}\n", m.spec.name, m.spec.num_layers, m.seq,
                       fmt::join(m.widths, ", "));
  out += fmt::format("cluster: {} devices, global batch {}, link {:g} GiB/s, {} optimizer\n", q.devices, q.global_batch,
                     q.link_bandwidth / kGiB, q.optimizer == placement::Optimizer::Adam ? "Adam" : "SGD");
  out += fmt::format(
      "space: {} designs in {} area buckets × {} HBM sizes × {} micro-batch sizes × {} recomputation settings = {} "
      "points\n",
      a.designs, a.buckets, q.hbm_bytes.size(), q.micro_batches.size(), recompute_values(q.recompute).size(), a.points);
  if (q.exhaustive) {
    out += fmt::format("search: exhaustive, every point explored; {} feasible\n", a.feasible_points);
  } else {
    const auto fired = std::count_if(a.combinations.begin(), a.combinations.end(),
                                     [](const CombinationResult& r) { return r.stop_fired; });
    out += fmt::format(
        "search: area buckets of {:g} µm², largest area first; a combination stops once the best scores of its "
        "last {} buckets with a feasible design are non-increasing\n  the stop fired for {} of {} combinations; "
        "{} designs and {} points explored, {} feasible\n",
        q.bucket_um2, q.stop_window, fired, a.combinations.size(), a.designs_explored, a.points_explored,
        a.feasible_points);
  }
  if (!a.best) {
    out += "no feasible design: no point of the space has a training plan for every model that fits in memory\n";
    return out;
  }
  const PointOutcome& b = *a.best;
  out += fmt::format("\nbest design: {}\n", design_text(b));
  out += fmt::format("  micro-batch {}, recomputation {}, {} {:.6g} samples/s\n", b.micro_batch,
                     b.recompute ? "on" : "off", q.models.size() > 1 ? "average" : "throughput", b.score);
  for (size_t m = 0; m < q.models.size(); ++m) model_text(out, q.models[m], b.models[m]);
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
  if (a.tpuv4_baseline) {
    const PointOutcome& t = *a.tpuv4_baseline;
    out += fmt::format("\nbaseline: the TPUv4-like chip ({}): {:.6g} samples/s, micro-batch {}, recomputation {}",
                       design_text(t), t.score, t.micro_batch, t.recompute ? "on" : "off");
    for (size_t m = 0; m < q.models.size(); ++m)
      out += fmt::format("; {} t = {}, {} stages, d = {}", q.models[m].spec.name, t.models[m].width,
                         t.models[m].stages.size(), t.models[m].data_parallel);
    out += fmt::format("\n  the best design is {:.4g}× as fast\n", b.score / t.score);
  } else {
    out += "\nbaseline: the TPUv4-like chip has no feasible point\n";
  }
  if (!a.top.empty()) {
    out += fmt::format("\ntop {}:\n", a.top.size());
    for (size_t i = 0; i < a.top.size(); ++i) {
      const PointOutcome& p = a.top[i];
      out += fmt::format("  {:>3}. {:>12.6g} samples/s  {}; mbs {}, recompute {}\n", i + 1, p.score, design_text(p),
                         p.micro_batch, p.recompute ? "on" : "off");
    }
  }
  out += "\nper combination:\n";
  for (const CombinationResult& r : a.combinations) out += combination_text(q, a, r);
  return out;
}

std::string points_csv(const SearchQuestion& q, const SearchAnswer& a) {
  std::string out =
      "num_tc,tc_width,tc_depth,num_vc,vc_width,glb_bytes,hbm_bytes,area_um2,micro_batch,recompute,feasible,"
      "average_samples_per_s";
  for (size_t m = 0; m < q.models.size(); ++m) {
    const std::string n = csv_name(q.models[m], m);
    out += fmt::format(
        ",{0}_t,{0}_pipeline_stages,{0}_data_parallel,{0}_time_per_batch_s,{0}_samples_per_s,"
        "{0}_energy_per_batch_j",
        n);
  }
  out += "\n";
  for (const PointOutcome& p : a.all) {
    const hw::Architecture& d = p.design;
    out += fmt::format("{},{},{},{},{},{},{},{:.17g},{},{},{},{:.17g}", d.num_tc, d.tc_width, d.tc_depth, d.num_vc,
                       d.vc_width, d.glb_bytes, d.hbm_bytes, p.area_um2, p.micro_batch, p.recompute ? 1 : 0,
                       p.feasible ? 1 : 0, p.score);
    for (const ModelOutcome& m : p.models) {
      if (!m.feasible) {
        out += ",,,,,,";
        continue;
      }
      out += fmt::format(",{},{},{},{:.17g},{:.17g},{:.17g}", m.width, m.stages.size(), m.data_parallel,
                         m.time_per_batch_s, m.samples_per_s, m.energy_per_batch_j);
    }
    out += "\n";
  }
  return out;
}

}  // namespace phaze::search
