// Import of Hugging Face config.json files (bert, gpt2, opt, the Llama-shaped llama, mistral, mixtral,
// qwen2, qwen2_moe, qwen3, qwen3_moe, and DeepSeek's deepseek_v2 and deepseek_v3) into a ModelSpec with the
// same structure as the presets of models.md.

#include "model/hf_config.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "model/presets.h"
#include "util/input_error.h"
#include "util/json_input.h"
#include "util/read_file.h"

namespace phaze::model {

namespace {

using nlohmann::json;

/// Typed access to the keys of one config file; every error names the file and the key.
class ConfigReader {
 public:
  ConfigReader(const json& j, std::string source) : j_(j), source_(std::move(source)) {}

  bool has(const char* key) const { return j_.contains(key) && !j_.at(key).is_null(); }

  /// A required size: a positive integer at most `limit`.
  int64_t size(const char* key, int64_t limit) const {
    if (!has(key)) throw InputError(fmt::format("{}: missing required key '{}'", source_, key));
    return positive(key, limit);
  }
  /// An optional size, `fallback` when absent.
  int64_t size(const char* key, int64_t limit, int64_t fallback) const {
    return has(key) ? positive(key, limit) : fallback;
  }

  /// An optional count: an integer in 0..`limit`, `fallback` when absent or null.
  int64_t count(const char* key, int64_t limit, int64_t fallback) const {
    if (!has(key)) return fallback;
    const int64_t v = integer_value(key);
    if (v < 0 || v > limit) throw type_error(key, fmt::format("an integer in 0..{}", limit).c_str());
    return v;
  }

  /// An optional probability in [0, 1].
  double probability(const char* key, double fallback) const {
    if (!has(key)) return fallback;
    const json& v = j_.at(key);
    if (!v.is_number()) throw type_error(key, "a number");
    const double p = v.get<double>();
    if (!(p >= 0.0 && p <= 1.0)) throw type_error(key, "a probability in [0, 1]");
    return p;
  }

  /// An optional number in (0, 1] (a norm's epsilon), `fallback` when absent.
  double epsilon(const char* key, double fallback) const {
    if (!has(key)) return fallback;
    const json& v = j_.at(key);
    if (!v.is_number()) throw type_error(key, "a number");
    const double x = v.get<double>();
    if (!(x > 0 && x <= 1)) throw type_error(key, "a number in (0, 1]");
    return x;
  }

  bool boolean(const char* key, bool fallback) const {
    if (!has(key)) return fallback;
    const json& v = j_.at(key);
    if (!v.is_boolean()) throw type_error(key, "true or false");
    return v.get<bool>();
  }

  std::string text(const char* key, const std::string& fallback) const {
    if (!has(key)) return fallback;
    const json& v = j_.at(key);
    if (!v.is_string()) throw type_error(key, "a string");
    return v.get<std::string>();
  }

  /// Whether the optional list at `key` has elements (an error when it is not a list).
  bool non_empty_list(const char* key) const {
    if (!has(key)) return false;
    if (!j_.at(key).is_array()) throw type_error(key, "a list");
    return !j_.at(key).empty();
  }

  /// A reader of the optional object at `key` (such as rope_scaling), its errors naming the file and the key;
  /// nothing when absent or null.
  std::optional<ConfigReader> object(const char* key) const {
    if (!has(key)) return std::nullopt;
    if (!j_.at(key).is_object()) throw type_error(key, "an object");
    return ConfigReader(j_.at(key), fmt::format("{}: {}", source_, key));
  }

  [[noreturn]] void unsupported(const char* key, const std::string& why) const {
    throw InputError(fmt::format("{}: key '{}' = {}: {}", source_, key, j_.at(key).dump(), why));
  }

 private:
  int64_t integer_value(const char* key) const {
    const json& v = j_.at(key);
    if (v.is_number_integer()) return v.get<int64_t>();
    if (v.is_number_float()) {
      const double d = v.get<double>();
      // Whole numbers only, and inside the range where the conversion is defined (parse_json_input already
      // refused values beyond a double).
      if (d == std::floor(d) && std::fabs(d) < 9.2e18) return static_cast<int64_t>(d);
    }
    throw type_error(key, "an integer");
  }

  int64_t positive(const char* key, int64_t limit) const {
    const int64_t value = integer_value(key);
    if (value <= 0) throw type_error(key, "positive");
    if (value > limit) throw type_error(key, fmt::format("at most {}", limit).c_str());
    return value;
  }

  InputError type_error(const char* key, const char* expected) const {
    return InputError(fmt::format("{}: key '{}' = {} must be {}", source_, key, j_.at(key).dump(), expected));
  }

  const json& j_;
  std::string source_;
};

Activation activation_of(const ConfigReader& r, const char* key, const std::string& fallback) {
  const std::string act = r.text(key, fallback);
  if (act == "gelu" || act == "gelu_python") return Activation::Gelu;
  if (act == "gelu_new" || act == "gelu_pytorch_tanh" || act == "gelu_fast") return Activation::GeluTanh;
  if (act == "relu") return Activation::Relu;
  r.unsupported(key, "supported activations are gelu, gelu_new, gelu_pytorch_tanh, relu");
}

ModelSpec from_bert(const ConfigReader& r) {
  ModelSpec m;
  m.num_layers = r.size("num_hidden_layers", limits::kLayers);
  m.hidden = r.size("hidden_size", limits::kHidden);
  m.heads = r.size("num_attention_heads", limits::kHeads);
  m.kv_heads = m.heads;
  m.ffn = r.size("intermediate_size", limits::kFfn);
  m.vocab = r.size("vocab_size", limits::kVocab);
  m.word_embedding_dim = m.hidden;
  m.max_positions = r.size("max_position_embeddings", limits::kSequence);
  m.token_types = r.size("type_vocab_size", limits::kVocab, 2);
  m.default_seq = m.max_positions;
  m.pre_norm = false;
  m.final_norm = false;
  m.embedding_norm = true;
  m.activation = activation_of(r, "hidden_act", "gelu");
  m.mask = MaskKind::Padding;
  m.fused_qkv = false;
  m.hidden_dropout = r.probability("hidden_dropout_prob", 0.1);
  m.attention_dropout = r.probability("attention_probs_dropout_prob", 0.1);
  m.embedding_dropout = m.hidden_dropout > 0.0;
  m.head = HeadKind::BertPretraining;
  m.tied_head = r.boolean("tie_word_embeddings", true);
  m.norm_epsilon = r.epsilon("layer_norm_eps", 1e-12);
  return m;
}

ModelSpec from_gpt2(const ConfigReader& r) {
  ModelSpec m;
  m.num_layers = r.size("n_layer", limits::kLayers);
  m.hidden = r.size("n_embd", limits::kHidden);
  m.heads = r.size("n_head", limits::kHeads);
  m.kv_heads = m.heads;
  m.ffn = r.size("n_inner", limits::kFfn, 4 * m.hidden);
  m.vocab = r.size("vocab_size", limits::kVocab);
  m.word_embedding_dim = m.hidden;
  m.max_positions =
      r.has("n_positions") ? r.size("n_positions", limits::kSequence) : r.size("n_ctx", limits::kSequence);
  m.default_seq = m.max_positions;
  m.activation = activation_of(r, "activation_function", "gelu_new");
  m.hidden_dropout = r.probability("resid_pdrop", 0.1);
  m.attention_dropout = r.probability("attn_pdrop", 0.1);
  m.embedding_dropout = r.probability("embd_pdrop", 0.1) > 0.0;
  m.tied_head = r.boolean("tie_word_embeddings", true);
  m.norm_epsilon = r.epsilon("layer_norm_epsilon", 1e-5);
  return m;
}

ModelSpec from_opt(const ConfigReader& r) {
  ModelSpec m;
  m.num_layers = r.size("num_hidden_layers", limits::kLayers);
  m.hidden = r.size("hidden_size", limits::kHidden);
  m.heads = r.size("num_attention_heads", limits::kHeads);
  m.kv_heads = m.heads;
  m.ffn = r.size("ffn_dim", limits::kFfn);
  m.vocab = r.size("vocab_size", limits::kVocab);
  m.word_embedding_dim = r.size("word_embed_proj_dim", limits::kHidden, m.hidden);
  m.max_positions = r.size("max_position_embeddings", limits::kSequence);
  m.position_offset = 2;
  m.default_seq = m.max_positions;
  m.pre_norm = r.boolean("do_layer_norm_before", true);
  m.final_norm = m.pre_norm && !r.boolean("_remove_final_layer_norm", false);
  m.activation = activation_of(r, "activation_function", "relu");
  if (!r.boolean("enable_bias", true)) r.unsupported("enable_bias", "OPT without biases is not modelled");
  if (!r.boolean("layer_norm_elementwise_affine", true))
    r.unsupported("layer_norm_elementwise_affine", "LayerNorm without affine weights is not modelled");
  m.fused_qkv = false;
  m.scale_query = true;
  m.hidden_dropout = r.probability("dropout", 0.1);
  m.attention_dropout = r.probability("attention_dropout", 0.0);
  m.embedding_dropout = false;
  m.tied_head = r.boolean("tie_word_embeddings", true);
  return m;
}

/// The routed experts of a mixture-of-experts config (every layer sparse; a model with dense layers among
/// them is refused).
void read_experts(const ConfigReader& r, const std::string& type, ModelSpec& m) {
  if (type == "mixtral") {
    m.experts = r.size("num_local_experts", limits::kExperts);
    m.expert_ffn = m.ffn;
  } else {
    m.experts = r.size("num_experts", limits::kExperts);
    m.expert_ffn = r.size("moe_intermediate_size", limits::kFfn);
    if (r.size("decoder_sparse_step", limits::kLayers, 1) != 1)
      r.unsupported("decoder_sparse_step", "dense layers among the expert layers are not modelled yet");
    if (r.non_empty_list("mlp_only_layers"))
      r.unsupported("mlp_only_layers", "dense layers among the expert layers are not modelled yet");
  }
  m.experts_per_token = r.size("num_experts_per_tok", m.experts);
  if (type == "qwen2_moe") {
    m.shared_expert_ffn = r.size("shared_expert_intermediate_size", limits::kFfn);
    m.shared_expert_gate = true;  // Qwen2-MoE's shared_expert_gate, a linear map to one sigmoid per token
  }
}

/// The pre-training length of a RoPE model: a context-extended model (rope_scaling) was pre-trained at its
/// original length, and trains there by default (Llama 3.1 reaches 131,072 positions by scaling its 8,192).
int64_t pretrained_positions(const ConfigReader& r, int64_t positions) {
  if (const std::optional<ConfigReader> scaling = r.object("rope_scaling"))
    return std::min(positions, scaling->size("original_max_position_embeddings", limits::kSequence, positions));
  return positions;
}

/// What every Llama-shaped config shares (Llama, Mistral, Mixtral, Qwen, DeepSeek): the sizes, pre-RMSNorm,
/// a SiLU-gated FFN, RoPE, no biases, separate query, key and value projections, an untied head by default.
ModelSpec llama_body(const ConfigReader& r) {
  ModelSpec m;
  m.num_layers = r.size("num_hidden_layers", limits::kLayers);
  m.hidden = r.size("hidden_size", limits::kHidden);
  m.heads = r.size("num_attention_heads", limits::kHeads);
  m.kv_heads = r.size("num_key_value_heads", limits::kHeads, m.heads);
  m.ffn = r.size("intermediate_size", limits::kFfn);
  m.vocab = r.size("vocab_size", limits::kVocab);
  m.word_embedding_dim = m.hidden;
  m.max_positions = r.size("max_position_embeddings", limits::kSequence);
  m.norm = NormKind::RmsNorm;
  if (r.text("hidden_act", "silu") != "silu") r.unsupported("hidden_act", "only the SiLU-gated FFN is modelled");
  m.activation = Activation::SwiGlu;
  m.biases = false;
  if (r.boolean("attention_bias", false)) r.unsupported("attention_bias", "attention biases are not modelled");
  m.fused_qkv = false;
  m.rotary = true;
  m.attention_dropout = r.probability("attention_dropout", 0.0);
  m.tied_head = r.boolean("tie_word_embeddings", false);
  m.norm_epsilon = r.epsilon("rms_norm_eps", 1e-6);
  return m;
}

/// DeepSeek-V2 and V3 (deepseek_v2, deepseek_v3): multi-head latent attention, the first dense layers, then
/// routed experts with shared ones and (but for the greedy method) group-limited routing. V2-Lite projects
/// its queries without a latent (q_lora_rank null).
ModelSpec from_deepseek(const ConfigReader& r, const std::string& type) {
  ModelSpec m = llama_body(r);
  m.default_seq = pretrained_positions(r, m.max_positions);
  m.q_lora_rank = r.count("q_lora_rank", limits::kHidden, 0);
  m.kv_lora_rank = r.size("kv_lora_rank", limits::kHidden);
  m.head_size = r.size("qk_nope_head_dim", limits::kHidden);
  m.rope_head_size = r.size("qk_rope_head_dim", limits::kHidden);
  m.value_head_size = r.size("v_head_dim", limits::kHidden);
  m.experts = r.size("n_routed_experts", limits::kExperts);
  m.experts_per_token = r.size("num_experts_per_tok", m.experts);
  m.expert_ffn = r.size("moe_intermediate_size", limits::kFfn);
  // n_shared_experts experts of the routed ones' width, run as one FFN of their summed width.
  m.shared_expert_ffn = r.count("n_shared_experts", limits::kExperts, 0) * m.expert_ffn;
  m.first_dense_layers = r.count("first_k_dense_replace", limits::kLayers, 0);
  if (r.size("moe_layer_freq", limits::kLayers, 1) != 1)
    r.unsupported("moe_layer_freq", "dense layers among the expert layers are not modelled");
  const std::string scoring = r.text("scoring_func", "softmax");
  if (scoring != "softmax" && scoring != "sigmoid") r.unsupported("scoring_func", "softmax or sigmoid");
  m.router_sigmoid = scoring == "sigmoid";
  if (r.text("topk_method", type == "deepseek_v3" ? "noaux_tc" : "greedy") != "greedy") {
    m.expert_groups = r.size("n_group", limits::kExperts);
    m.expert_groups_per_token = r.size("topk_group", m.expert_groups);
  }
  return m;
}

/// Llama-shaped configs: llama, mistral, mixtral, qwen2, qwen2_moe, qwen3 and qwen3_moe (Qwen2 with biases on
/// the query, key and value projections).
ModelSpec from_llama(const ConfigReader& r, const std::string& type) {
  const bool qwen = type.rfind("qwen", 0) == 0;
  ModelSpec m = llama_body(r);
  // Qwen's configs carry a window that only use_sliding_window switches on.
  const bool windowed = qwen ? r.boolean("use_sliding_window", false) : true;
  m.sliding_window = windowed && r.has("sliding_window") ? r.size("sliding_window", limits::kSequence) : 0;
  const int64_t pretrained = pretrained_positions(r, m.max_positions);
  m.default_seq = m.sliding_window > 0 ? std::min(pretrained, m.sliding_window) : pretrained;
  // Qwen2's query, key and value projections carry biases (its architecture, not a config key); Qwen3's do not.
  m.qkv_bias = type == "qwen2" || type == "qwen2_moe";
  if (r.boolean("mlp_bias", false)) r.unsupported("mlp_bias", "FFN biases are not modelled");
  if (r.has("head_dim")) {
    const int64_t d = r.size("head_dim", limits::kHidden);
    if (m.hidden % m.heads != 0 || d != m.hidden / m.heads) m.head_size = d;
  }
  m.qk_norm = type == "qwen3" || type == "qwen3_moe";
  if (type == "mixtral" || type == "qwen2_moe" || type == "qwen3_moe") read_experts(r, type, m);
  return m;
}

}  // namespace

ModelSpec parse_hf_config(const std::string& text, const std::string& source) {
  const json j = parse_json_input(text, source);
  if (!j.is_object()) throw InputError(fmt::format("{}: expected a JSON object", source));
  const ConfigReader reader(j, source);
  const std::string type = reader.text("model_type", "");
  ModelSpec m;
  if (type == "bert") {
    m = from_bert(reader);
  } else if (type == "gpt2") {
    m = from_gpt2(reader);
  } else if (type == "opt") {
    m = from_opt(reader);
  } else if (type == "llama" || type == "mistral" || type == "mixtral" || type == "qwen2" || type == "qwen2_moe" ||
             type == "qwen3" || type == "qwen3_moe") {
    m = from_llama(reader, type);
  } else if (type == "deepseek_v2" || type == "deepseek_v3") {
    m = from_deepseek(reader, type);
  } else if (type.empty()) {
    throw InputError(fmt::format("{}: missing required key 'model_type'", source));
  } else {
    throw InputError(
        fmt::format("{}: key 'model_type' = \"{}\" is not supported (bert, gpt2, opt, llama, mistral, mixtral, "
                    "qwen2, qwen2_moe, qwen3, qwen3_moe, deepseek_v2, deepseek_v3)",
                    source, type));
  }
  m.name = source;
  m.description = fmt::format("{} from {}", type, source);
  validate(m, source);
  return m;
}

ModelSpec read_hf_config(const std::string& path) {
  return parse_hf_config(read_text_file(path), path);
}

ModelSpec load_model(const std::string& preset_or_path) {
  if (auto preset = find_preset(preset_or_path)) return *preset;
  std::error_code ec;
  // An existing path that is not a regular file (a directory, /dev/zero, a FIFO) is refused by the reader.
  if (std::filesystem::exists(preset_or_path, ec)) return read_hf_config(preset_or_path);
  throw InputError(fmt::format("model '{}': no such preset or file (see 'phaze model list')", preset_or_path));
}

}  // namespace phaze::model
