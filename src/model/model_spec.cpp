#include "model/model_spec.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "util/input_error.h"

namespace phaze::model {

int64_t padded_vocab(const ModelSpec& spec, int64_t tp) {
  if (tp == 1 && !spec.pad_vocab_always) return spec.vocab;
  const CheckedInt multiple = CheckedInt(128) * tp;
  return (spec.vocab + multiple - 1) / multiple * multiple;
}

namespace {

void require_positive(int64_t value, const std::string& source, const char* field) {
  if (value <= 0) throw InputError(fmt::format("{}: {} = {} must be positive", source, field, value));
}

void require_in(int64_t value, int64_t limit, const std::string& source, const char* field) {
  require_positive(value, source, field);
  if (value > limit) throw InputError(fmt::format("{}: {} = {} must be at most {}", source, field, value, limit));
}

void require_probability(double value, const std::string& source, const char* field) {
  if (!(value >= 0.0 && value <= 1.0))
    throw InputError(fmt::format("{}: {} = {} must lie in [0, 1]", source, field, value));
}

void require_divides(int64_t divisor, int64_t value, const std::string& source, const char* divisor_field,
                     const char* value_field) {
  if (value % divisor != 0)
    throw InputError(
        fmt::format("{}: {} = {} does not divide {} = {}", source, divisor_field, divisor, value_field, value));
}

void require_within(int64_t value, int64_t low, int64_t high, const std::string& source, const char* field) {
  if (value < low || value > high)
    throw InputError(fmt::format("{}: {} = {} must lie in {}..{}", source, field, value, low, high));
}

/// The dense first layers and group-limited routing of a mixture of experts.
void validate_routing(const ModelSpec& spec, const std::string& source) {
  require_within(spec.first_dense_layers, 0, spec.moe() ? spec.num_layers - 1 : 0, source, "first_k_dense_replace");
  require_within(spec.expert_groups, 0, spec.experts, source, "n_group");
  if (spec.expert_groups == 0) {
    require_within(spec.expert_groups_per_token, 0, 0, source, "topk_group");
    return;
  }
  require_divides(spec.expert_groups, spec.experts, source, "n_group", "n_routed_experts");
  require_within(spec.expert_groups_per_token, 1, spec.expert_groups, source, "topk_group");
  const int64_t reachable = spec.expert_groups_per_token * (spec.experts / spec.expert_groups);
  if (spec.experts_per_token > reachable)
    throw InputError(fmt::format("{}: num_experts_per_tok = {} exceeds the {} experts of topk_group = {} groups",
                                 source, spec.experts_per_token, reachable, spec.expert_groups_per_token));
}

/// Multi-head latent attention: its ranks and head sizes, one key and value per head, RoPE on its own part.
void validate_latent_attention(const ModelSpec& spec, const std::string& source) {
  require_within(spec.q_lora_rank, 0, limits::kHidden, source, "q_lora_rank");
  require_within(spec.kv_lora_rank, 0, limits::kHidden, source, "kv_lora_rank");
  require_within(spec.rope_head_size, 0, limits::kHidden, source, "qk_rope_head_dim");
  require_within(spec.value_head_size, 0, limits::kHidden, source, "v_head_dim");
  if (!spec.mla()) {
    if (spec.q_lora_rank != 0 || spec.rope_head_size != 0 || spec.value_head_size != 0)
      throw InputError(fmt::format(
          "{}: q_lora_rank = {}, qk_rope_head_dim = {}, v_head_dim = {} belong to latent attention, which needs "
          "kv_lora_rank > 0",
          source, spec.q_lora_rank, spec.rope_head_size, spec.value_head_size));
    return;
  }
  if (spec.kv_heads != spec.heads)
    throw InputError(
        fmt::format("{}: latent attention has a key and a value per head: num_key_value_heads = {} "
                    "must equal num_attention_heads = {}",
                    source, spec.kv_heads, spec.heads));
  if (!spec.rotary || spec.rope_head_size % 2 != 0)
    throw InputError(fmt::format("{}: latent attention needs rotary embeddings on an even qk_rope_head_dim, got {}",
                                 source, spec.rope_head_size));
  if (spec.fused_qkv) throw InputError(fmt::format("{}: latent attention has no fused QKV projection", source));
  if ((spec.qk_head_dim() + spec.v_head_dim()) % 2 != 0)
    throw InputError(fmt::format("{}: qk_nope_head_dim + qk_rope_head_dim + v_head_dim = {} must be even", source,
                                 spec.qk_head_dim() + spec.v_head_dim()));
}

}  // namespace

void validate(const ModelSpec& spec, const std::string& source) {
  require_in(spec.num_layers, limits::kLayers, source, "num_layers");
  require_in(spec.hidden, limits::kHidden, source, "hidden_size");
  require_in(spec.heads, limits::kHeads, source, "num_attention_heads");
  require_in(spec.kv_heads, limits::kHeads, source, "num_key_value_heads");
  require_in(spec.ffn, limits::kFfn, source, "intermediate_size");
  require_in(spec.vocab, limits::kVocab, source, "vocab_size");
  require_in(spec.word_embedding_dim, limits::kHidden, source, "word_embed_proj_dim");
  require_in(spec.default_seq, limits::kSequence, source, "max_position_embeddings");
  if (!spec.rotary) require_in(spec.max_positions, limits::kSequence, source, "max_position_embeddings");
  if (spec.position_offset < 0 || spec.token_types < 0 || spec.position_offset > 1024 ||
      spec.token_types > limits::kVocab)
    throw InputError(fmt::format("{}: position offset {} and token types {} must lie in 0..1024 and 0..{}", source,
                                 spec.position_offset, spec.token_types, limits::kVocab));
  if (spec.sliding_window < 0 || spec.sliding_window > limits::kSequence)
    throw InputError(
        fmt::format("{}: sliding_window = {} must lie in 0..{}", source, spec.sliding_window, limits::kSequence));
  if (!(std::isfinite(spec.norm_epsilon) && spec.norm_epsilon > 0 && spec.norm_epsilon <= 1))
    throw InputError(fmt::format("{}: norm epsilon = {} must lie in (0, 1]", source, spec.norm_epsilon));
  if (spec.head_size == 0)
    require_divides(spec.heads, spec.hidden, source, "num_attention_heads", "hidden_size");
  else
    require_in(spec.head_size, limits::kHidden, source, "head_dim");
  if (spec.experts != 0 || spec.experts_per_token != 0) {
    require_in(spec.experts, limits::kExperts, source, "num_experts");
    require_in(spec.experts_per_token, spec.experts, source, "num_experts_per_tok");
    require_in(spec.expert_ffn, limits::kFfn, source, "moe_intermediate_size");
  }
  validate_routing(spec, source);
  validate_latent_attention(spec, source);
  if (spec.shared_expert_ffn < 0 || spec.shared_expert_ffn > limits::kFfn)
    throw InputError(fmt::format("{}: shared_expert_intermediate_size = {} must lie in 0..{}", source,
                                 spec.shared_expert_ffn, limits::kFfn));
  require_divides(spec.kv_heads, spec.heads, source, "num_key_value_heads", "num_attention_heads");
  require_probability(spec.hidden_dropout, source, "hidden dropout");
  require_probability(spec.attention_dropout, source, "attention dropout");
  if (spec.rotary && !spec.mla() && spec.head_dim() % 2 != 0)
    throw InputError(fmt::format("{}: rotary embeddings need an even head size, got {}", source, spec.head_dim()));
}

void validate(const ModelSpec& spec, const Shape& shape, const std::string& source) {
  validate(spec, source);
  require_in(shape.seq, limits::kSequence, source, "seq");
  require_in(shape.micro_batch, limits::kMicroBatch, source, "mbs");
  require_in(shape.tp, limits::kTensorParallel, source, "tp");
  if (shape.seq * shape.micro_batch > limits::kTokens)  // both below 2^26 and 2^16: no overflow
    throw InputError(fmt::format("{}: seq = {} times mbs = {} is {} tokens per micro-batch, more than {}", source,
                                 shape.seq, shape.micro_batch, shape.seq * shape.micro_batch, limits::kTokens));
  if (!spec.rotary && shape.seq > spec.max_positions)
    throw InputError(fmt::format("{}: seq = {} exceeds the {} learned positions of the model", source, shape.seq,
                                 spec.max_positions));
  require_divides(shape.tp, spec.heads, source, "tp", "num_attention_heads");
  if (!splits_heads(spec, shape.tp, shape.replicate_kv_heads))
    throw InputError(fmt::format("{}: tp = {} must divide num_key_value_heads = {}{}", source, shape.tp, spec.kv_heads,
                                 shape.replicate_kv_heads ? " or be a multiple of it" : ""));
  if (shape.ep < 1 || shape.ep > limits::kExperts)
    throw InputError(fmt::format("{}: ep = {} must lie in 1..{}", source, shape.ep, limits::kExperts));
  if (!spec.moe() && shape.ep != 1)
    throw InputError(fmt::format("{}: ep = {}: expert parallelism needs a mixture of experts", source, shape.ep));
  if (spec.moe()) require_divides(shape.ep, spec.experts, source, "ep", "num_experts");
  if (shape.etp < 0 || shape.etp > limits::kTensorParallel)
    throw InputError(fmt::format("{}: etp = {} must lie in 0..{}", source, shape.etp, limits::kTensorParallel));
  if (!spec.moe() && shape.etp != 0 && shape.etp != shape.tp)
    throw InputError(
        fmt::format("{}: etp = {}: expert tensor parallelism needs a mixture of experts", source, shape.etp));
  if (spec.moe()) {
    const double most = static_cast<double>(spec.experts) / static_cast<double>(spec.experts_per_token);
    if (!(shape.expert_load > 0 && shape.expert_load <= most))
      throw InputError(fmt::format("{}: expert load {} must lie in (0, {}] (num_experts / num_experts_per_tok)", source,
                                   shape.expert_load, most));
    // Each expert's columns split over the expert tensor-parallel ranks (the attention's t by default).
    require_divides(shape.expert_tp(), spec.expert_ffn, source, "etp", "moe_intermediate_size");
    if (spec.shared_expert_ffn > 0)
      require_divides(shape.tp, spec.shared_expert_ffn, source, "tp", "shared_expert_intermediate_size");
    if (spec.first_dense_layers > 0) require_divides(shape.tp, spec.ffn, source, "tp", "intermediate_size");
  } else {
    require_divides(shape.tp, spec.ffn, source, "tp", "intermediate_size");
  }
}

const char* to_string(NormKind kind) {
  return kind == NormKind::LayerNorm ? "layernorm" : "rmsnorm";
}

const char* to_string(Activation activation) {
  switch (activation) {
    case Activation::Gelu: return "gelu";
    case Activation::GeluTanh: return "gelu_tanh";
    case Activation::Relu: return "relu";
    case Activation::SwiGlu: return "swiglu";
  }
  return "?";
}

const char* to_string(MaskKind mask) {
  return mask == MaskKind::Causal ? "causal" : "padding";
}

bool splits_heads(const ModelSpec& spec, int64_t t, bool replicate_kv_heads) {
  if (t < 1 || spec.heads % t != 0) return false;
  return spec.kv_heads % t == 0 || (replicate_kv_heads && t % spec.kv_heads == 0);
}

int64_t kv_heads_per_rank(const ModelSpec& spec, int64_t t) {
  return std::max<int64_t>(1, spec.kv_heads / t);
}

}  // namespace phaze::model
