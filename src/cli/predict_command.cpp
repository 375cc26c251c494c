#include "cli/predict_command.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iostream>
#include <memory>
#include <optional>

#include "cli/batch_in_tokens.h"
#include "cli/feature_options.h"
#include "cli/option_values.h"
#include "cli/text_format.h"
#include "hw/system_json.h"
#include "io/chrome_trace.h"
#include "io/html_report.h"
#include "io/megatron_args.h"
#include "io/pipeline_trace.h"
#include "io/prediction_json.h"
#include "megatron/assumptions.h"
#include "megatron/fit_suggestions.h"
#include "megatron/training_run.h"
#include "model/hf_config.h"
#include "search/accelerator_prediction.h"
#include "util/input_error.h"
#include "util/output_file.h"

namespace phaze::cli {

namespace {

struct PredictOptions {
  std::string model;
  std::string system = "dgx-a100-80gb";
  int64_t gpus = 0;
  int64_t seq = 0;
  std::string recompute = "full";
  megatron::TrainingPlan plan = megatron::current_practice();
  bool json = false;
  std::string trace;   ///< write the iteration here as Chrome trace-event JSON
  std::string report;  ///< write the HTML report here
  TrainingRunOptions run;
  std::vector<std::string> megatron_args;  ///< pretrain_gpt.py's arguments, after --
  bool distributed_optimizer = false;      ///< --distributed-optimizer: ZeRO 1 unless --zero says more
  bool fp8_recipe_given = false;
  bool cp_comm_given = false;
  bool plan_options_given = false;  ///< any option that --'s arguments would contradict
  bool global_batch_given = false;
  int64_t global_batch_tokens = 0;  ///< --global-batch-tokens (0: not given)
  std::string layout;               ///< --pipeline-model-parallel-layout
  bool layout_given = false;
  bool vp_given = false;
  bool dp_given = false;
};

std::string seconds(double s) {
  return s >= 1 ? fmt::format("{:.3f} s", s) : fmt::format("{:.3f} ms", s * 1e3);
}

std::string gib(double bytes) {
  return fmt::format("{:.2f} GiB", bytes / 1073741824.0);
}

std::string precision_text(const megatron::TrainingPlan& p) {
  if (p.fp8)
    return fmt::format("FP8 GEMMs ({} scaling{}) with BF16", megatron::to_string(p.fp8_recipe),
                       p.fp8_param_gather ? ", FP8 parameter gather" : "");
  return p.bf16 ? "BF16" : "FP16";
}

std::string zero_text(const megatron::TrainingPlan& p) {
  if (p.zero == 0) return "";
  const std::string group = p.zero_group > 0 ? fmt::format(" in groups of {}", p.zero_group) : "";
  if (p.zero == 1) return ", distributed optimizer (ZeRO-1)" + group;
  return fmt::format(", ZeRO-{}{}", p.zero, group);
}

/// The model and plan of a run given as Megatron-LM's arguments; what phaze does not model goes to stderr.
model::ModelSpec from_megatron_args(PredictOptions& o) {
  if (o.plan_options_given)
    throw InputError(
        "predict: give the run either as phaze's options or as Megatron-LM's arguments after --, not both "
        "(--system, --gpus, --memory-reserve-gib and --json apply to both)");
  io::MegatronRun run = io::parse_megatron_args(o.megatron_args, o.gpus);
  run.plan.memory_reserve_bytes = o.plan.memory_reserve_bytes;
  o.plan = run.plan;
  for (const std::string& a : run.assumed) std::cerr << "phaze: assumed " << a << "\n";
  if (!run.not_modelled.empty())
    std::cerr << fmt::format("phaze: not modelled, so not affecting the prediction: {}\n",
                             fmt::join(run.not_modelled, ", "));
  return run.spec;
}

void predict(PredictOptions o) {
  model::ModelSpec spec;
  if (!o.megatron_args.empty()) {
    spec = from_megatron_args(o);
  } else {
    if (o.model.empty()) throw InputError("predict: --model is required (or Megatron-LM's arguments after --)");
    if (o.global_batch_given == (o.global_batch_tokens > 0))
      throw InputError(
          "predict: give the global batch as --global-batch (sequences) or --global-batch-tokens, one of them (or "
          "Megatron-LM's arguments after --)");
    spec = model::load_model(o.model);
    o.plan.seq = o.seq > 0 ? o.seq : spec.default_seq;
    if (o.global_batch_tokens > 0) {
      o.plan.global_batch = global_batch_of_tokens(o.global_batch_tokens, o.plan.seq);
      if (o.plan.global_batch > megatron::plan_limits::kGlobalBatch)
        throw InputError(fmt::format("--global-batch-tokens {}: {} sequences, more than the {} allowed",
                                     o.global_batch_tokens, o.plan.global_batch, megatron::plan_limits::kGlobalBatch));
    }
    o.plan.recompute = megatron::parse_recompute(o.recompute, "--recompute");
    if (o.distributed_optimizer && o.plan.zero == 0) o.plan.zero = 1;
    if (o.layout_given) megatron::set_pipeline_layout(o.plan, o.layout, "--pipeline-model-parallel-layout", o.vp_given);
    if (o.fp8_recipe_given && !o.plan.fp8) throw InputError("--fp8-recipe needs --fp8");
    if (o.cp_comm_given && o.plan.cp == 1) throw InputError("--cp-comm-type needs context parallelism (--cp > 1)");
    // Megatron-LM derives d from the world size: --gpus without --dp leaves it what t × c × p leave.
    if (o.gpus > 0 && !o.dp_given) {
      const int64_t model_parallel = o.plan.tp * o.plan.cp * o.plan.pp;
      if (o.gpus % model_parallel != 0)
        throw InputError(fmt::format("--gpus = {} is not a multiple of --tp {} × --cp {} × --pp {} = {}", o.gpus,
                                     o.plan.tp, o.plan.cp, o.plan.pp, model_parallel));
      o.plan.dp = o.gpus / model_parallel;
    }
    if (o.gpus > 0 && o.gpus != o.plan.gpus())
      throw InputError(fmt::format("--gpus = {} must equal --tp {} × --cp {} × --pp {} × --dp {} = {}", o.gpus,
                                   o.plan.tp, o.plan.cp, o.plan.pp, o.plan.dp, o.plan.gpus()));
  }
  const hw::System system = hw::load_system(o.system);
  // An accelerator system shards as GSPMD does: key/value heads fewer than t are replicated.
  o.plan.gspmd_sharding = std::holds_alternative<hw::Architecture>(system.device);
  if (!o.trace.empty()) check_writable("--trace", o.trace);
  if (!o.report.empty()) check_writable("--report", o.report);
  // An accelerator of the template runs each layer as its exact schedule; a GPU runs kernels.
  const bool accelerator = o.plan.gspmd_sharding;
  const megatron::StepPrediction p = megatron::predict_step(spec, system, o.plan, search::system_pricer());
  const std::string assumptions = accelerator ? search::accelerator_assumptions(o.plan, system)
                                              : megatron::assumptions_line(o.plan, hw::gpu_of(system), spec);
  const std::string name =
      fmt::format("{} on {} × {} ({})", spec.name, o.plan.gpus(), hw::device_name(system.device), system.name);
  if (!o.trace.empty()) io::write_chrome_trace(o.trace, {io::prediction_timeline(name, p)});
  // A configuration that does not fit says which near ones would (on GPUs: each neighbour is priced anew).
  const std::vector<megatron::FitSuggestion> would_fit = p.memory.fits || accelerator
                                                             ? std::vector<megatron::FitSuggestion>{}
                                                             : megatron::fitting_neighbours(spec, system, o.plan);
  const std::optional<megatron::TrainingRun> run = asked_training_run(o.run, p);
  {
    nlohmann::json out = io::to_json(p);
    out["model"] = spec.name;
    out["system"] = system.name;
    out["assumptions"] = assumptions;
    if (run) out["training_run"] = io::to_json(*run);
    if (!p.memory.fits) {
      nlohmann::json fits_with = nlohmann::json::array();
      for (const megatron::FitSuggestion& s : would_fit)
        fits_with.push_back({{"flags", s.flags},
                             {"iteration_time_s", s.prediction.time.iteration_s},
                             {"peak_bytes", s.prediction.memory.peak_bytes}});
      out["fits_with"] = fits_with;
    }
    if (!o.report.empty())
      write_text_file(
          o.report,
          io::html_report(out, io::ReportKind::Predict,
                          {nlohmann::json::parse(io::chrome_trace_json({io::prediction_timeline(name, p)}).dump())},
                          "phaze: " + name));
    if (o.json) {
      std::cout << out.dump(2) << "\n";
      return;
    }
  }
  fmt::print("{}\n", assumptions);
  fmt::print("{} on {} × {} ({})\n", spec.description.empty() ? spec.name : spec.description, o.plan.gpus(),
             hw::device_name(system.device), system.name);
  std::cout << prediction_text(p, accelerator ? "device" : "GPU");
  if (!p.memory.fits && !accelerator) {
    if (would_fit.empty())
      fmt::print(
          "  would fit       nothing one or two steps away (recomputation, ZeRO, sequence parallelism, "
          "twice t or p, half the micro-batch): more GPUs or less per GPU\n");
    for (size_t i = 0; i < would_fit.size(); ++i)
      fmt::print("  {}{}: {}, peak {}\n", i == 0 ? "would fit       " : "                ", would_fit[i].flags,
                 seconds(would_fit[i].prediction.time.iteration_s), gib(would_fit[i].prediction.memory.peak_bytes));
  }
  if (run) std::cout << training_run_text(*run);
}

}  // namespace

std::string prediction_text(const megatron::StepPrediction& p, const std::string& device) {
  const megatron::TrainingPlan& pl = p.plan;
  const megatron::StepTime& t = p.time;
  const megatron::StepMemory& m = p.memory;
  std::string out;
  out += fmt::format(
      "  plan            t {}{} · p {} · d {}{}{}{}, micro-batch {} × {} per pipeline, global batch {}, "
      "seq {}\n",
      pl.tp, pl.cp > 1 ? fmt::format(" · c {}", pl.cp) : "", pl.pp, pl.dp,
      pl.ep > 1 || pl.expert_tp() != pl.tp ? fmt::format(" · ep {} × etp {}", pl.ep, pl.expert_tp()) : "",
      pl.vp > 1 ? fmt::format(" (v {})", pl.vp) : "",
      !pl.layout.empty() ? fmt::format(", layout {}", megatron::to_string(pl.layout))
      : pl.uneven()      ? fmt::format(", stage layers {} first, {} last", pl.first_stage_layers, pl.last_stage_layers)
      : pl.accounts_in_split()
          ? fmt::format(", the {} counted as a layer of the pipeline split",
                        pl.embedding_in_pipeline_split && pl.loss_in_pipeline_split ? "embedding and the loss each"
                        : pl.embedding_in_pipeline_split                            ? "embedding"
                                                                                    : "loss")
          : "",
      pl.micro_batch, p.micro_batches, pl.global_batch, pl.seq);
  out += fmt::format("  features        {}, recompute {}{}{}{}{}{}{}{}{}{}{}\n", precision_text(pl),
                     megatron::to_string(pl.recompute), pl.sequence_parallel ? ", sequence parallel" : "",
                     zero_text(pl), pl.overlap_dp ? ", gradient reduction overlapped" : "",
                     pl.overlap_param_gather ? ", parameter gather overlapped" : "",
                     pl.tp_comm_overlap ? ", TP communication overlapped" : "",
                     pl.overlap_moe_comm ? ", EP all-to-alls overlapped" : "",
                     !pl.flash_attention                                    ? ""
                     : pl.attention_library == hw::AttentionLibrary::Flash2 ? ", FlashAttention-2"
                                                                            : ", flash attention",
                     pl.unfused_loss ? ", unfused FP32 loss" : "",
                     pl.moe_dispatcher == megatron::MoeDispatcher::Flex ? ", DeepEP dispatch" : "",
                     pl.mtp_layers > 0 ? fmt::format(", {} multi-token prediction module{}", pl.mtp_layers,
                                                     pl.mtp_layers > 1 ? "s" : "")
                                       : "");
  out += fmt::format("  iteration       {}\n", seconds(t.iteration_s));
  const std::pair<const char*, double> parts[] = {
      {"forward", t.forward_s}, {"backward", t.backward_s},  {"recompute", t.recompute_s}, {"TP comm", t.tp_comm_s},
      {"CP comm", t.cp_comm_s}, {"EP comm", t.ep_comm_s},    {"PP comm", t.pp_comm_s},     {"bubble", t.bubble_s},
      {"DP comm", t.dp_comm_s}, {"optimizer", t.optimizer_s}};
  for (const auto& [name, s] : parts)
    if ((name != std::string("CP comm") || pl.cp > 1) && (name != std::string("EP comm") || pl.ep > 1))
      out += fmt::format("    {:<13} {:>12}  {:5.1f}%\n", name, seconds(s), 100 * s / t.iteration_s);
  out += fmt::format(
      "  throughput      {:.0f} tokens/s ({:.0f} per {}), {:.1f} TFLOP/s per {} (with recomputation), MFU {:.1f}% "
      "of the 16-bit peak (ceiling {:.0f}%)\n",
      p.tokens_per_s, p.tokens_per_s / static_cast<double>(pl.gpus()), device, p.flop_per_s_per_gpu / 1e12, device,
      100 * p.mfu, 100 * p.mfu_ceiling);
  out += fmt::format(
      "  {:<15} stage {}: weights {}, gradients {}, optimizer {}, activations {}, allocator {}, "
      "runtime {}\n",
      "memory per " + device, m.stage, gib(m.weights_bytes), gib(m.gradients_bytes), gib(m.optimizer_bytes),
      gib(m.activations_bytes), gib(m.allocator_bytes), gib(m.runtime_bytes));
  out += fmt::format(
      "  peak            {} of {}{}: {}\n", gib(m.peak_bytes), gib(static_cast<double>(m.capacity_bytes)),
      m.reserve_bytes > 0 ? fmt::format(", keeping {} free", gib(static_cast<double>(m.reserve_bytes))) : "",
      m.fits ? "fits" : "DOES NOT FIT");
  return out;
}

void add_training_run_options(CLI::App* cmd, TrainingRunOptions& o) {
  CLI::Option* tokens =
      add_number_option(cmd, "--train-tokens", o.tokens, 0, megatron::kMaxTrainTokens, true,
                        "Tokens to train on: the run's iterations (whole global batches), time and GPU-hours");
  add_number_option(cmd, "--usd-per-device-hour", o.usd_per_device_hour, 0, megatron::kMaxUsdPerDeviceHour, true,
                    "Price of one GPU for one hour in US dollars: the run's cost (with --train-tokens)")
      ->needs(tokens);
}

std::optional<megatron::TrainingRun> asked_training_run(const TrainingRunOptions& o,
                                                        const megatron::StepPrediction& prediction) {
  if (o.tokens <= 0) return std::nullopt;
  return megatron::training_run(prediction, o.tokens,
                                o.usd_per_device_hour > 0 ? std::optional(o.usd_per_device_hour) : std::nullopt);
}

std::string training_run_text(const megatron::TrainingRun& run) {
  return fmt::format(
      "  training run    {:.4g} tokens: {:.0f} iterations of {:.4g} tokens, {:.4g} s ({:.2f} days), {:.4g} "
      "GPU-hours{}\n",
      run.tokens, run.iterations, run.tokens_per_iteration, run.seconds, run.seconds / 86400, run.gpu_hours,
      run.usd ? fmt::format(", ${:.4g}", *run.usd) : "");
}

void add_predict_command(CLI::App& app) {
  auto o = std::make_shared<PredictOptions>();
  CLI::App* cmd = app.add_subcommand(
      "predict",
      "Iteration time, throughput and memory of one Megatron-LM training configuration on a GPU system, or of one "
      "GSPMD-style configuration on an accelerator system (tpuv4-pod: --tp the model axis, --zero 3 the fully "
      "sharded data axis)");
  cmd->add_option("--model", o->model,
                  "Model preset or Hugging Face config.json (or Megatron-LM's pretrain_gpt.py arguments after --)");
  cmd->add_option("--system", o->system, "System preset or JSON file, GPUs or accelerators (see 'phaze system list')")
      ->capture_default_str();
  add_integer_option(cmd, "--tp", o->plan.tp, 1, model::limits::kTensorParallel, "Tensor-parallel width");
  add_integer_option(cmd, "--cp", o->plan.cp, 1, megatron::plan_limits::kContextParallel,
                     "Context-parallel width (each sequence split over cp groups of tp GPUs)");
  add_integer_option(cmd, "--ep", o->plan.ep, 1, model::limits::kExperts,
                     "Expert-parallel width of a mixture of experts (its experts split over ep groups of tp GPUs)");
  add_integer_option(cmd, "--etp", o->plan.etp, 0, model::limits::kTensorParallel,
                     "Expert tensor-parallel width (each expert's columns split over etp GPUs; 0: --tp)");
  add_integer_option(cmd, "--pp", o->plan.pp, 1, model::limits::kLayers, "Pipeline stages");
  add_integer_option(cmd, "--dp", o->plan.dp, 1, megatron::plan_limits::kGpus, "Data-parallel replicas");
  add_integer_option(cmd, "--vp", o->plan.vp, 1, megatron::plan_limits::kChunks,
                     "Model chunks per GPU (interleaved 1F1B when > 1)");
  cmd->add_flag("--account-for-embedding-in-pipeline-split", o->plan.embedding_in_pipeline_split,
                "Count the embedding as a layer of the pipeline split (the first stage holds one layer fewer)");
  cmd->add_flag("--account-for-loss-in-pipeline-split", o->plan.loss_in_pipeline_split,
                "Count the loss as a layer of the pipeline split (the last stage holds one layer fewer)");
  add_integer_option(cmd, "--decoder-first-pipeline-num-layers", o->plan.first_stage_layers, 0, model::limits::kLayers,
                     "Transformer layers of the first pipeline stage (0: an even share)");
  add_integer_option(cmd, "--decoder-last-pipeline-num-layers", o->plan.last_stage_layers, 0, model::limits::kLayers,
                     "Transformer layers of the last pipeline stage (0: an even share)");
  cmd->add_option("--pipeline-model-parallel-layout", o->layout,
                  "Each model chunk's contents, Megatron-LM's syntax: E embedding, t layer, m multi-token prediction, "
                  "L loss, | between chunks, X*n repeats, e.g. \"Et*3|(tt|)*29,m|L\" (sets --vp unless given)")
      ->type_name("TEXT");
  add_integer_option(cmd, "--gpus,--devices", o->gpus, 0, megatron::plan_limits::kGpus,
                     "GPUs or accelerators of the run (0: tp × cp × pp × dp); without --dp, d is what tp × cp × pp "
                     "leave, as Megatron-LM derives it; with --dp, must equal tp × cp × pp × dp");
  add_integer_option(cmd, "--mbs", o->plan.micro_batch, 1, model::limits::kMicroBatch, "Sequences per micro-batch");
  add_integer_option(cmd, "--global-batch", o->plan.global_batch, 1, megatron::plan_limits::kGlobalBatch,
                     "Sequences per iteration (required unless Megatron-LM's arguments follow --)");
  add_global_batch_tokens_option(cmd, o->global_batch_tokens);
  add_integer_option(cmd, "--seq", o->seq, 0, model::limits::kSequence, "Tokens per sequence (0: the model's)");
  cmd->add_flag("--sequence-parallel", o->plan.sequence_parallel, "Sequence parallelism (needs --tp > 1)");
  cmd->add_option("--recompute", o->recompute, "Activation recomputation: full, selective or none")
      ->capture_default_str();
  cmd->add_flag("--distributed-optimizer", o->distributed_optimizer,
                "Shard optimizer state and master weights over the data-parallel replicas (--zero 1)");
  add_integer_option(cmd, "--zero", o->plan.zero, 0, 3,
                     "ZeRO stage: 0 none, 1 optimizer state (the distributed optimizer), 2 and gradients, 3 and "
                     "parameters (FSDP)");
  add_feature_options(cmd, o->plan);
  cmd->add_flag("--json", o->json, "Print JSON");
  add_training_run_options(cmd, o->run);
  cmd->add_option("--report", o->report,
                  "Write an HTML page of the prediction (phaze report): where the iteration goes, memory per GPU "
                  "and the iteration's timeline");
  cmd->add_option("--trace", o->trace,
                  "Write the iteration as Chrome trace-event JSON (Perfetto, chrome://tracing): one track per "
                  "pipeline stage, one for the gradients and the optimizer, ending at the iteration time");
  cmd->add_option("megatron-args", o->megatron_args,
                  "After --: Megatron-LM's pretrain_gpt.py arguments (the model and plan are read from them)");
  cmd->callback([o, cmd] {
    for (const char* option : {"--model",
                               "--tp",
                               "--cp",
                               "--ep",
                               "--etp",
                               "--pp",
                               "--dp",
                               "--vp",
                               "--mbs",
                               "--global-batch",
                               "--global-batch-tokens",
                               "--seq",
                               "--sequence-parallel",
                               "--recompute",
                               "--distributed-optimizer",
                               "--zero",
                               "--zero-group",
                               "--overlap-grad-reduce",
                               "--overlap-param-gather",
                               "--tp-comm-overlap",
                               "--flash-attention",
                               "--cross-entropy-loss-fusion",
                               "--attention-backend",
                               "--bf16",
                               "--grad-reduce-in-bf16",
                               "--fp8",
                               "--fp8-recipe",
                               "--fp8-param-gather",
                               "--cp-comm-type",
                               "--decoder-first-pipeline-num-layers",
                               "--decoder-last-pipeline-num-layers",
                               "--account-for-embedding-in-pipeline-split",
                               "--account-for-loss-in-pipeline-split",
                               "--pipeline-model-parallel-layout"})
      o->plan_options_given = o->plan_options_given || cmd->count(option) > 0;
    o->global_batch_given = cmd->count("--global-batch") > 0;
    o->vp_given = cmd->count("--vp") > 0;
    o->dp_given = cmd->count("--dp") > 0;
    o->layout_given = cmd->count("--pipeline-model-parallel-layout") > 0;
    o->fp8_recipe_given = cmd->count("--fp8-recipe") > 0;
    o->cp_comm_given = cmd->count("--cp-comm-type") > 0;
    predict(*o);
  });
}

}  // namespace phaze::cli
