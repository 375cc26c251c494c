// Multi-token prediction modules on the last stage: their weights against the sum of their parts written out
// from DeepSeek-V3's description, and the model FLOPs against Megatron-LM's count with --mtp-num-layers.

#include <gtest/gtest.h>

#include <cstdint>

#include "hw/system.h"
#include "megatron/training_plan.h"
#include "megatron/training_step.h"
#include "model/layer_graph.h"
#include "model/presets.h"
#include "util/input_error.h"

namespace {

using phaze::megatron::predict_step;
using phaze::megatron::Recompute;
using phaze::megatron::TrainingPlan;
using phaze::model::ModelSpec;

TrainingPlan plan(int64_t p, int64_t mtp, int64_t seq) {
  TrainingPlan pl;
  pl.pp = p;
  pl.global_batch = 2 * p;
  pl.seq = seq;
  pl.recompute = Recompute::None;
  pl.flash_attention = true;
  pl.mtp_layers = mtp;
  return pl;
}

TEST(MultiTokenPrediction, TheLastStageHoldsEachModulesLayerAndProjection) {
  // Mixtral-shaped, 4 layers on 2 stages, t = 1: each module adds an expert layer and the projection's 2h·h
  // weights and two RMSNorms of h (the LM head is the main one's); the first stage is unchanged.
  ModelSpec m = *phaze::model::find_preset("mixtral-8x7b");
  m.num_layers = 4;
  const phaze::hw::System system = phaze::hw::dgx_h100_system();
  const auto g = phaze::model::build_layer_graph(m, phaze::model::Shape{1024, 1, 1}, {}, "test");
  const double layer = static_cast<double>(g.transformer.parameters), h = static_cast<double>(m.hidden),
               head = static_cast<double>(g.head.parameters);
  const auto without = predict_step(m, system, plan(2, 0, 1024));
  for (int64_t d : {1, 2}) {
    const auto with = predict_step(m, system, plan(2, d, 1024));
    EXPECT_EQ(with.memory.stage, 1);
    const double modules = static_cast<double>(d);
    EXPECT_DOUBLE_EQ(with.memory.weights_bytes, 2 * ((2 + modules) * layer + modules * (2 * h * h + 2 * h) + head));
    EXPECT_GT(with.time.iteration_s, without.time.iteration_s);
  }
  EXPECT_THROW(predict_step(m, system, plan(2, 17, 1024)), phaze::InputError);
}

TEST(MultiTokenPrediction, DeepSeekV3ModelFlopsAreMegatronLmsCountWithItsModule) {
  // Megatron-LM counts a module as one more layer of the model's kind (here with experts), its logits again,
  // and its projection 2h·h (3 · 2 FLOPs a weight: forward and both backward GEMMs); its norms, which it also
  // counts (3h a token), are not GEMMs. Without the module the count is the one of dense_first_layers_test.
  const ModelSpec v3 = *phaze::model::find_preset("deepseek-v3");
  const double h = 7168, a = 128, d = 128, dr = 64, dv = 128, qr = 1536, kvr = 512, s = 4096, fe = 2048, k = 8, E = 256,
               V = 129280;
  const double attention_layer = 6 * (qr * (h + a * (d + dr)) + kvr * (h + a * (d + dv)) + h * dr + a * dv * h +
                                      s * a * (d + dr) / 2 + s * a * dv / 2);
  const double expert_layer = attention_layer + 6 * 3 * h * (k + 1) * fe + 6 * h * E;
  const double module = expert_layer + 6 * h * V + 6 * 2 * h * h;
  const auto without = predict_step(v3, phaze::hw::dgx_h100_system(), plan(61, 0, 4096));
  const auto with = predict_step(v3, phaze::hw::dgx_h100_system(), plan(61, 1, 4096));
  const double tokens = 2 * 61 * s;
  EXPECT_NEAR((with.model_flop - without.model_flop) / tokens / module, 1, 1e-12);
  EXPECT_GE(with.hardware_flop, with.model_flop);
}

}  // namespace
