#include "io/published_runs.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "hw/system_json.h"
#include "io/beside_file.h"
#include "model/hf_config.h"
#include "model/presets.h"
#include "util/input_error.h"
#include "util/json_fields.h"
#include "util/json_input.h"
#include "util/read_file.h"

namespace phaze::io {

namespace {

using nlohmann::json;

model::ModelSpec load_named_model(const std::string& file, const std::string& name, const std::string& where) {
  try {
    return load_model_beside(file, name);
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: model: {}", where, e.what()));
  }
}

/// A Megatron-LM GPT of the shape given: {"layers", "hidden", "heads", "seq", "vocab" (default 50,257),
/// "hidden_dropout" and "attention_dropout" (default 0.1, Megatron-LM's)}.
model::ModelSpec gpt_shape(const json& j, const std::string& where) {
  const JsonFields f(j, where);
  f.only({"layers", "hidden", "heads", "seq", "vocab", "hidden_dropout", "attention_dropout"});
  const int64_t layers = f.count("layers", model::limits::kLayers);
  const int64_t hidden = f.count("hidden", model::limits::kHidden);
  const int64_t heads = f.count("heads", model::limits::kHeads);
  const int64_t seq = f.count("seq", model::limits::kSequence);
  if (hidden % heads != 0) throw f.bad("hidden", fmt::format("a multiple of the {} heads", heads));
  model::ModelSpec spec = model::megatron_gpt(where, "published GPT", layers, hidden, heads, seq);
  spec.vocab = f.integer_in("vocab", spec.vocab, 1, model::limits::kVocab);
  spec.hidden_dropout = f.number_in("hidden_dropout", spec.hidden_dropout, 0, 1, false);
  spec.attention_dropout = f.number_in("attention_dropout", spec.attention_dropout, 0, 1, false);
  spec.embedding_dropout = spec.hidden_dropout > 0;
  return spec;
}

megatron::FlopCount parse_flop_count(const JsonFields& f) {
  if (!f.has("flop_count"))
    throw InputError(fmt::format(
        "{}: tflops_per_gpu needs flop_count (model, model-full-attention, hardware, narayanan or 6n: how the source "
        "counted its FLOPs)",
        f.source()));
  const std::string count = f.text("flop_count", "");
  if (count == "model") return megatron::FlopCount::Model;
  if (count == "hardware") return megatron::FlopCount::Hardware;
  if (count == "narayanan") return megatron::FlopCount::Narayanan;
  if (count == "model-full-attention") return megatron::FlopCount::ModelFullAttention;
  if (count == "6n") return megatron::FlopCount::SixN;
  throw f.bad("flop_count",
              "\"model\", \"model-full-attention\", \"hardware\", \"narayanan\" or \"6n\" (how the source counted "
              "its FLOPs)");
}

void read_published_figure(const JsonFields& f, megatron::PublishedRun& run) {
  const int given = f.has("tflops_per_gpu") + f.has("iteration_s") + f.has("tokens_per_s_per_gpu");
  if (given != 1)
    throw InputError(
        fmt::format("{}: exactly one of tflops_per_gpu, iteration_s and tokens_per_s_per_gpu is needed", f.source()));
  constexpr double kLargest = 1e12;
  if (f.has("tflops_per_gpu")) {
    run.metric = megatron::PublishedMetric::TflopsPerGpu;
    run.value = f.number_in("tflops_per_gpu", 0, 0, kLargest, true);
    run.flop_count = parse_flop_count(f);
  } else if (f.has("iteration_s")) {
    run.metric = megatron::PublishedMetric::IterationSeconds;
    run.value = f.number_in("iteration_s", 0, 0, kLargest, true);
  } else {
    run.metric = megatron::PublishedMetric::TokensPerSecondPerGpu;
    run.value = f.number_in("tokens_per_s_per_gpu", 0, 0, kLargest, true);
  }
}

megatron::PublishedRun read_run(const json& j, const std::string& file, const std::string& default_system,
                                size_t index) {
  const std::string where = fmt::format("{}: runs[{}]", file, index);
  if (!j.is_object()) throw InputError(fmt::format("{}: must be an object", where));
  const JsonFields f(j, where);
  f.only({"label",
          "model",
          "system",
          "gpus",
          "devices",
          "global_batch",
          "tp",
          "pp",
          "cp",
          "ep",
          "etp",
          "dp",
          "seq",
          "mbs",
          "vp",
          "recompute",
          "sequence_parallel",
          "distributed_optimizer",
          "zero",
          "zero_group",
          "fp8_recipe",
          "grad_reduce_in_fp32",
          "fp8_param_gather",
          "cp_comm_type",
          "moe_token_dispatcher_type",
          "overlap_grad_reduce",
          "overlap_param_gather",
          "tp_comm_overlap",
          "overlap_moe_expert_parallel_comm",
          "moe_shared_expert_overlap",
          "moe_expert_capacity_factor",
          "moe_pad_expert_input_to_capacity",
          "moe_load_imbalance",
          "mtp_num_layers",
          "flash_attention",
          "cross_entropy_loss_fusion",
          "attention_backend",
          "precision",
          "decoder_first_pipeline_num_layers",
          "decoder_last_pipeline_num_layers",
          "account_for_embedding_in_pipeline_split",
          "account_for_loss_in_pipeline_split",
          "pipeline_model_parallel_layout",
          "tflops_per_gpu",
          "flop_count",
          "iteration_s",
          "tokens_per_s_per_gpu",
          "note"});
  megatron::PublishedRun run;
  run.label = f.text("label", fmt::format("run {}", index));
  if (!f.has("model")) throw InputError(fmt::format("{}: missing required key 'model'", where));
  run.spec = j.at("model").is_object() ? gpt_shape(j.at("model"), where + ": model")
                                       : load_named_model(file, f.text("model", ""), where);
  const std::string system = f.text("system", default_system);
  if (system.empty())
    throw InputError(
        fmt::format("{}: no system: give the run's or the file's \"system\" (a GPU system preset or file)", where));
  try {
    run.system = load_system_beside(file, system);
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: system: {}", where, e.what()));
  }
  run.plan = megatron::current_practice();
  megatron::TrainingPlan& p = run.plan;
  // An accelerator system shards as GSPMD does: key/value heads fewer than t are replicated.
  p.gspmd_sharding = std::holds_alternative<hw::Architecture>(run.system.device);
  // The run trained: what fits is a question of memory, not of a planner's headroom.
  p.memory_reserve_bytes = 0;
  if (f.has("gpus") && f.has("devices")) throw f.bad("devices", "given without \"gpus\" (they are one count)");
  const int64_t gpus = f.count(f.has("devices") ? "devices" : "gpus", megatron::plan_limits::kGpus);
  p.global_batch = f.count("global_batch", megatron::plan_limits::kGlobalBatch);
  p.tp = f.integer_in("tp", 1, 1, model::limits::kTensorParallel);
  p.pp = f.integer_in("pp", 1, 1, model::limits::kLayers);
  const int64_t cp = f.integer_in("cp", 1, 1, megatron::plan_limits::kContextParallel);
  p.cp = cp;
  p.ep = f.integer_in("ep", 1, 1, model::limits::kExperts);
  p.etp = f.integer_in("etp", 0, 0, model::limits::kTensorParallel);
  if (gpus % (p.tp * p.pp * cp) != 0)
    throw f.bad("gpus", fmt::format("a multiple of tp × pp × cp = {}", p.tp * p.pp * cp));
  p.dp = f.integer_in("dp", gpus / (p.tp * p.pp * cp), 1, megatron::plan_limits::kGpus);
  if (p.dp * p.tp * p.pp * cp != gpus)
    throw f.bad("dp", fmt::format("gpus / (tp × pp × cp) = {}", gpus / (p.tp * p.pp * cp)));
  p.seq = f.integer_in("seq", run.spec.default_seq, 1, model::limits::kSequence);
  run.free_micro_batch = !f.has("mbs");
  p.micro_batch = f.integer_in("mbs", 1, 1, model::limits::kMicroBatch);
  run.free_interleaving = !f.has("vp");
  p.vp = f.integer_in("vp", 1, 1, megatron::plan_limits::kChunks);
  run.free_recompute = !f.has("recompute");
  if (f.has("recompute")) p.recompute = megatron::parse_recompute(f.text("recompute", ""), where + ": recompute");
  p.sequence_parallel = f.flag("sequence_parallel", false);
  const bool distributed_optimizer = f.flag("distributed_optimizer", false);
  p.zero = f.integer_in("zero", distributed_optimizer ? 1 : 0, 0, 3);
  if (distributed_optimizer && p.zero == 0) throw f.bad("zero", "at least 1 with \"distributed_optimizer\": true");
  p.zero_group = f.integer_in("zero_group", 0, 0, megatron::plan_limits::kGpus);
  if (f.has("cp_comm_type")) p.cp_comm = megatron::parse_cp_comm(f.text("cp_comm_type", ""), where + ": cp_comm_type");
  if (f.has("moe_token_dispatcher_type"))
    p.moe_dispatcher =
        megatron::parse_moe_dispatcher(f.text("moe_token_dispatcher_type", ""), where + ": moe_token_dispatcher_type");
  p.overlap_dp = f.flag("overlap_grad_reduce", false);
  p.overlap_param_gather = f.flag("overlap_param_gather", false);
  p.tp_comm_overlap = f.flag("tp_comm_overlap", false);
  p.overlap_moe_comm = f.flag("overlap_moe_expert_parallel_comm", false);
  p.shared_expert_overlap = f.flag("moe_shared_expert_overlap", false);
  p.moe_capacity_factor = f.number_in("moe_expert_capacity_factor", 0, 0, 4096, true);
  p.moe_pad_to_capacity = f.flag("moe_pad_expert_input_to_capacity", false);
  p.moe_load_imbalance = f.number_in("moe_load_imbalance", 1, 1, 4096, false);
  p.mtp_layers = f.integer_in("mtp_num_layers", 0, 0, megatron::plan_limits::kMtpLayers);
  p.flash_attention = f.flag("flash_attention", p.flash_attention);
  if (f.has("attention_backend")) {
    if (f.has("flash_attention")) throw f.bad("attention_backend", "given without \"flash_attention\"");
    megatron::set_attention_backend(p, f.text("attention_backend", ""), where + ": attention_backend");
  }
  p.unfused_loss = !f.flag("cross_entropy_loss_fusion", true);
  p.first_stage_layers = f.integer_in("decoder_first_pipeline_num_layers", 0, 0, model::limits::kLayers);
  p.last_stage_layers = f.integer_in("decoder_last_pipeline_num_layers", 0, 0, model::limits::kLayers);
  p.embedding_in_pipeline_split = f.flag("account_for_embedding_in_pipeline_split", false);
  p.loss_in_pipeline_split = f.flag("account_for_loss_in_pipeline_split", false);
  if (f.has("pipeline_model_parallel_layout")) {
    megatron::set_pipeline_layout(p, f.text("pipeline_model_parallel_layout", ""),
                                  where + ": pipeline_model_parallel_layout", f.has("vp"));
    run.free_interleaving = false;
  }
  const std::string precision = f.text("precision", "bf16");
  if (precision != "bf16" && precision != "fp16" && precision != "fp8") throw f.bad("precision", "bf16, fp16 or fp8");
  p.bf16 = precision != "fp16";
  p.fp8 = precision == "fp8";
  p.bf16_gradients = p.bf16 && !f.flag("grad_reduce_in_fp32", true);
  if (f.has("fp8_recipe")) p.fp8_recipe = megatron::parse_fp8_recipe(f.text("fp8_recipe", ""), where + ": fp8_recipe");
  p.fp8_param_gather = f.flag("fp8_param_gather", false);
  read_published_figure(f, run);
  if (!hw::sizable(run.system.network, gpus))
    throw f.bad(f.has("devices") ? "devices" : "gpus",
                fmt::format("a count that makes a slice of system '{}''s torus", run.system.name));
  try {
    megatron::validate(p, run.spec);
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}", where, e.what()));
  }
  return run;
}

}  // namespace

std::vector<megatron::PublishedRun> read_published_runs(const std::string& path) {
  const json j = parse_json_input(read_text_file(path), path);
  if (!j.is_object()) throw InputError(fmt::format("{}: must be an object with \"runs\"", path));
  const JsonFields f(j, path);
  f.only({"source", "system", "runs", "note"});
  const std::string system = f.text("system", "");
  if (!j.contains("runs") || !j.at("runs").is_array() || j.at("runs").empty())
    throw f.bad("runs", "a non-empty array of runs");
  if (j.at("runs").size() > static_cast<size_t>(kMaxPublishedRuns))
    throw f.bad("runs", fmt::format("at most {} runs", kMaxPublishedRuns));
  std::vector<megatron::PublishedRun> runs;
  for (size_t i = 0; i < j.at("runs").size(); ++i) runs.push_back(read_run(j.at("runs")[i], path, system, i));
  return runs;
}

}  // namespace phaze::io
