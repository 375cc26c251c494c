#include "cli/plan_command.h"

#include <fmt/format.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/feature_options.h"
#include "cli/option_values.h"
#include "cli/predict_command.h"
#include "hw/system_json.h"
#include "io/prediction_json.h"
#include "megatron/assumptions.h"
#include "megatron/plan_search.h"
#include "model/hf_config.h"

namespace phaze::cli {

namespace {

struct PlanOptions {
  std::string model;
  std::string system = "dgx-a100-80gb";
  int64_t gpus = 8;
  int64_t global_batch = 0;
  int64_t seq = 0;
  int64_t top = 5;
  megatron::TrainingPlan features = megatron::current_practice();  ///< what every configuration shares
  bool json = false;
};

void plan(const PlanOptions& o) {
  const model::ModelSpec spec = model::load_model(o.model);
  const hw::System system = hw::load_system(o.system);
  hw::gpu_of(system);  // refuses a system without a GPU, naming it
  megatron::GpuPlanQuestion q;
  q.gpus = o.gpus;
  q.global_batch = o.global_batch;
  q.seq = o.seq > 0 ? o.seq : spec.default_seq;
  q.features = o.features;
  q.top = static_cast<size_t>(o.top);
  const auto start = std::chrono::steady_clock::now();
  const megatron::GpuPlanAnswer a = megatron::search_gpu_plans(spec, system, q);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::string assumptions = megatron::assumptions_line(o.features, hw::gpu_of(system));
  if (o.json) {
    nlohmann::json best = nlohmann::json::array();
    for (const auto& p : a.best) best.push_back(io::to_json(p));
    std::cout << nlohmann::json{{"model", spec.name},
                                {"system", system.name},
                                {"gpus", q.gpus},
                                {"global_batch", q.global_batch},
                                {"seq", q.seq},
                                {"evaluated", a.evaluated},
                                {"fitting", a.fitting},
                                {"best", best},
                                {"assumptions", assumptions}}
                     .dump(2)
              << "\n";
    return;
  }
  fmt::print("{}\n", assumptions);
  fmt::print("{} on {} × {} ({}), global batch {}, seq {}\n", spec.description.empty() ? spec.name : spec.description,
             q.gpus, hw::device_name(system.device), system.name, q.global_batch, q.seq);
  fmt::print("{} configurations, {} fit in memory ({:.2f} s)\n", a.evaluated, a.fitting, seconds);
  if (a.best.empty()) {
    fmt::print("no configuration fits in memory\n");
    return;
  }
  for (size_t i = 0; i < a.best.size(); ++i) {
    fmt::print("\n#{}\n", i + 1);
    std::cout << prediction_text(a.best[i]);
  }
}

}  // namespace

void add_plan_command(CLI::App& app) {
  auto o = std::make_shared<PlanOptions>();
  CLI::App* cmd = app.add_subcommand("plan",
                                     "The fastest Megatron-LM configurations (t, p, d, v, micro-batch, sequence "
                                     "parallelism, recomputation, distributed optimizer) that fit, tried exhaustively");
  cmd->add_option("--model", o->model, "Model preset or Hugging Face config.json")->required();
  cmd->add_option("--system", o->system, "GPU system preset or JSON file (see 'phaze system list')")
      ->capture_default_str();
  add_integer_option(cmd, "--gpus", o->gpus, 1, megatron::plan_limits::kGpus, "GPUs of the run");
  add_integer_option(cmd, "--global-batch", o->global_batch, 1, megatron::plan_limits::kGlobalBatch,
                     "Sequences per iteration")
      ->required();
  add_integer_option(cmd, "--seq", o->seq, 0, model::limits::kSequence, "Tokens per sequence (0: the model's)");
  add_integer_option(cmd, "--top", o->top, 1, 1000, "Configurations to print");
  add_feature_options(cmd, o->features);
  cmd->add_flag("--json", o->json, "Print JSON");
  cmd->callback([o] { plan(*o); });
}

}  // namespace phaze::cli
