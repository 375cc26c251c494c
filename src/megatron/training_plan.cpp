#include "megatron/training_plan.h"

#include <fmt/format.h>

#include <algorithm>

#include "util/input_error.h"

namespace phaze::megatron {

namespace {

void require_in(int64_t value, int64_t low, int64_t high, const char* option) {
  if (value < low || value > high)
    throw InputError(fmt::format("{} = {} must be in [{}, {}]", option, value, low, high));
}

/// The stages that share the layers the first and last stage's own counts leave, and those layers.
struct SharedLayers {
  int64_t stages = 0;
  int64_t layers = 0;
};

SharedLayers shared_layers(const TrainingPlan& p, const model::ModelSpec& spec) {
  return SharedLayers{p.pp - (p.first_stage_layers > 0 ? 1 : 0) - (p.last_stage_layers > 0 ? 1 : 0),
                      spec.num_layers - p.first_stage_layers - p.last_stage_layers};
}

/// A layout as Megatron-LM accepts it: p · v chunks holding the model's layers, the embedding first, the loss
/// last, the multi-token prediction modules the plan has on the last stage; no other split option with it.
void validate_layout(const TrainingPlan& p, const model::ModelSpec& spec) {
  const char* kLayout = "--pipeline-model-parallel-layout";
  if (p.uneven() || p.accounts_in_split())
    throw InputError(
        fmt::format("{} excludes --decoder-first/last-pipeline-num-layers and "
                    "--account-for-embedding/loss-in-pipeline-split (as in Megatron-LM)",
                    kLayout));
  const std::string text = to_string(p.layout);
  const auto fail = [&](const std::string& why) { throw InputError(fmt::format("{} '{}': {}", kLayout, text, why)); };
  const auto chunks = static_cast<int64_t>(p.layout.size());
  if (chunks != p.pp * p.vp)
    fail(fmt::format("{} chunks, but --pp {} × --vp {} = {}", chunks, p.pp, p.vp, p.pp * p.vp));
  int64_t layers = 0, mtp = 0;
  for (int64_t j = 0; j < chunks; ++j) {
    const LayoutChunk& c = p.layout[static_cast<size_t>(j)];
    layers += c.layers;
    mtp += c.mtp_layers;
    if (c.embedding != (j == 0)) fail("the embedding 'E' belongs in the first chunk, and only there");
    if (c.loss != (j == chunks - 1)) fail("the loss 'L' belongs in the last chunk, and only there");
    if (c.mtp_layers > 0 && j % p.pp != p.pp - 1)
      fail("multi-token prediction modules 'm' on a stage other than the last are not modelled");
  }
  if (layers != spec.num_layers)
    fail(fmt::format("{} transformer layers 't', but {} has {}", layers, spec.name, spec.num_layers));
  if (mtp != p.mtp_layers)
    fail(fmt::format("{} multi-token prediction modules 'm', but --mtp-num-layers is {}", mtp, p.mtp_layers));
}

/// The stages' layer counts: even, or the first and last stage's own with the rest shared evenly, or a layout's.
void validate_stage_layers(const TrainingPlan& p, const model::ModelSpec& spec) {
  const char* kFirst = "--decoder-first-pipeline-num-layers";
  const char* kLast = "--decoder-last-pipeline-num-layers";
  require_in(p.first_stage_layers, 0, model::limits::kLayers, kFirst);
  require_in(p.last_stage_layers, 0, model::limits::kLayers, kLast);
  if (!p.layout.empty()) return validate_layout(p, spec);
  if (p.accounts_in_split()) {
    const char* option = p.embedding_in_pipeline_split ? "--account-for-embedding-in-pipeline-split"
                                                       : "--account-for-loss-in-pipeline-split";
    if (p.uneven())
      throw InputError(fmt::format("{} and {} / {} exclude each other (as in Megatron-LM)", option, kFirst, kLast));
    const int64_t slots = p.split_slots(spec.num_layers);
    if (slots % (p.pp * p.vp) != 0)
      throw InputError(
          fmt::format("{}: --pp = {}{} must divide the {} layers of {} and the {} counted with them into "
                      "equal chunks",
                      option, p.pp, p.vp > 1 ? fmt::format(" × --vp = {}", p.vp) : "", spec.num_layers, spec.name,
                      slots - spec.num_layers));
    for (int64_t stage : {int64_t{0}, p.pp - 1})
      if (stage_layers(p, spec, stage) < 1)
        throw InputError(fmt::format("{}: stage {} would hold no transformer layer", option, stage + 1));
    return;
  }
  if (!p.uneven()) {
    if (spec.num_layers % (p.pp * p.vp) != 0)
      throw InputError(fmt::format("--pp = {}{} must divide the {} layers of {} into equal stages", p.pp,
                                   p.vp > 1 ? fmt::format(" × --vp = {}", p.vp) : "", spec.num_layers, spec.name));
    return;
  }
  const char* option = p.first_stage_layers > 0 ? kFirst : kLast;
  if (p.pp == 1) throw InputError(fmt::format("{} needs a pipeline (--pp > 1)", option));
  const auto [others, rest] = shared_layers(p, spec);
  if (rest < others || (others == 0 && rest != 0) || (others > 0 && rest % others != 0))
    throw InputError(fmt::format(
        "{} = {}, {} = {}: the other {} stages must share the remaining {} of the {} layers "
        "of {} evenly, at least one each",
        kFirst, p.first_stage_layers, kLast, p.last_stage_layers, others, rest, spec.num_layers, spec.name));
  for (int64_t stage : {int64_t{0}, others > 0 ? int64_t{1} : int64_t{0}, p.pp - 1})
    if (stage_layers(p, spec, stage) % p.vp != 0)
      throw InputError(fmt::format("--vp = {} must divide the {} layers of stage {}", p.vp,
                                   stage_layers(p, spec, stage), stage + 1));
}

}  // namespace

std::string context_parallel_refusal(const TrainingPlan& p, const model::ModelSpec& spec) {
  if (p.cp <= 1) return "";
  // The layers are built for s / c tokens; the positions a learned table must hold are all s.
  if (!spec.rotary && p.seq > spec.max_positions)
    return fmt::format("--seq = {} exceeds the {} learned positions of {}", p.seq, spec.max_positions, spec.name);
  if (!p.flash_attention) return fmt::format("--cp = {} needs fused attention (drop --no-flash-attention)", p.cp);
  if (spec.sliding_window > 0 && spec.sliding_window < p.seq)
    return fmt::format("--cp = {}: context parallelism with the sliding window of {} is not modelled", p.cp, spec.name);
  const int64_t chunks = 2 * p.cp * (p.sequence_parallel ? p.tp : 1);
  if (p.seq % chunks != 0)
    return fmt::format("--cp = {}: --seq = {} must be a multiple of 2 × --cp{} = {} (load-balanced chunks)", p.cp,
                       p.seq, p.sequence_parallel ? " × --tp" : "", chunks);
  return "";
}

int64_t stage_layers(const TrainingPlan& p, const model::ModelSpec& spec, int64_t stage) {
  if (!p.layout.empty()) {
    int64_t held = 0;
    for (int64_t chunk = stage; chunk < p.pp * p.vp; chunk += p.pp) held += p.layout[static_cast<size_t>(chunk)].layers;
    return held;
  }
  if (p.accounts_in_split()) {
    const int64_t slots = p.split_slots(spec.num_layers);
    return slots / p.pp - (stage == 0 && p.embedding_in_pipeline_split ? 1 : 0) -
           (stage == p.pp - 1 && p.loss_in_pipeline_split ? 1 : 0);
  }
  if (stage == 0 && p.first_stage_layers > 0) return p.first_stage_layers;
  if (stage == p.pp - 1 && p.last_stage_layers > 0) return p.last_stage_layers;
  const SharedLayers shared = shared_layers(p, spec);
  return shared.layers / shared.stages;
}

int64_t chunk_layers(const TrainingPlan& p, const model::ModelSpec& spec, int64_t chunk) {
  if (!p.layout.empty()) return p.layout[static_cast<size_t>(chunk)].layers;
  const int64_t index = chunk / p.pp, layers = stage_layers(p, spec, chunk % p.pp);
  return layers / p.vp + (index >= p.vp - layers % p.vp ? 1 : 0);
}

int64_t stage_dense_layers(const TrainingPlan& p, const model::ModelSpec& spec, int64_t stage) {
  int64_t left = spec.first_dense_layers, held = 0;
  for (int64_t chunk = 0; left > 0 && chunk < p.pp * p.vp; ++chunk) {
    const int64_t taken = std::min(left, chunk_layers(p, spec, chunk));
    if (chunk % p.pp == stage) held += taken;
    left -= taken;
  }
  return held;
}

double TrainingPlan::expert_load() const {
  // The busiest of ep ranks takes at most every copy its experts can: ep times the mean.
  const double imbalance = ep > 1 ? std::min(moe_load_imbalance, static_cast<double>(ep)) : 1.0;
  if (moe_capacity_factor <= 0) return imbalance;
  return moe_pad_to_capacity ? moe_capacity_factor : std::min(imbalance, moe_capacity_factor);
}

model::Shape TrainingPlan::layer_shape() const {
  model::Shape shape{local_seq(), micro_batch, tp, ep, etp};
  shape.expert_load = expert_load();
  shape.expert_padded = moe_pad_to_capacity;
  shape.replicate_kv_heads = gspmd_sharding;
  return shape;
}

namespace {

/// The routing options: a mixture of experts' only, each within (0 or 1, E/k].
void validate_routing(const TrainingPlan& p, const model::ModelSpec& spec) {
  const bool dropless = p.moe_capacity_factor == 0;
  if (!spec.moe() && (!dropless || p.moe_pad_to_capacity || p.moe_load_imbalance != 1))
    throw InputError(fmt::format("{}: {} has no experts",
                                 !dropless               ? "--moe-expert-capacity-factor"
                                 : p.moe_pad_to_capacity ? "--moe-pad-expert-input-to-capacity"
                                                         : "--moe-load-imbalance",
                                 spec.name));
  if (!spec.moe()) return;
  const double most = static_cast<double>(spec.experts) / static_cast<double>(spec.experts_per_token);
  // Unpadded, a capacity beyond every token drops nothing; padded, each expert would compute more rows
  // than the rank has tokens.
  if (!(dropless || (p.moe_capacity_factor > 0 && (!p.moe_pad_to_capacity || p.moe_capacity_factor <= most))))
    throw InputError(
        fmt::format("--moe-expert-capacity-factor = {} must lie in (0, {}] with "
                    "--moe-pad-expert-input-to-capacity (the {} experts of {} over its {} per token)",
                    p.moe_capacity_factor, most, spec.experts, spec.name, spec.experts_per_token));
  if (p.moe_pad_to_capacity && dropless)
    throw InputError("--moe-pad-expert-input-to-capacity needs a capacity (--moe-expert-capacity-factor)");
  if (p.moe_pad_to_capacity && p.moe_dispatcher == MoeDispatcher::Flex)
    throw InputError(
        "--moe-pad-expert-input-to-capacity: Megatron-Core's flex dispatcher does not pad the experts' inputs");
  if (!(p.moe_load_imbalance >= 1 && p.moe_load_imbalance <= most))
    throw InputError(
        fmt::format("--moe-load-imbalance = {} must lie in [1, {}] (the {} experts of {} over its {} "
                    "per token)",
                    p.moe_load_imbalance, most, spec.experts, spec.name, spec.experts_per_token));
}

}  // namespace

void validate(const TrainingPlan& p, const model::ModelSpec& spec) {
  require_in(p.tp, 1, model::limits::kTensorParallel, "--tp");
  require_in(p.cp, 1, plan_limits::kContextParallel, "--cp");
  require_in(p.pp, 1, model::limits::kLayers, "--pp");
  require_in(p.dp, 1, plan_limits::kGpus, "--dp");
  require_in(p.vp, 1, plan_limits::kChunks, "--vp");
  require_in(p.micro_batch, 1, model::limits::kMicroBatch, "--mbs");
  require_in(p.global_batch, 1, plan_limits::kGlobalBatch, "--global-batch");
  require_in(p.seq, 1, model::limits::kSequence, "--seq");
  if (p.tp * p.cp > plan_limits::kGpus || p.tp * p.cp * p.pp > plan_limits::kGpus ||
      p.tp * p.cp * p.pp * p.dp > plan_limits::kGpus)
    throw InputError(fmt::format("--tp {} × --cp {} × --pp {} × --dp {} GPUs exceed the bound of {}", p.tp, p.cp, p.pp,
                                 p.dp, plan_limits::kGpus));
  if (!model::splits_heads(spec, p.tp, p.gspmd_sharding))
    throw InputError(fmt::format("--tp = {} must divide the {} attention heads ({} key/value heads{}) of {}", p.tp,
                                 spec.heads, spec.kv_heads, p.gspmd_sharding ? ", or be a multiple of them" : "",
                                 spec.name));
  validate_stage_layers(p, spec);
  if (p.global_batch % (p.micro_batch * p.dp) != 0)
    throw InputError(fmt::format("--global-batch = {} must be a multiple of --mbs {} × --dp {}", p.global_batch,
                                 p.micro_batch, p.dp));
  if (p.vp > 1 && p.pp == 1) throw InputError(fmt::format("--vp = {} needs a pipeline (--pp > 1)", p.vp));
  if (p.vp > 1 && p.micro_batches() % p.pp != 0)
    throw InputError(
        fmt::format("--vp = {}: the interleaved schedule needs the {} micro-batches per pipeline to be "
                    "a multiple of --pp {}",
                    p.vp, p.micro_batches(), p.pp));
  if (p.sequence_parallel && p.tp == 1) throw InputError("--sequence-parallel needs tensor parallelism (--tp > 1)");
  require_in(p.mtp_layers, 0, plan_limits::kMtpLayers, "--mtp-num-layers");
  if (p.shared_expert_overlap && spec.shared_expert_ffn == 0)
    throw InputError(fmt::format("--moe-shared-expert-overlap: {} has no shared expert", spec.name));
  if (p.overlap_moe_comm && (p.ep == 1 || p.recompute == Recompute::Full))
    throw InputError(
        "--overlap-moe-expert-parallel-comm needs expert parallelism (--ep > 1) and no full recomputation "
        "(Megatron-Core's)");
  if (p.tp_comm_overlap && !p.sequence_parallel)
    throw InputError("--tp-comm-overlap needs sequence parallelism (--sequence-parallel, with --tp > 1)");
  require_in(p.zero, 0, 3, "--zero");
  if (p.zero_group != 0) {
    require_in(p.zero_group, 1, p.dp * p.cp, "--zero-group");
    if ((p.dp * p.cp) % p.zero_group != 0)
      throw InputError(fmt::format("--zero-group = {} must divide the {} GPUs of --dp {} × --cp {}", p.zero_group,
                                   p.dp * p.cp, p.dp, p.cp));
    if (p.zero == 0) throw InputError("--zero-group needs a ZeRO stage (--zero 1, 2 or 3)");
  }
  if (p.overlap_param_gather && !p.distributed_optimizer())
    throw InputError("--overlap-param-gather needs the distributed optimizer (--distributed-optimizer or --zero ≥ 1)");
  if (p.fp8 && !p.bf16) throw InputError("--fp8 needs BF16 training (--bf16): Transformer Engine's FP8 recipe");
  if (p.fp8_param_gather && !p.fp8) throw InputError("--fp8-param-gather needs --fp8");
  if (p.bf16_gradients && !p.bf16) throw InputError("--grad-reduce-in-bf16 needs BF16 training (--bf16)");
  if (const std::string refusal = context_parallel_refusal(p, spec); !refusal.empty()) throw InputError(refusal);
  if (p.sequence_parallel && p.seq % p.tp != 0 && !(p.gspmd_sharding && spec.hidden % p.tp == 0))
    throw InputError(fmt::format("--sequence-parallel: --seq = {} must be a multiple of --tp {}{}", p.seq, p.tp,
                                 p.gspmd_sharding ? " (or the hidden size of it)" : ""));
  require_in(p.ep, 1, model::limits::kExperts, "--ep");
  if (spec.moe() && p.tp > 1 && !p.sequence_parallel)
    throw InputError(
        fmt::format("--tp = {}: Megatron-Core's experts need --sequence-parallel with tensor parallelism", p.tp));
  if (p.ep > 1) {
    if (!spec.moe()) throw InputError(fmt::format("--ep = {}: {} has no experts", p.ep, spec.name));
    if (spec.experts % p.ep != 0)
      throw InputError(fmt::format("--ep = {} must divide the {} experts of {}", p.ep, spec.experts, spec.name));
  }
  require_in(p.etp, 0, model::limits::kTensorParallel, "--etp");
  if (p.etp > 0 && p.etp != p.tp && !spec.moe())
    throw InputError(fmt::format("--etp = {}: {} has no experts", p.etp, spec.name));
  if (spec.moe()) {
    const int64_t stage_gpus = p.tp * p.cp * p.dp;
    if (stage_gpus % (p.expert_tp() * p.ep) != 0)
      throw InputError(
          fmt::format("--ep {} × --etp {} must divide the {} GPUs of a stage (--tp {} × --cp {} × --dp {})", p.ep,
                      p.expert_tp(), stage_gpus, p.tp, p.cp, p.dp));
    if (spec.expert_ffn % p.expert_tp() != 0)
      throw InputError(fmt::format("--etp = {} must divide the expert FFN size {} of {}", p.expert_tp(),
                                   spec.expert_ffn, spec.name));
    if (p.zero_group != 0 && (p.ep > 1 || p.expert_tp() != p.tp))
      throw InputError("--zero-group with expert parallelism or --etp is not modelled yet");
  }
  validate_routing(p, spec);
}

void set_pipeline_layout(TrainingPlan& plan, const std::string& text, const std::string& option, bool vp_given) {
  plan.layout = parse_pipeline_layout(text, option);
  const auto chunks = static_cast<int64_t>(plan.layout.size());
  if (vp_given || plan.pp < 1 || chunks % plan.pp != 0) return;  // validate names the mismatch
  if (chunks / plan.pp > plan_limits::kChunks)
    throw InputError(fmt::format("{}: {} chunks on --pp {} stages are {} a stage, more than {}", option, chunks,
                                 plan.pp, chunks / plan.pp, plan_limits::kChunks));
  plan.vp = chunks / plan.pp;
}

const char* to_string(Recompute r) {
  switch (r) {
    case Recompute::None: return "none";
    case Recompute::Selective: return "selective";
    case Recompute::Full: return "full";
  }
  return "?";
}

const char* to_string(Fp8Recipe r) {
  return r == Fp8Recipe::Delayed ? "delayed" : "tensorwise";
}

const char* to_string(CpComm c) {
  return c == CpComm::P2p ? "p2p" : "all_gather";
}

Fp8Recipe parse_fp8_recipe(const std::string& text, const std::string& option) {
  if (text == "delayed") return Fp8Recipe::Delayed;
  if (text == "tensorwise") return Fp8Recipe::Tensorwise;
  throw InputError(fmt::format("{} = '{}' must be delayed or tensorwise", option, text));
}

CpComm parse_cp_comm(const std::string& text, const std::string& option) {
  if (text == "p2p") return CpComm::P2p;
  if (text == "all_gather") return CpComm::AllGather;
  throw InputError(fmt::format("{} = '{}' must be p2p or all_gather", option, text));
}

const char* to_string(MoeDispatcher d) {
  return d == MoeDispatcher::AllToAll ? "alltoall" : "flex";
}

MoeDispatcher parse_moe_dispatcher(const std::string& text, const std::string& option) {
  if (text == "alltoall") return MoeDispatcher::AllToAll;
  if (text == "flex") return MoeDispatcher::Flex;
  if (text == "allgather")
    throw InputError(
        fmt::format("{} = 'allgather': the all-gather dispatcher is not modelled (alltoall or flex)", option));
  throw InputError(fmt::format("{} = '{}' must be alltoall or flex", option, text));
}

TrainingPlan current_practice() {
  TrainingPlan p;
  p.flash_attention = true;
  p.bf16 = true;
  p.memory_reserve_bytes = kDefaultMemoryReserveBytes;
  return p;
}

const char* attention_backend(const TrainingPlan& plan) {
  if (!plan.flash_attention) return "unfused";
  return plan.attention_library == hw::AttentionLibrary::Flash2 ? "flash" : "fused";
}

void set_attention_backend(TrainingPlan& plan, const std::string& text, const std::string& option) {
  if (text != "fused" && text != "auto" && text != "flash" && text != "unfused" && text != "local")
    throw InputError(fmt::format("{} = '{}' must be fused, flash, unfused, local or auto", option, text));
  plan.flash_attention = text != "unfused" && text != "local";
  plan.attention_library = text == "flash" ? hw::AttentionLibrary::Flash2 : hw::AttentionLibrary::Fused;
}

Recompute parse_recompute(const std::string& text, const std::string& option) {
  if (text == "none") return Recompute::None;
  if (text == "selective") return Recompute::Selective;
  if (text == "full") return Recompute::Full;
  throw InputError(fmt::format("{} = '{}' must be full, selective or none", option, text));
}

}  // namespace phaze::megatron
