// A mixture of experts whose first layers are dense (DeepSeek-V3) on Megatron-LM: which stage holds them,
// found against a layer-by-layer assignment written out here, each stage's weights against the sum of its
// own layers, and the model FLOPs against Megatron-LM's count for latent attention.

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "hw/system.h"
#include "megatron/training_plan.h"
#include "megatron/training_step.h"
#include "model/layer_graph.h"
#include "model/presets.h"

namespace {

using phaze::megatron::predict_step;
using phaze::megatron::Recompute;
using phaze::megatron::stage_dense_layers;
using phaze::megatron::TrainingPlan;
using phaze::model::ModelSpec;

ModelSpec small_moe(int64_t layers, int64_t dense) {
  ModelSpec m = *phaze::model::find_preset("mixtral-8x7b");
  m.num_layers = layers;
  m.hidden = 1024;
  m.heads = 8;
  m.kv_heads = 8;
  m.ffn = 4096;
  m.expert_ffn = 1024;
  m.first_dense_layers = dense;
  return m;
}

TrainingPlan plan(int64_t p, int64_t v) {
  TrainingPlan pl;
  pl.pp = p;
  pl.vp = v;
  pl.global_batch = 2 * p;
  pl.seq = 1024;
  pl.recompute = Recompute::None;
  return pl;
}

TEST(DenseFirstLayers, StagesHoldThemInModelOrder) {
  // Evenly split: layer l is in chunk l / (L / (p·v)), on stage chunk mod p.
  const int64_t L = 24;
  for (int64_t p : {1, 2, 3, 4})
    for (int64_t v : {1, 2})
      for (int64_t k = 0; k < L; ++k) {
        const ModelSpec m = small_moe(L, k);
        const TrainingPlan pl = plan(p, v);
        std::vector<int64_t> expected(static_cast<size_t>(p), 0);
        for (int64_t layer = 0; layer < k; ++layer) ++expected[static_cast<size_t>(layer / (L / (p * v)) % p)];
        for (int64_t stage = 0; stage < p; ++stage)
          EXPECT_EQ(stage_dense_layers(pl, m, stage), expected[static_cast<size_t>(stage)])
              << "p " << p << " v " << v << " k " << k << " stage " << stage;
      }
  // Uneven: 2 layers on the first stage, 4 on each of the others; 3 dense layers are 2 on the first and 1 on
  // the second.
  TrainingPlan uneven = plan(3, 1);
  uneven.first_stage_layers = 2;
  const ModelSpec m = small_moe(10, 3);
  EXPECT_EQ(stage_dense_layers(uneven, m, 0), 2);
  EXPECT_EQ(stage_dense_layers(uneven, m, 1), 1);
  EXPECT_EQ(stage_dense_layers(uneven, m, 2), 0);
}

TEST(DenseFirstLayers, EachStageHoldsItsOwnLayersWeights) {
  // 4 layers, the first 2 dense, on 2 stages without ZeRO: stage 0 the embedding and the two dense layers,
  // stage 1 the two expert layers and the head; 2 bytes per BF16 weight. The expert stage needs more.
  const phaze::hw::System system = phaze::hw::dgx_a100_system(true);
  const ModelSpec m = small_moe(4, 2);
  const auto g = phaze::model::build_layer_graph(m, phaze::model::Shape{1024, 1, 1}, {}, "test");
  const double moe = static_cast<double>(g.transformer.parameters),
               dense = static_cast<double>(g.dense_transformer.parameters),
               embedding = static_cast<double>(g.embedding.parameters), head = static_cast<double>(g.head.parameters);
  ASSERT_GT(moe, dense);
  const auto two = predict_step(m, system, plan(2, 1));
  EXPECT_EQ(two.memory.stage, 1);
  EXPECT_DOUBLE_EQ(two.memory.weights_bytes, 2 * (2 * moe + head));
  EXPECT_DOUBLE_EQ(predict_step(m, system, plan(1, 1)).memory.weights_bytes,
                   2 * (embedding + 2 * dense + 2 * moe + head));
  // The same model with every layer sparse holds more on its first stage than the dense one does.
  EXPECT_GT(predict_step(small_moe(4, 0), system, plan(1, 1)).memory.weights_bytes,
            predict_step(m, system, plan(1, 1)).memory.weights_bytes);
}

TEST(DenseFirstLayers, DeepSeekV3ModelFlopsAreMegatronLmsLatentAttentionCount) {
  // Megatron-LM's num_floating_point_operations with --multi-latent-attention, per token (3 for forward and
  // both backward GEMMs, 2 per multiply-add): the query latent h·q_r + q_r·a·(d + d_r), the key/value latent
  // (h + a·(d + d_v))·kv_r + h·d_r, the output a·d_v·h, the causal half of the scores s·a·(d + d_r)/2 + s·a·d_v/2;
  // gated FFNs of 3 h·f a token (the dense layers' f, the k routed and the shared expert's f_e each); the
  // logits h·V. Megatron-LM also counts the latents' norms (q_r + kv_r a layer, 6 · 10^-6 of the total) and
  // leaves out the router's h·E, which the layer graph has as a GEMM.
  const ModelSpec m = *phaze::model::find_preset("deepseek-v3");
  const double h = 7168, a = 128, d = 128, dr = 64, dv = 128, qr = 1536, kvr = 512, s = 4096, L = 61, dense = 3,
               f = 18432, fe = 2048, k = 8, E = 256, V = 129280;
  const double attention = 6 * L *
                           (qr * (h + a * (d + dr)) + kvr * (h + a * (d + dv)) + h * dr + a * dv * h +
                            s * a * (d + dr) / 2 + s * a * dv / 2);
  const double mlp = 6 * 3 * h * (f * dense + (k + 1) * fe * (L - dense));
  const double router = 6 * h * E * (L - dense);
  const double per_token = attention + mlp + 6 * h * V + router;
  TrainingPlan pl = plan(61, 1);
  pl.seq = 4096;
  pl.flash_attention = true;
  const auto p = predict_step(m, phaze::hw::dgx_h100_system(), pl);
  EXPECT_NEAR(p.model_flop / (pl.global_batch * s) / per_token, 1, 1e-12);
  // A fused kernel runs the causal half and recomputes Q·Kᵀ backward: the kernels never run fewer FLOPs
  // than the model needs.
  EXPECT_GE(p.hardware_flop, p.model_flop);
}

}  // namespace
