#include "io/megatron_args.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "model/presets.h"
#include "util/input_error.h"
#include "util/number_text.h"

namespace phaze::io {

namespace {

/// Megatron-LM's flags that take no value and that phaze reads.
const std::set<std::string> kModelledSwitches = {
    "--swiglu",
    "--untie-embeddings-and-output-weights",
    "--disable-bias-linear",
    "--add-bias-linear",
    "--group-query-attention",
    "--sequence-parallel",
    "--use-distributed-optimizer",
    "--overlap-grad-reduce",
    "--overlap-param-gather",
    "--tp-comm-overlap",
    "--overlap-moe-expert-parallel-comm",
    "--moe-shared-expert-overlap",
    "--recompute-activations",
    "--bf16",
    "--fp16",
    "--use-flash-attn",
    "--use-rotary-position-embeddings",
    "--fp8-param-gather",
    "--grad-reduce-in-bf16",
    "--account-for-embedding-in-pipeline-split",
    "--account-for-loss-in-pipeline-split",
    "--use-megatron-fsdp",
    "--cross-entropy-loss-fusion",
    "--qk-layernorm",
    "--moe-grouped-gemm",
    "--multi-latent-attention",
    "--moe-pad-expert-input-to-capacity",
};

/// Flags with a value that phaze reads.
const std::set<std::string> kModelledValues = {
    "--num-layers",
    "--hidden-size",
    "--num-attention-heads",
    "--num-query-groups",
    "--ffn-hidden-size",
    "--kv-channels",
    "--seq-length",
    "--max-position-embeddings",
    "--vocab-size",
    "--normalization",
    "--position-embedding-type",
    "--attention-dropout",
    "--hidden-dropout",
    "--micro-batch-size",
    "--global-batch-size",
    "--tensor-model-parallel-size",
    "--pipeline-model-parallel-size",
    "--context-parallel-size",
    "--virtual-pipeline-model-parallel-size",
    "--num-layers-per-virtual-pipeline-stage",
    "--decoder-first-pipeline-num-layers",
    "--decoder-last-pipeline-num-layers",
    "--recompute-granularity",
    "--recompute-method",
    "--attention-backend",
    "--fp8-format",
    "--fp8-recipe",
    "--cp-comm-type",
    "--data-parallel-sharding-strategy",
    "--cross-entropy-fusion-impl",
    "--num-experts",
    "--moe-router-topk",
    "--moe-ffn-hidden-size",
    "--moe-shared-expert-intermediate-size",
    "--moe-layer-freq",
    "--expert-model-parallel-size",
    "--expert-tensor-parallel-size",
    "--moe-router-score-function",
    "--moe-router-num-groups",
    "--moe-router-group-topk",
    "--q-lora-rank",
    "--kv-lora-rank",
    "--qk-head-dim",
    "--qk-pos-emb-head-dim",
    "--v-head-dim",
    "--mtp-num-layers",
    "--moe-token-dispatcher-type",
    "--moe-flex-dispatcher-backend",
    "--moe-expert-capacity-factor",
    "--moe-token-drop-policy",
    "--pipeline-model-parallel-layout",
};

/// The flags of the command line, each with its value ("" for a switch); later ones replace earlier ones,
/// as in argparse.
struct Flags {
  std::map<std::string, std::string> values;
  std::vector<std::string> not_modelled;

  bool has(const std::string& flag) const { return values.count(flag) > 0; }
  std::optional<std::string> value(const std::string& flag) const {
    const auto it = values.find(flag);
    if (it == values.end()) return std::nullopt;
    return it->second;
  }
  int64_t integer(const std::string& flag, int64_t fallback, int64_t high) const {
    const auto v = value(flag);
    return v ? parse_integer(flag, *v, 1, high) : fallback;
  }
  int64_t required(const std::string& flag, int64_t high) const {
    if (!has(flag)) throw InputError(fmt::format("Megatron-LM arguments: {} is required", flag));
    return integer(flag, 0, high);
  }
  double probability(const std::string& flag, double fallback) const {
    const auto v = value(flag);
    return v ? parse_number(flag, *v, 0, 1) : fallback;
  }
};

Flags read_flags(const std::vector<std::string>& args) {
  Flags f;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i];
    std::optional<std::string> value;
    if (flag.rfind("--", 0) != 0)
      throw InputError(fmt::format("Megatron-LM arguments: '{}' is not a flag (flags start with --)", flag));
    if (const size_t eq = flag.find('='); eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
    } else if (i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0) {
      value = args[++i];
    }
    if (!kModelledSwitches.count(flag) && !kModelledValues.count(flag)) {
      // A flag phaze does not read may take several values (--data-path 0.5 a 0.5 b): keep them all.
      std::string kept = value ? flag + " " + *value : flag;
      while (i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0) kept += " " + args[++i];
      f.not_modelled.push_back(kept);
      continue;
    }
    if (kModelledSwitches.count(flag)) {
      if (value) throw InputError(fmt::format("Megatron-LM arguments: {} takes no value, got '{}'", flag, *value));
      f.values[flag] = "";
    } else {
      if (!value) throw InputError(fmt::format("Megatron-LM arguments: {} needs a value", flag));
      f.values[flag] = *value;
    }
  }
  return f;
}

/// Refuses what would change the answer but is not modelled yet.
void refuse_unmodelled(const Flags& f) {
  if (const auto format = f.value("--fp8-format"); format && *format != "hybrid" && *format != "e4m3")
    throw InputError(fmt::format("Megatron-LM arguments: --fp8-format {}: hybrid or e4m3", *format));
  if (!f.has("--bf16") && !f.has("--fp16"))
    throw InputError("Megatron-LM arguments: neither --bf16 nor --fp16: FP32 training is not modelled");
  if (f.has("--bf16") && f.has("--fp16"))
    throw InputError("Megatron-LM arguments: --bf16 and --fp16 together (Megatron-LM refuses them too)");
}

/// The dense first layers of --moe-layer-freq: 1 (every layer has experts) or Megatron-LM's list expression
/// "([0]*K+[1]*N)" (K dense layers, then N with experts, N + K the layers); another pattern is refused.
int64_t first_dense_layers(const Flags& f, int64_t layers) {
  const std::string freq = f.value("--moe-layer-freq").value_or("1");
  if (freq == "1") return 0;
  std::string text;
  for (char c : freq)
    if (c != ' ' && c != '(' && c != ')') text += c;
  const std::string dense_head = "[0]*", sparse_head = "+[1]*";
  const size_t plus = text.find(sparse_head);
  const auto refuse = [&] {
    return InputError(fmt::format(
        "Megatron-LM arguments: --moe-layer-freq {}: 1 or ([0]*K+[1]*N) with K + N = --num-layers {} (dense "
        "layers among the expert layers are not modelled)",
        freq, layers));
  };
  if (text.rfind(dense_head, 0) != 0 || plus == std::string::npos) throw refuse();
  const std::string dense_text = text.substr(dense_head.size(), plus - dense_head.size());
  const std::string sparse_text = text.substr(plus + sparse_head.size());
  const auto digits = [](const std::string& t) {
    return !t.empty() && t.size() <= 6 && t.find_first_not_of("0123456789") == std::string::npos;
  };
  if (!digits(dense_text) || !digits(sparse_text)) throw refuse();
  const int64_t dense = std::stoll(dense_text), sparse = std::stoll(sparse_text);
  if (sparse < 1 || dense + sparse != layers) throw refuse();
  return dense;
}

/// Multi-head latent attention (--multi-latent-attention) with Megatron-LM's defaults: no query latent, a
/// key/value latent of 32, heads of 128 + 64 RoPE elements, values of 128.
void read_latent_attention(const Flags& f, model::ModelSpec& m) {
  if (!f.has("--multi-latent-attention")) return;
  m.q_lora_rank = f.integer("--q-lora-rank", 0, model::limits::kHidden);
  m.kv_lora_rank = f.integer("--kv-lora-rank", 32, model::limits::kHidden);
  m.head_size = f.integer("--qk-head-dim", 128, model::limits::kHidden);
  m.rope_head_size = f.integer("--qk-pos-emb-head-dim", 64, model::limits::kHidden);
  m.value_head_size = f.integer("--v-head-dim", 128, model::limits::kHidden);
  m.kv_heads = m.heads;
  m.fused_qkv = false;
}

/// The router of a mixture of experts: its score function and group-limited routing.
void read_router(const Flags& f, model::ModelSpec& m) {
  const std::string score = f.value("--moe-router-score-function").value_or("softmax");
  if (score != "softmax" && score != "sigmoid")
    throw InputError(fmt::format("Megatron-LM arguments: --moe-router-score-function {}: softmax or sigmoid", score));
  m.router_sigmoid = score == "sigmoid";
  if (f.has("--moe-router-num-groups")) {
    m.expert_groups = f.integer("--moe-router-num-groups", 0, model::limits::kExperts);
    m.expert_groups_per_token = f.required("--moe-router-group-topk", model::limits::kExperts);
  }
}

model::ModelSpec read_model(const Flags& f, std::vector<std::string>& assumed) {
  const int64_t layers = f.required("--num-layers", model::limits::kLayers);
  const int64_t hidden = f.required("--hidden-size", model::limits::kHidden);
  const int64_t heads = f.required("--num-attention-heads", model::limits::kHeads);
  const int64_t seq = f.required("--seq-length", model::limits::kSequence);
  // --kv-channels gives the head size; without it Megatron-LM takes hidden / heads, which must divide.
  const int64_t head_size = f.integer("--kv-channels", 0, model::limits::kHidden);
  if (head_size == 0 && hidden % heads != 0)
    throw InputError(
        fmt::format("Megatron-LM arguments: --hidden-size {} is not a multiple of the {} heads (give --kv-channels)",
                    hidden, heads));
  model::ModelSpec m =
      model::megatron_gpt("megatron-args", "Megatron-LM GPT from its arguments", layers, hidden, heads, seq);
  if (head_size != 0 && (hidden % heads != 0 || head_size != hidden / heads)) m.head_size = head_size;
  m.qk_norm = f.has("--qk-layernorm");
  // Megatron-LM's --num-query-groups defaults to 1 (multi-query attention) under --group-query-attention.
  if (f.has("--group-query-attention")) m.kv_heads = f.integer("--num-query-groups", 1, model::limits::kHeads);
  const bool swiglu = f.has("--swiglu");
  if (swiglu) m.activation = model::Activation::SwiGlu;
  // Megatron-LM's default FFN size: 4h, or for SwiGLU two thirds of it, rounded down to a multiple of 64.
  const int64_t default_ffn = swiglu ? (4 * hidden * 2 / 3) / 64 * 64 : 4 * hidden;
  m.ffn = f.integer("--ffn-hidden-size", default_ffn, model::limits::kFfn);
  m.max_positions = f.integer("--max-position-embeddings", seq, model::limits::kSequence);
  if (f.has("--num-experts")) {
    // Megatron-Core's defaults: 2 experts per token, each expert as wide as --ffn-hidden-size.
    m.experts = f.integer("--num-experts", 0, model::limits::kExperts);
    m.experts_per_token = f.integer("--moe-router-topk", 2, model::limits::kExperts);
    m.expert_ffn = f.integer("--moe-ffn-hidden-size", m.ffn, model::limits::kFfn);
    m.shared_expert_ffn = f.integer("--moe-shared-expert-intermediate-size", 0, model::limits::kFfn);
    m.first_dense_layers = first_dense_layers(f, layers);
    read_router(f, m);
  }
  read_latent_attention(f, m);
  if (f.has("--vocab-size")) {
    m.vocab = f.integer("--vocab-size", 0, model::limits::kVocab);
  } else {
    assumed.push_back(fmt::format("vocabulary {} (GPT-2's; give --vocab-size for another tokenizer)", m.vocab));
  }
  const std::string norm = f.value("--normalization").value_or("LayerNorm");
  if (norm == "RMSNorm") {
    m.norm = model::NormKind::RmsNorm;
  } else if (norm != "LayerNorm") {
    throw InputError(fmt::format("Megatron-LM arguments: --normalization {}: LayerNorm or RMSNorm", norm));
  }
  const std::string position = f.value("--position-embedding-type")
                                   .value_or(f.has("--use-rotary-position-embeddings") ? "rope" : "learned_absolute");
  if (position == "rope") {
    m.rotary = true;
  } else if (position != "learned_absolute") {
    throw InputError(
        fmt::format("Megatron-LM arguments: --position-embedding-type {}: learned_absolute or rope", position));
  }
  m.tied_head = !f.has("--untie-embeddings-and-output-weights");
  m.biases = !f.has("--disable-bias-linear");
  m.attention_dropout = f.probability("--attention-dropout", 0.1);
  m.hidden_dropout = f.probability("--hidden-dropout", 0.1);
  m.embedding_dropout = m.hidden_dropout > 0;
  model::validate(m, "Megatron-LM arguments");
  return m;
}

megatron::TrainingPlan read_plan(const Flags& f, const model::ModelSpec& spec, int64_t gpus) {
  megatron::TrainingPlan p;
  p.seq = spec.default_seq;
  p.tp = f.integer("--tensor-model-parallel-size", 1, model::limits::kTensorParallel);
  p.pp = f.integer("--pipeline-model-parallel-size", 1, model::limits::kLayers);
  p.cp = f.integer("--context-parallel-size", 1, megatron::plan_limits::kContextParallel);
  const int64_t model_parallel = p.tp * p.cp * p.pp;
  if (gpus == 0) gpus = model_parallel;
  if (gpus % model_parallel != 0)
    throw InputError(
        fmt::format("--gpus = {} must be a multiple of the tensor × context × pipeline size {}", gpus, model_parallel));
  p.dp = gpus / model_parallel;
  p.micro_batch = f.integer("--micro-batch-size", 1, model::limits::kMicroBatch);
  p.global_batch = f.integer("--global-batch-size", p.micro_batch * p.dp, megatron::plan_limits::kGlobalBatch);
  p.vp = f.integer("--virtual-pipeline-model-parallel-size", 1, megatron::plan_limits::kChunks);
  p.embedding_in_pipeline_split = f.has("--account-for-embedding-in-pipeline-split");
  p.loss_in_pipeline_split = f.has("--account-for-loss-in-pipeline-split");
  if (f.has("--num-layers-per-virtual-pipeline-stage")) {
    // Megatron-LM counts the embedding and the loss among the layers of the split when told to.
    const int64_t slots = p.split_slots(spec.num_layers);
    const int64_t per_chunk = f.integer("--num-layers-per-virtual-pipeline-stage", 1, model::limits::kLayers);
    if (slots % (p.pp * per_chunk) != 0)
      throw InputError(
          fmt::format("--num-layers-per-virtual-pipeline-stage {}: {} layers are not a whole number of "
                      "chunks on {} stages",
                      per_chunk, slots, p.pp));
    p.vp = slots / (p.pp * per_chunk);
  }
  p.first_stage_layers = f.has("--decoder-first-pipeline-num-layers")
                             ? parse_integer("--decoder-first-pipeline-num-layers",
                                             *f.value("--decoder-first-pipeline-num-layers"), 0, model::limits::kLayers)
                             : 0;
  p.last_stage_layers = f.has("--decoder-last-pipeline-num-layers")
                            ? parse_integer("--decoder-last-pipeline-num-layers",
                                            *f.value("--decoder-last-pipeline-num-layers"), 0, model::limits::kLayers)
                            : 0;
  if (const auto layout = f.value("--pipeline-model-parallel-layout"))
    megatron::set_pipeline_layout(
        p, *layout, "--pipeline-model-parallel-layout",
        f.has("--virtual-pipeline-model-parallel-size") || f.has("--num-layers-per-virtual-pipeline-stage"));
  // Megatron-LM turns sequence parallelism off without tensor parallelism.
  p.sequence_parallel = f.has("--sequence-parallel") && p.tp > 1;
  p.ep = f.integer("--expert-model-parallel-size", 1, model::limits::kExperts);
  // Megatron-LM's expert tensor parallelism defaults to the attention's.
  const int64_t etp = f.integer("--expert-tensor-parallel-size", p.tp, model::limits::kTensorParallel);
  p.etp = etp == p.tp ? 0 : etp;
  p.bf16 = f.has("--bf16");
  p.recompute = megatron::Recompute::None;
  if (const auto granularity = f.value("--recompute-granularity"))
    p.recompute = megatron::parse_recompute(*granularity, "--recompute-granularity");
  // --recompute-activations sets the granularity to selective, whatever else is given (arguments.py).
  if (f.has("--recompute-activations")) p.recompute = megatron::Recompute::Selective;
  // Transformer Engine's fused kernels unless another backend is asked for; --use-flash-attn (before
  // --attention-backend existed) is FlashAttention-2.
  megatron::set_attention_backend(
      p, f.value("--attention-backend").value_or(f.has("--use-flash-attn") ? "flash" : "auto"), "--attention-backend");
  // Megatron-LM's default loss casts the logits to FP32 and runs each softmax step as its own kernel; both
  // fused implementations (native, te) keep the 16-bit logits and are priced alike.
  p.unfused_loss = !f.has("--cross-entropy-loss-fusion");
  const std::string loss_impl = f.value("--cross-entropy-fusion-impl").value_or("native");
  if (loss_impl != "native" && loss_impl != "te")
    throw InputError(fmt::format("--cross-entropy-fusion-impl {}: native or te", loss_impl));
  p.zero = f.has("--use-distributed-optimizer") ? 1 : 0;
  if (f.has("--use-megatron-fsdp")) {
    // Megatron-FSDP's sharding strategies are ZeRO's stages (its docs/megatron_fsdp.md).
    const std::string strategy = f.value("--data-parallel-sharding-strategy").value_or("no_shard");
    const std::map<std::string, int64_t> stages = {
        {"no_shard", 0}, {"optim", 1}, {"optim_grads", 2}, {"optim_grads_params", 3}};
    const auto at = stages.find(strategy);
    if (at == stages.end())
      throw InputError(fmt::format(
          "--data-parallel-sharding-strategy {}: no_shard, optim, optim_grads or optim_grads_params", strategy));
    // The distributed optimizer shards the optimizer state whatever Megatron-FSDP shards.
    p.zero = std::max(p.zero, at->second);
  }
  p.fp8 = f.has("--fp8-format");
  p.bf16_gradients = p.bf16 && f.has("--grad-reduce-in-bf16");
  if (const auto recipe = f.value("--fp8-recipe")) p.fp8_recipe = megatron::parse_fp8_recipe(*recipe, "--fp8-recipe");
  p.fp8_param_gather = f.has("--fp8-param-gather");
  if (const auto comm = f.value("--cp-comm-type")) p.cp_comm = megatron::parse_cp_comm(*comm, "--cp-comm-type");
  if (const auto dispatcher = f.value("--moe-token-dispatcher-type"))
    p.moe_dispatcher = megatron::parse_moe_dispatcher(*dispatcher, "--moe-token-dispatcher-type");
  if (const auto backend = f.value("--moe-flex-dispatcher-backend"); backend && *backend != "deepep")
    throw InputError(fmt::format(
        "Megatron-LM arguments: --moe-flex-dispatcher-backend {}: only DeepEP's dispatch is modelled (deepep)",
        *backend));
  p.overlap_dp = f.has("--overlap-grad-reduce");
  p.overlap_param_gather = f.has("--overlap-param-gather");
  p.tp_comm_overlap = f.has("--tp-comm-overlap");
  p.overlap_moe_comm = f.has("--overlap-moe-expert-parallel-comm");
  p.shared_expert_overlap = f.has("--moe-shared-expert-overlap");
  // Megatron-Core reads a negative capacity factor as dropless.
  if (const auto factor = f.value("--moe-expert-capacity-factor"))
    p.moe_capacity_factor = std::max(0.0, parse_number("--moe-expert-capacity-factor", *factor, -4096, 4096));
  p.moe_pad_to_capacity = f.has("--moe-pad-expert-input-to-capacity");
  // Which copies are dropped (by router probability or by position) does not change the time.
  if (const auto policy = f.value("--moe-token-drop-policy"); policy && *policy != "probs" && *policy != "position")
    throw InputError(fmt::format("--moe-token-drop-policy {}: probs or position", *policy));
  if (f.has("--mtp-num-layers"))
    p.mtp_layers =
        parse_integer("--mtp-num-layers", *f.value("--mtp-num-layers"), 0, megatron::plan_limits::kMtpLayers);
  try {
    megatron::validate(p, spec);
  } catch (const InputError& e) {
    throw InputError(fmt::format("Megatron-LM arguments (as phaze's options): {}", e.what()));
  }
  return p;
}

}  // namespace

MegatronRun parse_megatron_args(const std::vector<std::string>& args, int64_t gpus) {
  const Flags f = read_flags(args);
  refuse_unmodelled(f);
  MegatronRun run;
  run.spec = read_model(f, run.assumed);
  run.plan = read_plan(f, run.spec, gpus);
  run.not_modelled = f.not_modelled;
  if (f.has("--recompute-method")) run.not_modelled.push_back("--recompute-method " + *f.value("--recompute-method"));
  return run;
}

}  // namespace phaze::io
