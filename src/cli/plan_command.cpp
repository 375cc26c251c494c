#include "cli/plan_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/batch_in_tokens.h"
#include "cli/feature_options.h"
#include "cli/option_values.h"
#include "cli/predict_command.h"
#include "hw/system_json.h"
#include "io/chrome_trace.h"
#include "io/html_report.h"
#include "io/pipeline_trace.h"
#include "io/prediction_json.h"
#include "megatron/assumptions.h"
#include "megatron/no_plan.h"
#include "megatron/plan_search.h"
#include "model/hf_config.h"
#include "search/accelerator_prediction.h"
#include "util/input_error.h"
#include "util/output_file.h"

namespace phaze::cli {

namespace {

struct PlanOptions {
  std::string model;
  std::string system = "dgx-a100-80gb";
  int64_t gpus = 8;
  int64_t global_batch = 0;
  int64_t global_batch_tokens = 0;
  int64_t seq = 0;
  int64_t top = 5;
  megatron::TrainingPlan features = megatron::current_practice();  ///< what every configuration shares
  std::string zero_stages;                                         ///< "": the question's default, every stage
  std::string context_widths;        ///< "" : 1 and the powers of two up to 64 that divide the GPUs
  std::string expert_widths;         ///< "" : every width dividing the experts and d · c
  std::string expert_tensor_widths;  ///< "" : every width dividing the expert FFN
  /// Settings pinned (comma-separated values; "": every value).
  std::string widths, pipelines, replicas, micro_batches, chunks, recomputes;
  bool fp8_given = false;  ///< --fp8 or --no-fp8: precision fixed; else FP8 tried off and on where the GPU has it
  bool no_fp8 = false;
  bool fp8_recipe_given = false;
  bool json = false;
  bool all_variants = false;  ///< list every variant of a layout, not only its fastest
  bool rank_of = false;       ///< rank the best pinned configuration among all instead of listing the pinned ones
  std::string report;         ///< write the HTML report here
  TrainingRunOptions run;
};

void plan(const PlanOptions& o) {
  const model::ModelSpec spec = model::load_model(o.model);
  const hw::System system = hw::load_system(o.system);
  // An accelerator of the template (a TPU v4 pod): its layers priced by their exact schedules, GSPMD's sharding
  // (key/value heads fewer than t replicated); FP8 and context parallelism are priced on GPUs only.
  const bool accelerator = std::holds_alternative<hw::Architecture>(system.device);
  const megatron::DevicePricer pricer = search::system_pricer();
  megatron::GpuPlanQuestion q;
  q.gpus = o.gpus;
  q.seq = o.seq > 0 ? o.seq : spec.default_seq;
  if ((o.global_batch > 0) == (o.global_batch_tokens > 0))
    throw InputError("plan: give the global batch as --global-batch (sequences) or --global-batch-tokens, one of them");
  q.global_batch = o.global_batch > 0 ? o.global_batch : global_batch_of_tokens(o.global_batch_tokens, q.seq);
  if (q.global_batch > megatron::plan_limits::kGlobalBatch)
    throw InputError(fmt::format("--global-batch-tokens {}: {} sequences, more than the {} allowed",
                                 o.global_batch_tokens, q.global_batch, megatron::plan_limits::kGlobalBatch));
  q.features = o.features;
  q.features.gspmd_sharding = accelerator;
  if (accelerator && o.features.fp8)
    throw InputError(
        fmt::format("--fp8: {} has no FP8 tensor cores in phaze's template", hw::device_name(system.device)));
  if (!o.zero_stages.empty()) q.zero_stages = parse_integer_list("--zero", o.zero_stages, 0, 3);
  q.context_widths = parse_integer_list("--cp", o.context_widths, 1, megatron::plan_limits::kContextParallel);
  if (accelerator) {
    if (std::any_of(q.context_widths.begin(), q.context_widths.end(), [](int64_t c) { return c > 1; }))
      throw InputError("--cp: context parallelism is priced on GPU systems only");
    q.context_widths = {1};
  }
  q.widths = parse_integer_list("--tp", o.widths, 1, model::limits::kTensorParallel);
  q.pipelines = parse_integer_list("--pp", o.pipelines, 1, model::limits::kLayers);
  q.replicas = parse_integer_list("--dp", o.replicas, 1, megatron::plan_limits::kGpus);
  q.micro_batches = parse_integer_list("--mbs", o.micro_batches, 1, model::limits::kMicroBatch);
  q.chunks = parse_integer_list("--vp", o.chunks, 1, megatron::plan_limits::kChunks);
  for (const std::string& r : list_items("--recompute", o.recomputes))
    q.recomputes.push_back(megatron::parse_recompute(r, "--recompute"));
  q.expert_widths = parse_integer_list("--ep", o.expert_widths, 1, model::limits::kExperts);
  if (!q.expert_widths.empty() && !spec.moe() &&
      std::any_of(q.expert_widths.begin(), q.expert_widths.end(), [](int64_t ep) { return ep > 1; }))
    throw InputError(fmt::format("--ep: {} has no experts", spec.name));
  q.expert_tensor_widths = parse_integer_list("--etp", o.expert_tensor_widths, 1, model::limits::kTensorParallel);
  if (!q.expert_tensor_widths.empty() && !spec.moe())
    throw InputError(fmt::format("--etp: {} has no experts", spec.name));
  for (auto* list : {&q.zero_stages, &q.context_widths, &q.expert_widths, &q.expert_tensor_widths}) {
    std::sort(list->begin(), list->end());
    list->erase(std::unique(list->begin(), list->end()), list->end());
  }
  if (q.zero_stages.empty()) throw InputError("--zero: give at least one ZeRO stage (0, 1, 2, 3)");
  // FP8 is Transformer Engine's BF16 recipe: tried where the GPU has FP8 and the run is BF16.
  q.try_fp8 = !accelerator && !o.fp8_given && o.features.bf16 && hw::peak_fp8_flop_per_s(hw::gpu_of(system)) > 0;
  if (o.fp8_recipe_given && !q.try_fp8 && !o.features.fp8)
    throw InputError("--fp8-recipe: no FP8 configuration is tried (FP16, or a GPU without FP8 tensor cores)");
  if (o.features.zero_group > 0 && q.zero_stages == std::vector<int64_t>{0})
    throw InputError("--zero-group needs a ZeRO stage among --zero (1, 2 or 3)");
  q.top = static_cast<size_t>(o.top);
  q.distinct = !o.all_variants;
  const auto start = std::chrono::steady_clock::now();
  // --rank-of: the pins name the configuration; the list and its rank are over every configuration.
  std::optional<megatron::StepPrediction> ranked;
  if (o.rank_of) {
    megatron::GpuPlanQuestion pinned = q;
    pinned.top = 1;
    const megatron::GpuPlanAnswer own = megatron::search_gpu_plans(spec, system, pinned, pricer);
    if (own.best.empty())
      throw InputError("--rank-of: no configuration with the pinned settings fits (plan without --rank-of says why)");
    ranked = own.best.front();
    q = megatron::unpinned(q);
    q.top = static_cast<size_t>(o.top);
    q.faster_than_s = ranked->time.iteration_s;
  }
  const megatron::GpuPlanAnswer a = megatron::search_gpu_plans(spec, system, q, pricer);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  megatron::TrainingPlan devices_plan = q.features;  // the features on the question's devices
  devices_plan.dp = q.gpus;
  const std::string assumptions = accelerator ? search::accelerator_assumptions(devices_plan, system)
                                              : megatron::assumptions_line(o.features, hw::gpu_of(system), spec);
  const std::string device = accelerator ? "device" : "GPU";
  // With nothing to offer, why, and what would give a configuration.
  const std::optional<megatron::NoPlanReason> why =
      a.best.empty() ? std::optional(megatron::explain_no_plan(spec, system, q, a, pricer)) : std::nullopt;
  if (o.json || !o.report.empty()) {
    nlohmann::json best = nlohmann::json::array();
    for (const auto& p : a.best) {
      nlohmann::json entry = io::to_json(p);
      if (const auto run = asked_training_run(o.run, p)) entry["training_run"] = io::to_json(*run);
      best.push_back(std::move(entry));
    }
    nlohmann::json out{
        {"model", spec.name},   {"system", system.name},
        {"gpus", q.gpus},       {"global_batch", q.global_batch},
        {"seq", q.seq},         {"evaluated", a.evaluated},
        {"fitting", a.fitting}, {"fits_only_with_context_parallelism", a.fits_only_with_context_parallelism},
        {"best", best},         {"assumptions", assumptions}};
    if (ranked)
      out["rank_of"] = {{"rank", a.faster + 1}, {"fitting", a.fitting}, {"configuration", io::to_json(*ranked)}};
    if (why) {
      nlohmann::json& no_plan = out["no_plan"] = {{"constraints", why->constraints}};
      if (a.least_memory) no_plan["least_memory"] = io::to_json(*a.least_memory);
      if (why->without_pins) no_plan["without_pins"] = io::to_json(*why->without_pins);
      if (why->least_gpus) no_plan["least_gpus"] = *why->least_gpus;
      if (why->nearest_global_batch) no_plan["nearest_global_batch"] = *why->nearest_global_batch;
    }
    if (!o.report.empty()) {
      // The best plan's iteration as a timeline beside the plans.
      std::vector<nlohmann::json> traces;
      if (!a.best.empty()) {
        const std::string name = fmt::format("{} on {} × {} ({}), the best plan", spec.name, q.gpus,
                                             hw::device_name(system.device), system.name);
        traces.push_back(
            nlohmann::json::parse(io::chrome_trace_json({io::prediction_timeline(name, a.best[0])}).dump()));
      }
      write_text_file(o.report, io::html_report(out, io::ReportKind::Plan, traces,
                                                fmt::format("phaze: plans of {} on {} GPUs", spec.name, q.gpus)));
    }
    if (o.json) {
      std::cout << out.dump(2) << "\n";
      return;
    }
  }
  fmt::print("{}\n", assumptions);
  fmt::print("{} on {} × {} ({}), global batch {}, seq {}\n", spec.description.empty() ? spec.name : spec.description,
             q.gpus, hw::device_name(system.device), system.name, q.global_batch, q.seq);
  fmt::print("{} ({}), {} fit in memory ({:.2f} s)\n", counted(a.evaluated, "configuration"),
             q.try_fp8         ? "BF16 and FP8"
             : o.features.fp8  ? "FP8"
             : o.features.bf16 ? "BF16"
                               : "FP16",
             a.fitting, seconds);
  if (a.fits_only_with_context_parallelism)
    fmt::print("only configurations with context parallelism fit: the sequence of {} tokens needs it\n", q.seq);
  if (why) {
    fmt::print("{}\n", a.evaluated == 0 ? "no configuration: Megatron-LM accepts none of these settings"
                                        : "no configuration fits in memory");
    for (const std::string& c : why->constraints) fmt::print("  {}\n", c);
    if (why->without_pins)
      fmt::print("  without the pinned settings, {} fits ({:.3f} s per iteration)\n",
                 megatron::plan_line(why->without_pins->plan), why->without_pins->time.iteration_s);
    if (why->nearest_global_batch)
      fmt::print("  the nearest global batch that divides: --global-batch {}\n", *why->nearest_global_batch);
    if (why->least_gpus) {
      fmt::print("  the least {} count that fits{}: --gpus {}\n", device, why->without_pins ? " with the pins" : "",
                 *why->least_gpus);
    } else {
      fmt::print("  no {} count up to {} fits either (a {} with more memory, or a shorter --seq)\n", device,
                 64 * q.gpus, device);
    }
    return;
  }
  if (ranked) {
    const double best_s = a.best.front().time.iteration_s;
    fmt::print("\nthe pinned configuration ranks #{} of the {} that fit, {:.1f} % slower than the best:\n",
               a.faster + 1, a.fitting, 100 * (ranked->time.iteration_s / best_s - 1));
    std::cout << prediction_text(*ranked, device);
    fmt::print("\nthe fastest configurations:\n");
  }
  for (size_t i = 0; i < a.best.size(); ++i) {
    fmt::print("\n#{}\n", i + 1);
    std::cout << prediction_text(a.best[i], device);
    if (const auto run = asked_training_run(o.run, a.best[i])) std::cout << training_run_text(*run);
  }
}

}  // namespace

void add_plan_command(CLI::App& app) {
  auto o = std::make_shared<PlanOptions>();
  CLI::App* cmd = app.add_subcommand("plan",
                                     "The fastest Megatron-LM configurations (t, c, p, d, v, micro-batch, sequence "
                                     "parallelism, recomputation, ZeRO stage, FP8) that fit, tried exhaustively; on an "
                                     "accelerator system (tpuv4-pod), GSPMD-style plans priced on the chip's exact "
                                     "layer schedules");
  cmd->add_option("--model", o->model, "Model preset or Hugging Face config.json")->required();
  cmd->add_option("--system", o->system, "GPU system preset or JSON file (see 'phaze system list')")
      ->capture_default_str();
  add_integer_option(cmd, "--gpus,--devices", o->gpus, 1, megatron::plan_limits::kGpus,
                     "GPUs or accelerators of the run (on a torus, a count that makes a slice)");
  add_integer_option(cmd, "--global-batch", o->global_batch, 1, megatron::plan_limits::kGlobalBatch,
                     "Sequences per iteration (or --global-batch-tokens)");
  add_global_batch_tokens_option(cmd, o->global_batch_tokens);
  add_integer_option(cmd, "--seq", o->seq, 0, model::limits::kSequence, "Tokens per sequence (0: the model's)");
  add_integer_option(cmd, "--top", o->top, 1, 1000, "Configurations to print");
  add_feature_options(cmd, o->features);
  cmd->add_flag("--no-fp8", o->no_fp8, "BF16 GEMMs only (without --fp8 or --no-fp8, FP8 is tried off and on)");
  // Megatron-LM's names, each a comma-separated list of the values tried: one value pins the setting.
  cmd->add_option("--tp", o->widths, "Tensor-parallel widths tried, comma-separated (default: every admissible)");
  cmd->add_option("--pp", o->pipelines, "Pipeline stage counts tried, comma-separated (default: every admissible)");
  cmd->add_option("--dp", o->replicas,
                  "Data-parallel degrees tried, comma-separated (default: whatever --gpus leaves, as Megatron-LM "
                  "derives it)");
  cmd->add_option("--mbs", o->micro_batches, "Micro-batch sizes tried, comma-separated (default: every divisor)");
  cmd->add_option("--vp", o->chunks, "Model chunks per GPU tried, comma-separated (default: every admissible)");
  cmd->add_flag("--all-variants", o->all_variants,
                "List every configuration, also those that differ from a faster one listed only in recomputation, "
                "ZeRO stage, sequence parallelism, precision or pipeline split (default: the fastest of each layout)");
  cmd->add_flag("--rank-of", o->rank_of,
                "Rank the configuration the pins name (--tp, --pp, --dp, --mbs, --vp, --recompute, --zero, --cp; the "
                "fastest of them if they leave several) among every configuration that fits, listed unpinned");
  cmd->add_option("--recompute", o->recomputes,
                  "Recomputation tried, comma-separated: none, selective, full (default: all three)");
  cmd->add_option("--zero", o->zero_stages, "ZeRO stages tried, comma-separated (default: 0,1,2,3)");
  cmd->add_option("--cp", o->context_widths,
                  "Context-parallel widths tried, comma-separated (default: 1 and the powers of two up to 64 that "
                  "divide --gpus)");
  cmd->add_option("--ep", o->expert_widths,
                  "Expert-parallel widths tried for a mixture of experts, comma-separated (default: every width "
                  "dividing its experts and the data- and context-parallel GPUs)");
  cmd->add_option("--etp", o->expert_tensor_widths,
                  "Expert tensor-parallel widths tried for a mixture of experts, comma-separated (default: every "
                  "width dividing its expert FFN, ep × etp dividing a stage's GPUs)");
  cmd->add_flag("--json", o->json, "Print JSON");
  cmd->add_option("--report", o->report,
                  "Write an HTML page of the plans (phaze report): the best plans side by side, where their "
                  "iterations go, memory per GPU, the best plan's timeline");
  add_training_run_options(cmd, o->run);
  cmd->callback([o, cmd] {
    o->fp8_given = cmd->count("--fp8") > 0 || o->no_fp8;
    o->fp8_recipe_given = cmd->count("--fp8-recipe") > 0;
    if (o->no_fp8) {
      if (o->features.fp8) throw InputError("--fp8 and --no-fp8 together");
      if (cmd->count("--fp8-recipe") > 0 || o->features.fp8_param_gather)
        throw InputError("--fp8-recipe and --fp8-param-gather need FP8 (drop --no-fp8)");
      o->features.fp8 = false;
    }
    plan(*o);
  });
}

}  // namespace phaze::cli
