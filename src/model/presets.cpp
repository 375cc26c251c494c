// The seed model zoo of models.md section 1, with the hyper-parameters of the released configurations.

#include "model/presets.h"

#include <algorithm>

namespace phaze::model {

ModelSpec megatron_gpt(std::string name, std::string description, int64_t layers, int64_t hidden, int64_t heads,
                       int64_t seq) {
  ModelSpec m;
  m.name = std::move(name);
  m.description = std::move(description);
  m.num_layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = heads;
  m.ffn = 4 * hidden;
  m.vocab = 50257;
  m.word_embedding_dim = hidden;
  m.max_positions = seq;
  m.default_seq = seq;
  m.hidden_dropout = 0.1;
  m.attention_dropout = 0.1;
  m.embedding_dropout = true;
  m.pad_vocab_always = true;
  return m;
}

namespace {

ModelSpec bert_large() {
  ModelSpec m;
  m.name = "bert-large";
  m.description = "BERT-large, uncased (Hugging Face BertForPreTraining)";
  m.num_layers = 24;
  m.hidden = 1024;
  m.heads = 16;
  m.kv_heads = 16;
  m.ffn = 4096;
  m.vocab = 30522;
  m.word_embedding_dim = 1024;
  m.max_positions = 512;
  m.token_types = 2;
  m.default_seq = 512;
  m.pre_norm = false;
  m.final_norm = false;
  m.embedding_norm = true;
  m.mask = MaskKind::Padding;
  m.fused_qkv = false;
  m.hidden_dropout = 0.1;
  m.attention_dropout = 0.1;
  m.embedding_dropout = true;
  m.head = HeadKind::BertPretraining;
  m.norm_epsilon = 1e-12;
  return m;
}

ModelSpec gpt2_xl() {
  ModelSpec m = megatron_gpt("gpt2-xl", "GPT-2 XL (Hugging Face)", 48, 1600, 25, 1024);
  m.activation = Activation::GeluTanh;
  m.pad_vocab_always = false;
  return m;
}

ModelSpec opt_350m() {
  ModelSpec m;
  m.name = "opt-350m";
  m.description = "OPT-350M (Hugging Face)";
  m.num_layers = 24;
  m.hidden = 1024;
  m.heads = 16;
  m.kv_heads = 16;
  m.ffn = 4096;
  m.vocab = 50272;
  m.word_embedding_dim = 512;
  m.max_positions = 2048;
  m.position_offset = 2;
  m.default_seq = 2048;
  m.pre_norm = false;
  m.final_norm = false;
  m.activation = Activation::Relu;
  m.fused_qkv = false;
  m.scale_query = true;
  m.hidden_dropout = 0.1;
  m.attention_dropout = 0.0;
  m.embedding_dropout = false;
  return m;
}

/// The Llama-shaped presets' base: RMSNorm, SwiGLU, RoPE, no biases, an untied head; the FFN is the caller's.
ModelSpec llama_shaped(std::string name, std::string description, int64_t layers, int64_t hidden, int64_t heads,
                       int64_t kv_heads, int64_t vocab, int64_t positions, int64_t seq) {
  ModelSpec m;
  m.name = std::move(name);
  m.description = std::move(description);
  m.num_layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = kv_heads;
  m.vocab = vocab;
  m.word_embedding_dim = hidden;
  m.max_positions = positions;
  m.default_seq = seq;
  m.norm = NormKind::RmsNorm;
  m.activation = Activation::SwiGlu;
  m.biases = false;
  m.fused_qkv = false;
  m.rotary = true;
  m.tied_head = false;
  return m;
}

ModelSpec llama2_7b() {
  ModelSpec m = llama_shaped("llama2-7b", "Llama-2-7B (Hugging Face)", 32, 4096, 32, 32, 32000, 4096, 4096);
  m.ffn = 11008;
  return m;
}

/// Mistral AI's Mixtral 8x7B and 8x22B (their Hugging Face config.json): 8 experts, 2 per token.
ModelSpec mixtral(std::string name, std::string description, int64_t layers, int64_t hidden, int64_t heads, int64_t ffn,
                  int64_t vocab, int64_t positions) {
  ModelSpec m =
      llama_shaped(std::move(name), std::move(description), layers, hidden, heads, 8, vocab, positions, positions);
  m.ffn = ffn;
  m.experts = 8;
  m.experts_per_token = 2;
  m.expert_ffn = ffn;
  return m;
}

/// Qwen2-57B-A14B (Qwen/Qwen2-57B-A14B config.json): 64 experts of 2,560 columns, 8 per token, a gated shared
/// expert of 20,480, biases on the query, key and value projections; pre-trained at 32,768 tokens.
ModelSpec qwen2_57b_a14b() {
  ModelSpec m = llama_shaped("qwen2-57b-a14b", "Qwen2-57B-A14B (Hugging Face)", 28, 3584, 28, 4, 151936, 32768, 32768);
  m.ffn = 18944;
  m.qkv_bias = true;
  m.experts = 64;
  m.experts_per_token = 8;
  m.expert_ffn = 2560;
  m.shared_expert_ffn = 20480;
  m.shared_expert_gate = true;
  m.norm_epsilon = 1e-6;
  return m;
}

/// Qwen3-30B-A3B (Qwen/Qwen3-30B-A3B config.json): heads of 128 (not 2,048 / 32), query and key norms, 128
/// experts of 768 columns, 8 per token.
ModelSpec qwen3_30b_a3b() {
  ModelSpec m = llama_shaped("qwen3-30b-a3b", "Qwen3-30B-A3B (Hugging Face)", 48, 2048, 32, 4, 151936, 40960, 40960);
  m.ffn = 6144;
  m.head_size = 128;
  m.qk_norm = true;
  m.experts = 128;
  m.experts_per_token = 8;
  m.expert_ffn = 768;
  m.norm_epsilon = 1e-6;
  return m;
}

/// DeepSeek-V3 (deepseek-ai/DeepSeek-V3 config.json; arXiv 2412.19437): 61 layers of multi-head latent
/// attention (query latent 1,536, key/value latent 512, heads of 128 + 64 RoPE elements, values of 128), the
/// first 3 with a dense FFN of 18,432, the other 58 with 256 routed experts of 2,048 (8 per token, sigmoid
/// scores, within 4 of 8 groups) and one shared expert; pre-trained at 4,096 tokens. Its multi-token
/// prediction module is a choice of the training plan (--mtp-num-layers 1), not part of the model.
ModelSpec deepseek_v3() {
  ModelSpec m = llama_shaped("deepseek-v3", "DeepSeek-V3 (Hugging Face)", 61, 7168, 128, 128, 129280, 163840, 4096);
  m.ffn = 18432;
  m.head_size = 128;
  m.rope_head_size = 64;
  m.value_head_size = 128;
  m.q_lora_rank = 1536;
  m.kv_lora_rank = 512;
  m.experts = 256;
  m.experts_per_token = 8;
  m.expert_ffn = 2048;
  m.shared_expert_ffn = 2048;
  m.first_dense_layers = 3;
  m.router_sigmoid = true;
  m.expert_groups = 8;
  m.expert_groups_per_token = 4;
  m.norm_epsilon = 1e-6;
  return m;
}

ModelSpec megatron_bert() {
  ModelSpec m = megatron_gpt("megatron-bert", "Megatron-BERT 336M", 24, 1024, 16, 512);
  m.vocab = 30522;
  m.token_types = 2;
  m.mask = MaskKind::Padding;
  m.head = HeadKind::BertPretraining;
  return m;
}

/// A model trained on TPU v4 with T5X, Lingvo or MaxText: Llama-shaped (pre-RMSNorm, no biases, no dropout, RoPE
/// standing in for the relative-position bias some of them use) with tied embeddings, its own FFN activation
/// and head size (docs/models.md, "Models trained on TPU v4").
ModelSpec tpu_trained(std::string name, std::string description, int64_t layers, int64_t hidden, int64_t heads,
                      int64_t head_size, int64_t kv_heads, int64_t ffn, Activation activation, int64_t vocab,
                      int64_t seq) {
  ModelSpec m = llama_shaped(std::move(name), std::move(description), layers, hidden, heads, kv_heads, vocab, seq, seq);
  if (head_size * heads != hidden) m.head_size = head_size;
  m.ffn = ffn;
  m.activation = activation;
  m.tied_head = true;
  return m;
}

/// PaLM 540B (Chowdhery et al. 2022, Table 1): multi-query attention of 48 heads of 256, a SwiGLU FFN of
/// 4·h, a 256k vocabulary. Its attention and FFN run in parallel from one norm; phaze runs them in series (the
/// same GEMMs).
ModelSpec palm_540b() {
  return tpu_trained("palm-540b", "PaLM 540B (Chowdhery et al. 2022)", 118, 18432, 48, 256, 1, 73728,
                     Activation::SwiGlu, 256000, 2048);
}

/// MaxText's 22B and 52B benchmark models (its README of April 2023 and base.yml): heads of 256, a ReLU FFN
/// of 4·h, a 32,768 vocabulary, 1,024 tokens.
ModelSpec maxtext(std::string name, std::string description, int64_t layers, int64_t hidden, int64_t heads) {
  return tpu_trained(std::move(name), std::move(description), layers, hidden, heads, 256, heads, 4 * hidden,
                     Activation::Relu, 32768, 1024);
}

/// Google's MLPerf Training v1.1 open-division BERT models (masked LM, 512 tokens): 200B (Lingvo-JAX, ReLU FFN of
/// 8·h, heads of 96) and 481B (Lingvo-TF, multi-query attention of 256 heads of 128, a SiLU-gated FFN of 8·h).
ModelSpec mlperf_bert(std::string name, std::string description, int64_t layers, int64_t hidden, int64_t heads,
                      int64_t head_size, int64_t kv_heads, Activation activation) {
  ModelSpec m = tpu_trained(std::move(name), std::move(description), layers, hidden, heads, head_size, kv_heads,
                            8 * hidden, activation, 30522, 512);
  m.mask = MaskKind::Padding;
  m.head = HeadKind::BertPretraining;
  m.token_types = 2;
  return m;
}

std::vector<ModelSpec> all_presets() {
  return {bert_large(),
          gpt2_xl(),
          opt_350m(),
          llama2_7b(),
          megatron_bert(),
          megatron_gpt("megatron-gpt2-xl", "Megatron GPT-2, 40 layers (h 1024)", 40, 1024, 16, 1024),
          megatron_gpt("megatron-gpt2-54", "Megatron GPT-2, 54 layers (2.5B)", 54, 1920, 20, 1024),
          megatron_gpt("megatron-gpt2-72", "Megatron GPT-2, 72 layers (8.3B)", 72, 3072, 24, 1024),
          megatron_gpt("gpt3-175b", "GPT-3 175B (Megatron)", 96, 12288, 96, 2048),
          mixtral("mixtral-8x7b", "Mixtral 8x7B (Hugging Face)", 32, 4096, 32, 14336, 32000, 32768),
          mixtral("mixtral-8x22b", "Mixtral 8x22B (Hugging Face)", 56, 6144, 48, 16384, 32768, 65536),
          qwen2_57b_a14b(),
          qwen3_30b_a3b(),
          deepseek_v3(),
          palm_540b(),
          maxtext("maxtext-22b", "MaxText 22B benchmark (April 2023)", 48, 6144, 24),
          maxtext("maxtext-52b", "MaxText 52B benchmark (March 2023)", 32, 12288, 32),
          mlperf_bert("mlperf-bert-200b", "MLPerf v1.1 open BERT 200B (Google, Lingvo-JAX)", 66, 12288, 128, 96, 128,
                      Activation::Relu),
          mlperf_bert("mlperf-bert-481b", "MLPerf v1.1 open BERT 481B (Google, Lingvo-TF)", 64, 16384, 256, 128, 1,
                      Activation::SwiGlu)};
}

const std::vector<ModelSpec>& presets() {
  static const std::vector<ModelSpec> list = all_presets();
  return list;
}

}  // namespace

const std::vector<std::string>& preset_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const ModelSpec& m : presets()) out.push_back(m.name);
    return out;
  }();
  return names;
}

std::optional<ModelSpec> find_preset(const std::string& name) {
  const auto& list = presets();
  const auto it = std::find_if(list.begin(), list.end(), [&](const ModelSpec& m) { return m.name == name; });
  if (it == list.end()) return std::nullopt;
  return *it;
}

}  // namespace phaze::model
