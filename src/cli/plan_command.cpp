#include "cli/plan_command.h"

#include <fmt/format.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/memory_reserve_option.h"
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
  bool overlap_dp = false;
  bool overlap_param_gather = false;
  bool tp_comm_overlap = false;
  bool flash_attention = megatron::current_practice().flash_attention;
  bool bf16 = megatron::current_practice().bf16;
  int64_t memory_reserve_bytes = megatron::current_practice().memory_reserve_bytes;
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
  q.overlap_dp = o.overlap_dp;
  q.flash_attention = o.flash_attention;
  q.bf16 = o.bf16;
  q.tp_comm_overlap = o.tp_comm_overlap;
  q.overlap_param_gather = o.overlap_param_gather;
  q.memory_reserve_bytes = o.memory_reserve_bytes;
  q.top = static_cast<size_t>(o.top);
  const auto start = std::chrono::steady_clock::now();
  const megatron::GpuPlanAnswer a = megatron::search_gpu_plans(spec, system, q);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  megatron::TrainingPlan features;  // what every plan of the answer shares
  features.flash_attention = q.flash_attention;
  features.overlap_dp = q.overlap_dp;
  features.bf16 = q.bf16;
  features.tp_comm_overlap = q.tp_comm_overlap;
  features.overlap_param_gather = q.overlap_param_gather;
  features.memory_reserve_bytes = q.memory_reserve_bytes;
  const std::string assumptions = megatron::assumptions_line(features, hw::gpu_of(system));
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
  cmd->add_flag("--overlap-grad-reduce,--overlap-dp", o->overlap_dp,
                "Reduce gradients in buckets during the last micro-batch's backward pass");
  cmd->add_flag("--overlap-param-gather", o->overlap_param_gather,
                "Gather parameters during the next forward pass (configurations with the distributed optimizer)");
  cmd->add_flag("--tp-comm-overlap", o->tp_comm_overlap,
                "Pipeline tensor-parallel collectives with their GEMMs (configurations with sequence parallelism)");
  cmd->add_flag("--flash-attention,!--no-flash-attention", o->flash_attention,
                "Fused (flash) attention kernels (the default; --no-flash-attention materialises the scores)");
  cmd->add_flag("--bf16,!--fp16", o->bf16,
                "BF16 with FP32 gradients (the default), or FP16 with 16-bit gradients (--fp16)");
  add_memory_reserve_option(cmd, o->memory_reserve_bytes);
  cmd->add_flag("--json", o->json, "Print JSON");
  cmd->callback([o] { plan(*o); });
}

}  // namespace phaze::cli
