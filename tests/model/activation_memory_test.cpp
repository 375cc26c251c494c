// Stashed activation bytes of one transformer layer against models.md 5.3 (Korthikanti et al. 2022).

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "model/layer_graph.h"
#include "model_test_util.h"

namespace {

using phaze_test::build;
using phaze_test::preset;

/// s b h (34 + 5 a s / h) at t = 1 and s b h (10 + 24/t + 5 a s / (h t)) at t > 1, in exact integers:
/// 10 sbh + 24 sbh / t + 5 a s^2 b / t (t = 1 gives 34 sbh + 5 a s^2 b).
int64_t megatron_activation_bytes(int64_t s, int64_t b, int64_t h, int64_t a, int64_t t) {
  const int64_t sbh = s * b * h;
  if (t == 1) return 34 * sbh + 5 * a * s * s * b;
  return 10 * sbh + 24 * sbh / t + 5 * a * s * s * b / t;
}

TEST(ActivationBytes, PublishedTestValues) {
  // models.md 5.3 test values, b = 1
  EXPECT_EQ(megatron_activation_bytes(2048, 1, 12288, 96, 1), 2868903936);
  EXPECT_EQ(megatron_activation_bytes(2048, 1, 12288, 96, 8), 578813952);
  EXPECT_EQ(megatron_activation_bytes(512, 1, 1024, 16, 1), 38797312);
  EXPECT_EQ(megatron_activation_bytes(1024, 1, 1600, 25, 1), 186777600);
  EXPECT_EQ(megatron_activation_bytes(1024, 1, 1920, 20, 1), 171704320);

  EXPECT_EQ(build(preset("gpt3-175b"), 2048, 1, 1).transformer.activation_bytes, 2868903936);
  EXPECT_EQ(build(preset("gpt3-175b"), 2048, 1, 8).transformer.activation_bytes, 578813952);
  EXPECT_EQ(build(preset("bert-large"), 512, 1, 1).transformer.activation_bytes, 38797312);
  EXPECT_EQ(build(preset("megatron-bert"), 512, 1, 1).transformer.activation_bytes, 38797312);
  EXPECT_EQ(build(preset("gpt2-xl"), 1024, 1, 1).transformer.activation_bytes, 186777600);
  EXPECT_EQ(build(preset("megatron-gpt2-54"), 1024, 1, 1).transformer.activation_bytes, 171704320);
}

TEST(ActivationBytes, MegatronLayerEveryWidthAndMicroBatch) {
  for (const char* name : {"gpt3-175b", "megatron-gpt2-xl", "megatron-gpt2-54", "megatron-gpt2-72", "megatron-bert"}) {
    const auto spec = preset(name);
    for (int64_t t : phaze_test::admissible_tp(spec)) {
      for (int64_t b : {1, 2}) {
        SCOPED_TRACE(std::string(name) + " t=" + std::to_string(t) + " b=" + std::to_string(b));
        const int64_t s = spec.default_seq;
        const auto graph = build(spec, s, b, t);
        EXPECT_EQ(graph.transformer.activation_bytes, megatron_activation_bytes(s, b, spec.hidden, spec.heads, t));
      }
    }
  }
}

TEST(ActivationBytes, Gpt2XlAndBertLargeAtT1WithMicroBatch2) {
  EXPECT_EQ(build(preset("gpt2-xl"), 1024, 2, 1).transformer.activation_bytes,
            megatron_activation_bytes(1024, 2, 1600, 25, 1));
  EXPECT_EQ(build(preset("bert-large"), 512, 2, 1).transformer.activation_bytes,
            megatron_activation_bytes(512, 2, 1024, 16, 1));
}

TEST(ActivationBytes, ShorterSequence) {
  // the formula holds for any s (GPT-3 at s = 1024)
  EXPECT_EQ(build(preset("gpt3-175b"), 1024, 1, 4).transformer.activation_bytes,
            megatron_activation_bytes(1024, 1, 12288, 96, 4));
}

TEST(ActivationBytes, Llama2RuleOfSection53) {
  // 16 sbh + 6 sbf + 2 a s^2 b: RMSNorm, no dropout, SwiGLU storing gate, up and the down input
  const int64_t s = 4096, b = 1, h = 4096, f = 11008, a = 32;
  const int64_t expected = 16 * s * b * h + 6 * s * b * f + 2 * a * s * s * b;
  EXPECT_EQ(expected, 1612709888);
  EXPECT_EQ(build(preset("llama2-7b"), s, b, 1).transformer.activation_bytes, expected);
  EXPECT_EQ(build(preset("llama2-7b"), s, 2, 1).transformer.activation_bytes,
            16 * s * 2 * h + 6 * s * 2 * f + 2 * a * s * s * 2);
}

TEST(ActivationBytes, Opt350mWithoutAttentionDropout) {
  // models.md 5.3 "Adapting": no attention dropout -> attention term 2 a s^2 b instead of 5 a s^2 b;
  // hidden dropout 0.1 keeps its masks, f = 4h keeps the MLP term 19 sbh: total 34 sbh + 2 a s^2 b.
  const int64_t s = 2048, b = 1, h = 1024, a = 16;
  const int64_t expected = 34 * s * b * h + 2 * a * s * s * b;
  EXPECT_EQ(expected, 71303168 + 134217728);
  EXPECT_EQ(build(preset("opt-350m"), s, b, 1).transformer.activation_bytes, expected);
}

TEST(LayerGraphShape, ChainOfEmbeddingLayersAndHead) {
  for (const auto& ref : phaze_test::preset_refs()) {
    SCOPED_TRACE(ref.name);
    const auto spec = preset(ref.name);
    const int64_t b = 2, s = spec.default_seq;
    const auto graph = build(spec, s, b, 1);
    ASSERT_EQ(graph.size(), ref.layers + 2);
    EXPECT_EQ(graph.node(0).kind, phaze::model::LayerKind::Embedding);
    EXPECT_EQ(graph.node(graph.size() - 1).kind, phaze::model::LayerKind::Head);
    for (int64_t i = 1; i <= ref.layers; ++i) {
      EXPECT_EQ(graph.node(i).kind, phaze::model::LayerKind::Transformer) << i;
    }
    // models.md 5.4: the hidden state, 2 b s h bytes, crosses every stage boundary
    for (int64_t i = 0; i <= ref.layers; ++i) {
      EXPECT_EQ(graph.edge_bytes(i), 2 * b * s * ref.hidden) << "edge " << i;
    }
    EXPECT_EQ(graph.transformer.output_bytes, 2 * b * s * ref.hidden);
  }
}

// The distinct layers cover the chain: each chain node is its distinct layer, the node counts add up to the
// chain (the published layer count plus embedding and head), and the kinds named without a graph match.
TEST(LayerGraphShape, DistinctLayersCoverTheChain) {
  for (const auto& ref : phaze_test::preset_refs()) {
    SCOPED_TRACE(ref.name);
    const auto spec = preset(ref.name);
    const auto graph = build(spec, spec.default_seq, 1, 1);
    const auto distinct = graph.distinct_layers();
    const auto kinds = phaze::model::distinct_layer_kinds(spec);
    ASSERT_EQ(kinds.size(), distinct.size());
    std::vector<int64_t> seen(distinct.size(), 0);
    for (int64_t i = 0; i < graph.size(); ++i) {
      const size_t k = graph.distinct_index(i);
      ASSERT_LT(k, distinct.size());
      EXPECT_EQ(distinct[k].layer, &graph.node(i)) << i;
      ++seen[k];
    }
    int64_t total = 0;
    for (size_t k = 0; k < distinct.size(); ++k) {
      EXPECT_EQ(seen[k], distinct[k].nodes) << k;
      EXPECT_EQ(distinct[k].layer->kind, kinds[k]) << k;
      total += distinct[k].nodes;
    }
    EXPECT_EQ(total, ref.layers + 2);
  }
}

}  // namespace
