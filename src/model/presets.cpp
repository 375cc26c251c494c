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

ModelSpec llama2_7b() {
  ModelSpec m;
  m.name = "llama2-7b";
  m.description = "Llama-2-7B (Hugging Face)";
  m.num_layers = 32;
  m.hidden = 4096;
  m.heads = 32;
  m.kv_heads = 32;
  m.ffn = 11008;
  m.vocab = 32000;
  m.word_embedding_dim = 4096;
  m.max_positions = 4096;
  m.default_seq = 4096;
  m.norm = NormKind::RmsNorm;
  m.activation = Activation::SwiGlu;
  m.biases = false;
  m.fused_qkv = false;
  m.rotary = true;
  m.tied_head = false;
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

std::vector<ModelSpec> all_presets() {
  return {bert_large(),
          gpt2_xl(),
          opt_350m(),
          llama2_7b(),
          megatron_bert(),
          megatron_gpt("megatron-gpt2-xl", "Megatron GPT-2, 40 layers (h 1024)", 40, 1024, 16, 1024),
          megatron_gpt("megatron-gpt2-54", "Megatron GPT-2, 54 layers (2.5B)", 54, 1920, 20, 1024),
          megatron_gpt("megatron-gpt2-72", "Megatron GPT-2, 72 layers (8.3B)", 72, 3072, 24, 1024),
          megatron_gpt("gpt3-175b", "GPT-3 175B (Megatron)", 96, 12288, 96, 2048)};
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
