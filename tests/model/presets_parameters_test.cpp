// Presets, parameter counts and vocabulary padding against models.md sections 1, 2 and 5.1.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "model/layer_graph.h"
#include "model/model_spec.h"
#include "model/presets.h"
#include "model_test_util.h"

namespace {

using phaze::model::find_preset;
using phaze::model::HeadKind;
using phaze::model::model_totals;
using phaze::model::padded_vocab;
using phaze::model::Precision;
using phaze_test::build;
using phaze_test::preset;
using phaze_test::preset_refs;

// ---------------------------------------------------------------------------------------------------
// Presets: names and hyper-parameters (models.md 1.1, 1.3)

TEST(Presets, EverySeedModelIsListedAndFound) {
  const auto& names = phaze::model::preset_names();
  for (const auto& ref : preset_refs()) {
    EXPECT_NE(std::find(names.begin(), names.end(), ref.name), names.end()) << ref.name;
    EXPECT_TRUE(find_preset(ref.name).has_value()) << ref.name;
  }
  for (const auto& name : names) EXPECT_TRUE(find_preset(name).has_value()) << name;
}

TEST(Presets, UnknownNameIsNotFound) {
  EXPECT_FALSE(find_preset("no-such-model").has_value());
  EXPECT_FALSE(find_preset("").has_value());
}

TEST(Presets, HyperParametersMatchTable11) {
  for (const auto& ref : preset_refs()) {
    SCOPED_TRACE(ref.name);
    const auto spec = preset(ref.name);
    EXPECT_EQ(spec.num_layers, ref.layers);
    EXPECT_EQ(spec.hidden, ref.hidden);
    EXPECT_EQ(spec.heads, ref.heads);
    EXPECT_EQ(spec.kv_heads, ref.kv_heads);
    EXPECT_EQ(spec.ffn, ref.ffn);
    EXPECT_EQ(spec.vocab, ref.vocab);
    EXPECT_EQ(spec.default_seq, ref.seq);
    EXPECT_EQ(spec.head_dim(), ref.hidden / ref.heads);
  }
}

TEST(Presets, ModelSpecificStructure) {
  // models.md 1.1 / 1.2
  const auto bert = preset("bert-large");
  EXPECT_FALSE(bert.pre_norm);
  EXPECT_TRUE(bert.embedding_norm);
  EXPECT_EQ(bert.token_types, 2);
  EXPECT_EQ(bert.max_positions, 512);
  EXPECT_EQ(bert.mask, phaze::model::MaskKind::Padding);
  EXPECT_EQ(bert.head, HeadKind::BertPretraining);
  EXPECT_FALSE(bert.fused_qkv);
  EXPECT_DOUBLE_EQ(bert.norm_epsilon, 1e-12);

  const auto opt = preset("opt-350m");
  EXPECT_EQ(opt.word_embedding_dim, 512);
  EXPECT_EQ(opt.max_positions, 2048);
  EXPECT_EQ(opt.position_offset, 2);
  EXPECT_FALSE(opt.pre_norm);
  EXPECT_FALSE(opt.final_norm);
  EXPECT_EQ(opt.activation, phaze::model::Activation::Relu);
  EXPECT_DOUBLE_EQ(opt.attention_dropout, 0.0);
  EXPECT_DOUBLE_EQ(opt.hidden_dropout, 0.1);
  EXPECT_TRUE(opt.scale_query);
  EXPECT_TRUE(opt.tied_head);

  const auto llama = preset("llama2-7b");
  EXPECT_EQ(llama.norm, phaze::model::NormKind::RmsNorm);
  EXPECT_EQ(llama.activation, phaze::model::Activation::SwiGlu);
  EXPECT_TRUE(llama.rotary);
  EXPECT_FALSE(llama.biases);
  EXPECT_FALSE(llama.tied_head);
  EXPECT_FALSE(llama.fused_qkv);
  EXPECT_DOUBLE_EQ(llama.hidden_dropout, 0.0);
  EXPECT_DOUBLE_EQ(llama.attention_dropout, 0.0);

  const auto gpt2 = preset("gpt2-xl");
  EXPECT_TRUE(gpt2.pre_norm);
  EXPECT_TRUE(gpt2.final_norm);
  EXPECT_TRUE(gpt2.fused_qkv);
  EXPECT_EQ(gpt2.activation, phaze::model::Activation::GeluTanh);
  EXPECT_EQ(gpt2.max_positions, 1024);
  EXPECT_FALSE(gpt2.pad_vocab_always);

  for (const char* name : {"megatron-bert", "megatron-gpt2-xl", "megatron-gpt2-54", "megatron-gpt2-72", "gpt3-175b"}) {
    SCOPED_TRACE(name);
    const auto spec = preset(name);
    EXPECT_TRUE(spec.pad_vocab_always);
    EXPECT_TRUE(spec.pre_norm);
    EXPECT_TRUE(spec.fused_qkv);
  }
  EXPECT_EQ(preset("megatron-bert").mask, phaze::model::MaskKind::Padding);
  EXPECT_EQ(preset("megatron-bert").head, HeadKind::BertPretraining);
  EXPECT_EQ(preset("gpt3-175b").mask, phaze::model::MaskKind::Causal);
  EXPECT_EQ(preset("gpt3-175b").max_positions, 2048);
}

// ---------------------------------------------------------------------------------------------------
// Whole-model parameter counts (models.md 5.1)

TEST(ParameterCount, BertLarge) {
  const int64_t h = 1024, L = 24, V = 30522, P = 512, types = 2;
  // word + position + token type embeddings, embedding LayerNorm, L layers of 12h^2 + 13h, pooler h^2 + h
  const int64_t formula = V * h + P * h + types * h + 2 * h + L * (12 * h * h + 13 * h) + h * h + h;
  EXPECT_EQ(formula, 335141888);
  EXPECT_EQ(model_totals(preset("bert-large"), 512, Precision{}).parameters, 335141888);
}

TEST(ParameterCount, BertLargeTrainingParametersAddPretrainingHeads) {
  const int64_t h = 1024, V = 30522;
  // + MLM transform (dense h*h + h, LayerNorm 2h), MLM decoder bias V, NSP classifier 2h + 2
  const int64_t extra = (h * h + h) + 2 * h + V + (2 * h + 2);
  EXPECT_EQ(335141888 + extra, 336226108);
  EXPECT_EQ(model_totals(preset("bert-large"), 512, Precision{}).training_parameters, 335141888 + extra);
}

TEST(ParameterCount, Gpt2Xl) {
  const int64_t h = 1600, L = 48, V = 50257, P = 1024;
  const int64_t formula = V * h + P * h + L * (12 * h * h + 13 * h) + 2 * h;  // tied head, final LN
  EXPECT_EQ(formula, 1557611200);
  EXPECT_EQ(model_totals(preset("gpt2-xl"), 1024, Precision{}).parameters, 1557611200);
}

TEST(ParameterCount, Opt350m) {
  const int64_t h = 1024, L = 24, V = 50272, E = 512, P = 2048 + 2;
  // 512-d tied word embedding, 2050 position rows, project_in and project_out (no bias), no final LN
  const int64_t formula = V * E + P * h + 2 * E * h + L * (12 * h * h + 13 * h);
  EXPECT_EQ(formula, 331196416);
  EXPECT_EQ(model_totals(preset("opt-350m"), 2048, Precision{}).parameters, 331196416);
}

TEST(ParameterCount, Llama2_7b) {
  const int64_t h = 4096, L = 32, V = 32000, f = 11008;
  // untied embedding and head, layers 4h^2 + 3hf + 2h, final RMSNorm h
  const int64_t formula = 2 * V * h + L * (4 * h * h + 3 * h * f + 2 * h) + h;
  EXPECT_EQ(formula, 6738415616);
  EXPECT_EQ(model_totals(preset("llama2-7b"), 4096, Precision{}).parameters, 6738415616);
}

// Megatron convention: 12 L h^2 (1 + 13/(12h) + (V_p + s)/(12 L h)) + final LN 2h, V_p = 50304 at t = 1.
int64_t megatron_parameters(int64_t L, int64_t h, int64_t vp, int64_t s) {
  return 12 * L * h * h + 13 * L * h + (vp + s) * h + 2 * h;
}

TEST(ParameterCount, MegatronGpt2Models) {
  EXPECT_EQ(megatron_parameters(40, 1024, 50304, 1024), 556410880);
  EXPECT_EQ(megatron_parameters(54, 1920, 50304, 1024), 2488688640);
  EXPECT_EQ(megatron_parameters(72, 3072, 50304, 1024), 8314288128);
  EXPECT_EQ(model_totals(preset("megatron-gpt2-xl"), 1024, Precision{}).parameters, 556410880);
  EXPECT_EQ(model_totals(preset("megatron-gpt2-54"), 1024, Precision{}).parameters, 2488688640);
  EXPECT_EQ(model_totals(preset("megatron-gpt2-72"), 1024, Precision{}).parameters, 8314288128);
}

TEST(ParameterCount, Gpt3WithinNarayananFormula) {
  const long double L = 96, h = 12288, V = 50257, s = 2048;
  const long double formula = 12 * L * h * h * (1 + 13 / (12 * h) + (V + s) / (12 * L * h));
  EXPECT_NEAR(static_cast<double>(formula), 174604234752.0, 1.0);  // models.md 5.1
  const auto totals = model_totals(preset("gpt3-175b"), 2048, Precision{});
  EXPECT_TRUE(phaze_test::within_relative(totals.parameters, formula, 1e-3));
}

TEST(ParameterCount, TrainingParametersEqualParametersForCausalLms) {
  for (const char* name : {"gpt2-xl", "opt-350m", "llama2-7b", "megatron-gpt2-xl", "gpt3-175b"}) {
    SCOPED_TRACE(name);
    const auto spec = preset(name);
    const auto totals = model_totals(spec, spec.default_seq, Precision{});
    EXPECT_EQ(totals.training_parameters, totals.parameters);
  }
}

TEST(ParameterCount, LayerGraphAtT1CountsTiedCopiesOnce) {
  // Same published totals through the layer graph (t = 1, whole model on one rank).
  struct Case {
    const char* name;
    int64_t parameters;
  };
  for (const Case& c : {Case{"gpt2-xl", 1557611200}, Case{"opt-350m", 331196416}, Case{"llama2-7b", 6738415616},
                        Case{"megatron-gpt2-xl", 556410880}, Case{"megatron-gpt2-54", 2488688640},
                        Case{"megatron-gpt2-72", 8314288128}}) {
    SCOPED_TRACE(c.name);
    const auto spec = preset(c.name);
    const auto graph = build(spec, spec.default_seq, 1, 1);
    EXPECT_EQ(graph.parameters(), c.parameters);
  }
}

// ---------------------------------------------------------------------------------------------------
// Per-layer parameter counts (models.md 5.1 and 2)

TEST(LayerParameters, TransformerLayerAtT1) {
  struct Case {
    const char* name;
    int64_t published;  // models.md 5.1 per-layer column where given, else -1
  };
  for (const Case& c : {Case{"bert-large", 12596224}, Case{"gpt2-xl", 30740800}, Case{"opt-350m", 12596224},
                        Case{"megatron-bert", -1}, Case{"megatron-gpt2-xl", -1}, Case{"megatron-gpt2-54", 44261760},
                        Case{"megatron-gpt2-72", 113286144}, Case{"gpt3-175b", 1812099072}}) {
    SCOPED_TRACE(c.name);
    const auto spec = preset(c.name);
    const int64_t h = spec.hidden;
    const int64_t expected = 12 * h * h + 13 * h;  // f = 4h, biases
    if (c.published >= 0) {
      EXPECT_EQ(expected, c.published);
    }
    const auto graph = build(spec, spec.default_seq, 1, 1);
    EXPECT_EQ(graph.transformer.parameters, expected);
    EXPECT_EQ(graph.transformer.parameter_bytes, 2 * expected);
  }
  {
    const auto spec = preset("llama2-7b");
    const int64_t h = 4096, f = 11008;
    const int64_t expected = 4 * h * h + 3 * h * f + 2 * h;
    EXPECT_EQ(expected, 202383360);
    EXPECT_EQ(build(spec, 4096, 1, 1).transformer.parameters, expected);
  }
}

TEST(LayerParameters, MegatronLayerPerRank) {
  // models.md 2: QKV 3h^2/t + 3h/t; out h^2/t + h; FFN1 4h^2/t + 4h/t; FFN2 4h^2/t + h; LNs 4h
  //            = 12h^2/t + 7h/t + 6h
  for (const char* name : {"gpt3-175b", "megatron-gpt2-72", "megatron-gpt2-xl"}) {
    const auto spec = preset(name);
    const int64_t h = spec.hidden;
    for (int64_t t : {1, 2, 4, 8}) {
      SCOPED_TRACE(std::string(name) + " t=" + std::to_string(t));
      const int64_t expected = 12 * h * h / t + 7 * h / t + 6 * h;
      EXPECT_EQ(expected, (3 * h * h / t + 3 * h / t) + (h * h / t + h) + (4 * h * h / t + 4 * h / t) +
                              (4 * h * h / t + h) + 4 * h);
      const auto graph = build(spec, spec.default_seq, 1, t);
      EXPECT_EQ(graph.transformer.parameters, expected);
      EXPECT_EQ(graph.transformer.parameter_bytes, 2 * expected);
      if (t > 1) {
        EXPECT_TRUE(graph.transformer.tensor_parallel);
      }
    }
  }
}

TEST(LayerParameters, LlamaLayerPerRank) {
  // q, k, v, o, gate, up, down all split; the two RMSNorms (h each) replicated.
  const auto spec = preset("llama2-7b");
  const int64_t h = 4096, f = 11008;
  for (int64_t t : {1, 2, 4, 8}) {
    SCOPED_TRACE(t);
    EXPECT_EQ(build(spec, 4096, 1, t).transformer.parameters, 4 * h * h / t + 3 * h * f / t + 2 * h);
  }
}

// ---------------------------------------------------------------------------------------------------
// Vocabulary padding (models.md 2)

TEST(VocabularyPadding, MegatronGptTable) {
  const int64_t expected[] = {50304, 50432, 50688, 51200};
  for (const char* name : {"megatron-gpt2-xl", "megatron-gpt2-54", "megatron-gpt2-72", "gpt3-175b"}) {
    const auto spec = preset(name);
    int i = 0;
    for (int64_t t : {1, 2, 4, 8}) {
      SCOPED_TRACE(std::string(name) + " t=" + std::to_string(t));
      EXPECT_EQ(phaze_test::megatron_padding(50257, t), expected[i]);
      EXPECT_EQ(padded_vocab(spec, t), expected[i]);
      ++i;
    }
  }
}

TEST(VocabularyPadding, MegatronBertTable) {
  const auto spec = preset("megatron-bert");
  const int64_t expected[] = {30592, 30720, 30720, 30720};
  int i = 0;
  for (int64_t t : {1, 2, 4, 8}) {
    SCOPED_TRACE(t);
    EXPECT_EQ(phaze_test::megatron_padding(30522, t), expected[i]);
    EXPECT_EQ(padded_vocab(spec, t), expected[i]);
    ++i;
  }
}

TEST(VocabularyPadding, HuggingFaceModelsUnpaddedAtT1) {
  EXPECT_EQ(padded_vocab(preset("bert-large"), 1), 30522);
  EXPECT_EQ(padded_vocab(preset("gpt2-xl"), 1), 50257);
  EXPECT_EQ(padded_vocab(preset("opt-350m"), 1), 50272);
  EXPECT_EQ(padded_vocab(preset("llama2-7b"), 1), 32000);
}

TEST(VocabularyPadding, HuggingFaceModelsPaddedWhenSplit) {
  const auto llama = preset("llama2-7b");
  EXPECT_EQ(padded_vocab(llama, 2), 32000);  // 32000 is already a multiple of 256
  EXPECT_EQ(padded_vocab(llama, 4), 32256);
  EXPECT_EQ(padded_vocab(llama, 8), 32768);
  const auto opt = preset("opt-350m");
  EXPECT_EQ(padded_vocab(opt, 2), 50432);
  EXPECT_EQ(padded_vocab(opt, 4), 50688);
  EXPECT_EQ(padded_vocab(opt, 8), 51200);
  const auto bert = preset("bert-large");
  for (int64_t t : {2, 4, 8}) EXPECT_EQ(padded_vocab(bert, t), phaze_test::megatron_padding(30522, t)) << t;
}

}  // namespace
