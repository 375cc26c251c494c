#include "cli/estimate_command.h"

#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/shape_options.h"
#include "cli/system_options.h"
#include "cost/operator_cost.h"
#include "hw/architecture_json.h"
#include "model/hf_config.h"
#include "model/layer_graph.h"
#include "util/input_error.h"

namespace phaze::cli {

namespace {

struct EstimateOptions {
  std::string model;
  SystemOptions system;
  bool arch_given = false;
  ShapeOptions shape;
  std::string layer = "transformer";
  std::string cache;
  bool no_cache = false;
  bool json = false;
};

struct Row {
  const model::Operator* op;
  cost::OperatorEstimate estimate;
};

std::vector<Row> estimate_graph(const model::OperatorGraph& graph, const hw::Architecture& arch,
                                cost::Estimator& estimator) {
  std::vector<Row> rows;
  for (const model::Operator& op : graph.ops) rows.push_back(Row{&op, estimator.estimate(op, arch)});
  return rows;
}

nlohmann::json rows_json(const std::vector<Row>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const Row& r : rows)
    out.push_back({{"id", r.op->id},
                   {"name", r.op->name},
                   {"engine", model::to_string(r.op->engine)},
                   {"single_latency_s", r.estimate.single.latency_s},
                   {"single_energy_j", r.estimate.single.energy_j},
                   {"all_latency_s", r.estimate.all.latency_s},
                   {"all_energy_j", r.estimate.all.energy_j}});
  return out;
}

void print_rows(const char* title, const std::vector<Row>& rows) {
  fmt::print("\n  {}\n", title);
  fmt::print("  {:<7} {:<6} {:<44} {:>14} {:>14} {:>12} {:>12}\n", "id", "engine", "operator", "1 core (µs)",
             "all cores (µs)", "1 core (mJ)", "all (mJ)");
  double single = 0, all = 0;
  for (const Row& r : rows) {
    fmt::print("  {:<7} {:<6} {:<44} {:>14.3f} {:>14.3f} {:>12.4f} {:>12.4f}\n", r.op->id,
               model::to_string(r.op->engine), r.op->name.substr(0, 44), r.estimate.single.latency_s * 1e6,
               r.estimate.all.latency_s * 1e6, r.estimate.single.energy_j * 1e3, r.estimate.all.energy_j * 1e3);
    single += r.estimate.single.latency_s;
    all += r.estimate.all.latency_s;
  }
  fmt::print("  {:<58} {:>14.3f} {:>14.3f}\n", "sum (a serial schedule)", single * 1e6, all * 1e6);
}

void estimate(const EstimateOptions& o) {
  const model::ModelSpec spec = model::load_model(o.model);
  const hw::System system = resolve_system(o.system, o.arch_given);
  const hw::Architecture& arch = hw::accelerator_of(system);
  const model::Shape shape = o.shape.shape(spec);
  const model::LayerGraph graph = model::build_layer_graph(spec, shape, model::Precision{}, o.model);
  const model::Layer* layer = o.layer == "embedding" ? &graph.embedding
                              : o.layer == "head"    ? &graph.head
                                                     : &graph.transformer;
  std::unique_ptr<cost::EstimateCache> cache;
  if (!o.no_cache)
    cache = std::make_unique<cost::EstimateCache>(o.cache.empty() ? cost::EstimateCache::default_path() : o.cache);
  cost::Estimator estimator(cost::CostParams{}, system.network, cache.get());
  const auto forward = estimate_graph(layer->forward, arch, estimator);
  const auto backward = estimate_graph(layer->backward, arch, estimator);
  if (o.json) {
    const nlohmann::json out{{"model", spec.name},
                             {"arch", arch.name},
                             {"layer", o.layer},
                             {"seq", shape.seq},
                             {"mbs", shape.micro_batch},
                             {"tp", shape.tp},
                             {"forward", rows_json(forward)},
                             {"backward", rows_json(backward)}};
    std::cout << out.dump(2) << "\n";
    return;
  }
  fmt::print("{} layer of {} on {} (seq {}, micro-batch {}, t = {})\n", o.layer, spec.name, arch.name, shape.seq,
             shape.micro_batch, shape.tp);
  print_rows("forward", forward);
  print_rows("backward", backward);
}

}  // namespace

void add_estimate_command(CLI::App& app) {
  auto o = std::make_shared<EstimateOptions>();
  CLI::App* cmd = app.add_subcommand("estimate", "Latency and energy of every operator of a layer on a design");
  cmd->add_option("--model", o->model, "Preset or Hugging Face config.json")->required();
  add_system_options(cmd, o->system, "");
  add_shape_options(cmd, o->shape);
  cmd->add_option("--layer", o->layer, "embedding, transformer or head")
      ->check(CLI::IsMember({"embedding", "transformer", "head"}))
      ->capture_default_str();
  cmd->add_option("--cache", o->cache, "Estimate cache file (default: $XDG_CACHE_HOME/phaze/estimates.sqlite)");
  cmd->add_flag("--no-cache", o->no_cache, "Do not read or write the estimate cache");
  cmd->add_flag("--json", o->json, "Print JSON");
  cmd->callback([o, cmd] {
    o->arch_given = cmd->count("--arch") > 0;
    estimate(*o);
  });
}

}  // namespace phaze::cli
