#include "model/model_spec.h"

#include <fmt/format.h>

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
  if (spec.shared_expert_ffn < 0 || spec.shared_expert_ffn > limits::kFfn)
    throw InputError(fmt::format("{}: shared_expert_intermediate_size = {} must lie in 0..{}", source,
                                 spec.shared_expert_ffn, limits::kFfn));
  require_divides(spec.kv_heads, spec.heads, source, "num_key_value_heads", "num_attention_heads");
  require_probability(spec.hidden_dropout, source, "hidden dropout");
  require_probability(spec.attention_dropout, source, "attention dropout");
  if (spec.rotary && spec.head_dim() % 2 != 0)
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
  require_divides(shape.tp, spec.kv_heads, source, "tp", "num_key_value_heads");
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
    // Each expert's columns split over the expert tensor-parallel ranks (the attention's t by default).
    require_divides(shape.expert_tp(), spec.expert_ffn, source, "etp", "moe_intermediate_size");
    if (spec.shared_expert_ffn > 0)
      require_divides(shape.tp, spec.shared_expert_ffn, source, "tp", "shared_expert_intermediate_size");
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

}  // namespace phaze::model
