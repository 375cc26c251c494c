#include "model/model_spec.h"

#include <fmt/format.h>

#include "util/input_error.h"

namespace phaze::model {

int64_t padded_vocab(const ModelSpec& spec, int64_t tp) {
  if (tp == 1 && !spec.pad_vocab_always) return spec.vocab;
  const int64_t multiple = 128 * tp;
  return (spec.vocab + multiple - 1) / multiple * multiple;
}

namespace {

void require_positive(int64_t value, const std::string& source, const char* field) {
  if (value <= 0) throw InputError(fmt::format("{}: {} = {} must be positive", source, field, value));
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
  require_positive(spec.num_layers, source, "num_layers");
  require_positive(spec.hidden, source, "hidden_size");
  require_positive(spec.heads, source, "num_attention_heads");
  require_positive(spec.kv_heads, source, "num_key_value_heads");
  require_positive(spec.ffn, source, "intermediate_size");
  require_positive(spec.vocab, source, "vocab_size");
  require_positive(spec.word_embedding_dim, source, "word_embed_proj_dim");
  require_positive(spec.default_seq, source, "max_position_embeddings");
  if (!spec.rotary) require_positive(spec.max_positions, source, "max_position_embeddings");
  if (spec.position_offset < 0 || spec.token_types < 0)
    throw InputError(fmt::format("{}: position offset {} and token types {} must not be negative", source,
                                 spec.position_offset, spec.token_types));
  require_divides(spec.heads, spec.hidden, source, "num_attention_heads", "hidden_size");
  require_divides(spec.kv_heads, spec.heads, source, "num_key_value_heads", "num_attention_heads");
  require_probability(spec.hidden_dropout, source, "hidden dropout");
  require_probability(spec.attention_dropout, source, "attention dropout");
  if (spec.rotary && spec.head_dim() % 2 != 0)
    throw InputError(fmt::format("{}: rotary embeddings need an even head size, got {}", source, spec.head_dim()));
}

void validate(const ModelSpec& spec, const Shape& shape, const std::string& source) {
  validate(spec, source);
  require_positive(shape.seq, source, "seq");
  require_positive(shape.micro_batch, source, "mbs");
  require_positive(shape.tp, source, "tp");
  if (!spec.rotary && shape.seq > spec.max_positions)
    throw InputError(fmt::format("{}: seq = {} exceeds the {} learned positions of the model", source, shape.seq,
                                 spec.max_positions));
  if (spec.sliding_window > 0 && shape.seq > spec.sliding_window)
    throw InputError(fmt::format("{}: seq = {} exceeds sliding_window = {} (windowed attention is not modelled)",
                                 source, shape.seq, spec.sliding_window));
  require_divides(shape.tp, spec.heads, source, "tp", "num_attention_heads");
  require_divides(shape.tp, spec.kv_heads, source, "tp", "num_key_value_heads");
  require_divides(shape.tp, spec.ffn, source, "tp", "intermediate_size");
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
