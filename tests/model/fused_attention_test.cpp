// The attention core as one fused kernel (model::Shape::fused_attention) against closed forms: what it stashes
// is the materialised layer's bytes less the s × s tensors (Korthikanti et al. 2022's 5·a·s²·b with dropout,
// 2·a·s²·b without) plus one FP32 statistic per query row; its backward runs one product more (Q·Kᵀ
// recomputed); it hands back the gradients of q, k and v.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "model/hf_config.h"
#include "model/layer_graph.h"
#include "model_test_util.h"

namespace {

using namespace phaze;
using phaze_test::preset;

model::LayerGraph graph(const model::ModelSpec& spec, int64_t s, int64_t b, int64_t t, bool fused) {
  model::Shape shape{s, b, t};
  shape.fused_attention = fused;
  return model::build_layer_graph(spec, shape, model::Precision{}, "test");
}

struct Case {
  model::ModelSpec spec;
  std::string name;
};

std::vector<Case> cases() {
  const std::string hf = std::string(PHAZE_TEST_DATA) + "/hf/";
  return {{preset("gpt3-175b"), "gpt3-175b"},  // attention dropout
          {preset("llama2-7b"), "llama2-7b"},
          {model::read_hf_config(hf + "llama-3-8b/config.json"), "llama-3-8b"}};  // grouped-query attention
}

TEST(FusedAttention, StashesNoScoresOnlyOneStatisticPerQueryRow) {
  for (const Case& c : cases()) {
    for (int64_t t : {1, 8}) {
      for (int64_t b : {1, 2}) {
        SCOPED_TRACE(c.name + " t=" + std::to_string(t) + " b=" + std::to_string(b));
        const int64_t s = 2048, a = c.spec.heads / t;
        const int64_t per_score = c.spec.attention_dropout > 0 ? 5 : 2;
        const int64_t materialised = graph(c.spec, s, b, t, false).transformer.activation_bytes;
        const int64_t fused = graph(c.spec, s, b, t, true).transformer.activation_bytes;
        EXPECT_EQ(fused, materialised - per_score * a * s * s * b + 4 * a * s * b);
      }
    }
  }
}

TEST(FusedAttention, CausalBlocksOnTheDiagonalAndBelowAndTheBackwardRecomputesTheScores) {
  // The materialised core runs 2 products of 2·s²·d FLOPs per head forward and 4 backward; the fused kernel
  // runs them over the 128 × 128 blocks on or below the diagonal of a causal mask, n(n + 1)/2 of them
  // (n = s/128 = 8: 36 blocks, 36 · 128² of the s² scores), and recomputes Q·Kᵀ backward (5 products).
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const int64_t s = 1024, b = 2, t = 2, a = c.spec.heads / t, d = c.spec.head_dim();
    const model::LayerGraph m = graph(c.spec, s, b, t, false), f = graph(c.spec, s, b, t, true);
    const int64_t full = b * a * s * s * d, causal = b * a * (8 * 9 / 2) * 128 * 128 * d;
    EXPECT_EQ(f.transformer.forward_flops(), m.transformer.forward_flops() - 4 * full + 4 * causal);
    EXPECT_EQ(f.transformer.backward_flops(), m.transformer.backward_flops() - 8 * full + 10 * causal);
    // Everything outside the core is the same layer.
    EXPECT_EQ(f.transformer.parameters, m.transformer.parameters);
    EXPECT_EQ(m.transformer.forward.ops.size() - f.transformer.forward.ops.size(),
              c.spec.attention_dropout > 0 ? 3u : 2u);  // F6, F8 (and F7) fold into F5
  }
}

TEST(FusedAttention, WithoutACausalMaskEveryScoreIsComputed) {
  // BERT's padding mask: the kernel computes all s² scores, as the materialised core does.
  const model::ModelSpec spec = preset("bert-large");
  const int64_t s = 512, b = 2, t = 1, a = spec.heads, d = spec.head_dim();
  const model::LayerGraph m = graph(spec, s, b, t, false), f = graph(spec, s, b, t, true);
  EXPECT_EQ(f.transformer.forward_flops(), m.transformer.forward_flops());
  EXPECT_EQ(f.transformer.backward_flops(), m.transformer.backward_flops() + 2 * b * a * s * s * d);
}

TEST(FusedAttention, OneKernelEachWayWithTheGradientsOfQKAndV) {
  const model::ModelSpec spec = model::read_hf_config(std::string(PHAZE_TEST_DATA) + "/hf/llama-3-8b/config.json");
  const int64_t s = 4096, b = 1, t = 1;
  const model::LayerGraph g = graph(spec, s, b, t, true);
  const int f5 = g.transformer.forward.find("F5"), b5 = g.transformer.backward.find("B5");
  ASSERT_GE(f5, 0);
  ASSERT_GE(b5, 0);
  const model::Operator& forward = g.transformer.forward.ops[static_cast<size_t>(f5)];
  const model::Operator& backward = g.transformer.backward.ops[static_cast<size_t>(b5)];
  ASSERT_TRUE(forward.attention && backward.attention);
  EXPECT_EQ(forward.engine, model::Engine::Fused);
  EXPECT_EQ(forward.attention->heads, 32);
  EXPECT_EQ(forward.attention->kv_heads(), 8);
  // dQ, dK, dV in 16 bits: 32 query heads and 8 key/value heads of 128 elements per token.
  EXPECT_EQ(backward.write_bytes, 2 * s * b * (32 + 8 + 8) * 128);
  EXPECT_EQ(g.transformer.backward.find("B8a"), -1);
}

}  // namespace
