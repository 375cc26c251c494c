// FP8, context parallelism and ZeRO against closed forms written out here from the model's shape: the
// memory of ZeRO's stages (Rajbhandari et al. 2020, with Megatron-LM's FP32 gradients), Transformer Engine's
// FP8 weight copies, the activations of one rank of a context-parallel group, the key/value bytes of the
// p2p ring, and the conservation of a model's FLOPs whatever the split.

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <variant>

#include "cost/collective_time.h"
#include "cost/gpu_kernel.h"
#include "hw/system.h"
#include "megatron/layer_time.h"
#include "megatron/training_step.h"
#include "model/hf_config.h"
#include "model/presets.h"
#include "util/input_error.h"

namespace {

using phaze::megatron::predict_step;
using phaze::megatron::Recompute;
using phaze::megatron::StepPrediction;
using phaze::megatron::TrainingPlan;
using phaze::model::ModelSpec;

const phaze::hw::System kSystem = phaze::hw::dgx_h100_system();

TrainingPlan plan(int64_t t, int64_t c, int64_t d, int64_t global, int64_t seq) {
  TrainingPlan pl = phaze::megatron::current_practice();
  pl.memory_reserve_bytes = 0;
  pl.tp = t;
  pl.cp = c;
  pl.dp = d;
  pl.global_batch = global;
  pl.seq = seq;
  pl.recompute = Recompute::None;
  return pl;
}

double state_bytes(const StepPrediction& p) {
  return p.memory.weights_bytes + p.memory.gradients_bytes + p.memory.optimizer_bytes;
}

// One stage holds every parameter Ψ; BF16 with FP32 gradients is 2 + 4 + 12 bytes each. ZeRO 1 shards the 12
// over N GPUs, ZeRO 2 the 4 too (keeping one layer's gradients whole while it is reduced), ZeRO 3 the 2 too
// (keeping two layers whole: the one at work and the prefetched one).
TEST(Sharding, ZeroStagesHoldTheBytesOfTheZeroPaper) {
  const ModelSpec m = *phaze::model::find_preset("llama2-7b");
  const double h = 4096, f = 11008, L = 32, V = 32000;
  const double layer = 4 * h * h + 3 * h * f + 2 * h;  // attention, SwiGLU MLP, two RMSNorm weights
  const double psi = L * layer + 2 * V * h + h;        // untied embedding and head, the final norm
  const double n = 8;
  TrainingPlan pl = plan(1, 1, 8, 64, 4096);
  const auto at = [&](int64_t zero) {
    pl.zero = zero;
    return state_bytes(predict_step(m, kSystem, pl));
  };
  EXPECT_NEAR(at(0) / (18 * psi), 1, 1e-9);
  EXPECT_NEAR(at(1) / (6 * psi + 12 * psi / n), 1, 1e-9);
  EXPECT_NEAR(at(2) / (2 * psi + 16 * psi / n + 4 * layer), 1, 1e-9);
  EXPECT_NEAR(at(3) / (18 * psi / n + 2 * 2 * layer + 4 * layer), 1, 1e-9);
  // A sharding group of 4 of the 8 GPUs (HYBRID_SHARD) shards by 4.
  pl.zero_group = 4;
  EXPECT_NEAR(at(1) / (6 * psi + 12 * psi / 4), 1, 1e-9);
}

// Llama 3 8B's LM head (128,256 × 4,096 = 525 M parameters) is a larger unit than one of its layers (218 M):
// ZeRO-3 holds two of the largest units whole, ZeRO-2 the largest unit's gradients.
TEST(Sharding, TheLargestUnitHeldWholeMayBeTheHead) {
  const ModelSpec m = phaze::model::load_model(std::string(PHAZE_TEST_DATA) + "/hf/llama-3-8b/config.json");
  const double h = 4096, f = 14336, L = 32, V = 128256, kv = 1024;
  const double layer = 2 * h * h + 2 * h * kv + 3 * h * f + 2 * h, head = V * h + h;  // with the final norm
  const double psi = L * layer + 2 * V * h + h;
  TrainingPlan pl = plan(1, 1, 8, 64, 8192);
  pl.zero = 3;
  const StepPrediction p = predict_step(m, kSystem, pl);
  EXPECT_NEAR(p.memory.weights_bytes / (2 * psi / 8 + 2 * 2 * head), 1, 1e-9);
  EXPECT_NEAR(p.memory.gradients_bytes / (4 * psi / 8 + 4 * head), 1, 1e-9);
}

// ZeRO 2 and 3 reduce-scatter every micro-batch's gradients (and ZeRO 3 gathers the parameters twice per
// micro-batch), where ZeRO 1 reduces once per iteration: with every collective exposed the data-parallel time
// grows with the micro-batches.
TEST(Sharding, ZeroTwoAndThreeCommunicateEveryMicroBatch) {
  const ModelSpec m = *phaze::model::find_preset("llama2-7b");
  TrainingPlan pl = plan(1, 1, 8, 64, 4096);
  const auto dp_s = [&](int64_t zero, int64_t global) {
    pl.zero = zero;
    pl.global_batch = global;
    return predict_step(m, kSystem, pl).time.dp_comm_s;
  };
  EXPECT_NEAR(dp_s(1, 64), dp_s(1, 32), 1e-12);
  // 8 micro-batches per iteration at 64 sequences, 4 at 32: 4 more reduce-scatters (ZeRO 2), and as many
  // pairs of gathers (ZeRO 3); ZeRO 2's parameter all-gather after the optimizer step stays one per iteration.
  const double zero2_per_micro_batch = (dp_s(2, 64) - dp_s(2, 32)) / 4;
  const double zero3_per_micro_batch = (dp_s(3, 64) - dp_s(3, 32)) / 4;
  EXPECT_GT(zero2_per_micro_batch, 0);
  EXPECT_NEAR(dp_s(2, 32) - 4 * zero2_per_micro_batch, dp_s(2, 16) - 2 * zero2_per_micro_batch, 1e-9);
  // Per micro-batch ZeRO 3 moves the FP32 gradients once and the BF16 parameters twice: 4 + 2 · 2 bytes per
  // parameter against ZeRO 2's 4.
  EXPECT_NEAR(zero3_per_micro_batch / zero2_per_micro_batch, (4.0 + 2 * 2) / 4, 0.01);
}

// Transformer Engine keeps an FP8 copy of each FP8 GEMM's weight and its transpose: 2 bytes per parameter of
// the projections and the MLP, none with --fp8-param-gather (the FP8 parameters replace the 16-bit ones).
// Expert parallelism: a GPU holds E/ep of each layer's routed experts, so their 16-bit weights and FP32
// gradients shrink by (E − E/ep) experts' worth; with the distributed optimizer their state shards over the
// d / ep GPUs holding the same experts, so the optimizer's bytes per GPU stay what they were at ep = 1.
TEST(Sharding, ExpertParallelismSplitsTheExpertsWeightsNotTheirOptimizerShare) {
  const ModelSpec m = *phaze::model::find_preset("mixtral-8x7b");
  const int64_t t = 2, h = 4096, f = 14336, E = 8, L = 32;
  for (int64_t ep : {2, 4, 8}) {
    TrainingPlan one = plan(t, 1, 8, 64, 4096);
    one.sequence_parallel = true;
    one.zero = 1;
    TrainingPlan split = one;
    split.ep = ep;
    const StepPrediction a = predict_step(m, kSystem, one), b = predict_step(m, kSystem, split);
    const double dropped = static_cast<double>(L * (E - E / ep) * 3 * h * (f / t));
    EXPECT_NEAR(a.memory.weights_bytes - b.memory.weights_bytes, 2 * dropped, 1) << ep;
    EXPECT_NEAR(a.memory.gradients_bytes - b.memory.gradients_bytes, 4 * dropped, 1) << ep;
    EXPECT_NEAR(a.memory.optimizer_bytes, b.memory.optimizer_bytes, 1) << ep;
    EXPECT_GT(b.time.ep_comm_s, 0);
    EXPECT_EQ(a.time.ep_comm_s, 0);
    EXPECT_DOUBLE_EQ(a.model_flop, b.model_flop);
  }
  // Folded (etp 1 × ep 8 on the stage's 2 × 8 GPUs): a GPU holds one whole expert of each layer where ep 1
  // holds half of each of the 8; the experts' state still shards over the 16 GPUs, so the optimizer's bytes
  // stay.
  TrainingPlan one = plan(t, 1, 8, 64, 4096);
  one.sequence_parallel = true;
  one.zero = 1;
  TrainingPlan folded = one;
  folded.ep = 8;
  folded.etp = 1;
  const StepPrediction a = predict_step(m, kSystem, one), b = predict_step(m, kSystem, folded);
  const double expert = static_cast<double>(3 * h * f);
  EXPECT_NEAR(a.memory.weights_bytes - b.memory.weights_bytes, 2 * L * (E * expert / t - expert), 1);
  EXPECT_NEAR(a.memory.optimizer_bytes, b.memory.optimizer_bytes, 1);
  // Megatron-Core refuses experts under tensor parallelism without sequence parallelism, and an ep that does
  // not divide the experts or the data-parallel GPUs.
  TrainingPlan bad = plan(t, 1, 8, 64, 4096);
  EXPECT_THROW(predict_step(m, kSystem, bad), phaze::InputError);
  bad.sequence_parallel = true;
  bad.ep = 16;
  EXPECT_THROW(predict_step(m, kSystem, bad), phaze::InputError);
}

// The routed experts' gradients and parameters go over the GPUs that hold the same experts (Megatron-Core's
// expert data-parallel group), the dense ones over the data-parallel group: folded as etp 1 × ep 8 on 2 × 8
// GPUs, the dense group is 8 GPUs 2 apart and the experts' 2 GPUs 8 apart.
TEST(Sharding, ExpertGradientsReduceOverTheGpusHoldingTheSameExperts) {
  const ModelSpec m = *phaze::model::find_preset("mixtral-8x7b");
  TrainingPlan pl = plan(2, 1, 8, 64, 4096);
  pl.sequence_parallel = true;
  pl.zero = 1;
  pl.ep = 8;
  pl.etp = 1;
  const auto costs = phaze::megatron::layer_costs(m, kSystem, pl);
  const auto& g = costs.graph;
  const double all =
      static_cast<double>(g.embedding.parameters + m.num_layers * g.transformer.parameters + g.head.parameters);
  const double experts = static_cast<double>(m.num_layers * g.transformer.routed_expert_parameters);
  const phaze::cost::DeviceGroup dense_group{8, 2}, expert_group{2, 8};
  const auto& net = kSystem.network;
  // FP32 gradients reduce-scattered, 16-bit parameters all-gathered (each half a ring all-reduce).
  const double expected = phaze::cost::reduce_scatter_s(net, dense_group, 4 * (all - experts)) +
                          phaze::cost::reduce_scatter_s(net, expert_group, 4 * experts) +
                          phaze::cost::reduce_scatter_s(net, dense_group, 2 * (all - experts)) +
                          phaze::cost::reduce_scatter_s(net, expert_group, 2 * experts);
  EXPECT_NEAR(predict_step(m, kSystem, pl, costs).time.dp_comm_s, expected, 1e-12);
}

TEST(Fp8, WeightCopiesAreTwoBytesPerFp8Parameter) {
  const ModelSpec m = *phaze::model::find_preset("llama2-7b");
  const double h = 4096, f = 11008, L = 32;
  const double fp8_parameters = L * (4 * h * h + 3 * h * f);
  TrainingPlan pl = plan(1, 1, 8, 64, 4096);
  pl.zero = 1;
  const double bf16 = predict_step(m, kSystem, pl).memory.weights_bytes;
  pl.fp8 = true;
  EXPECT_NEAR(predict_step(m, kSystem, pl).memory.weights_bytes - bf16, 2 * fp8_parameters, 1);
  pl.fp8_param_gather = true;
  EXPECT_NEAR(predict_step(m, kSystem, pl).memory.weights_bytes, bf16, 1);
}

// Blackwell's FP8 GEMMs read both layouts: one FP8 copy of each FP8 GEMM weight instead of Hopper's copy and
// transpose, so a byte less per FP8 parameter, and no cast at all of --fp8-param-gather's FP8 parameters.
TEST(Fp8, GpusThatReadBothLayoutsKeepOneCopy) {
  const ModelSpec m = *phaze::model::find_preset("llama2-7b");
  const double h = 4096, f = 11008, L = 32;
  const double fp8_parameters = L * (4 * h * h + 3 * h * f);
  TrainingPlan pl = plan(1, 1, 8, 64, 4096);
  pl.fp8 = true;
  phaze::hw::System transposing = kSystem, both = kSystem;
  std::get<phaze::hw::Gpu>(both.device).fp8_needs_transpose = false;
  EXPECT_NEAR(predict_step(m, transposing, pl).memory.weights_bytes - predict_step(m, both, pl).memory.weights_bytes,
              fp8_parameters, 1);
  pl.fp8_param_gather = true;
  const StepPrediction with_cast = predict_step(m, transposing, pl), without = predict_step(m, both, pl);
  EXPECT_NEAR(with_cast.memory.weights_bytes - without.memory.weights_bytes, fp8_parameters, 1);
  EXPECT_GT(with_cast.time.forward_s, without.time.forward_s);  // Hopper still makes the transposes
}

// The inputs of the FP8 GEMMs that the weight gradients need are kept in FP8: per layer and token, the QKV and
// FC1 inputs (h each) and the FC2 input (f) lose a byte; the attention output projection's input (h) gains one
// beside the 16-bit copy a fused attention kernel keeps.
TEST(Fp8, StoredActivationsShrinkByTheFp8Inputs) {
  const ModelSpec m = *phaze::model::find_preset("llama2-7b");
  const double h = 4096, f = 11008, L = 32, s = 4096;
  TrainingPlan pl = plan(1, 1, 1, 1, 4096);
  const double bf16 = predict_step(m, kSystem, pl).memory.activations_bytes;
  pl.fp8 = true;
  const double fp8 = predict_step(m, kSystem, pl).memory.activations_bytes;
  EXPECT_NEAR(bf16 - fp8, L * s * (2 * h + f - h), 1);
}

// FP8 changes the kernels, not the model: the FLOPs counted are the same, and the GEMMs run faster.
TEST(Fp8, SameFlopsFasterGemmsAndRefusedWithoutFp8TensorCores) {
  const ModelSpec m = *phaze::model::find_preset("llama2-7b");
  TrainingPlan pl = plan(1, 1, 8, 64, 4096);
  const StepPrediction bf16 = predict_step(m, kSystem, pl);
  pl.fp8 = true;
  const StepPrediction fp8 = predict_step(m, kSystem, pl);
  EXPECT_DOUBLE_EQ(fp8.model_flop, bf16.model_flop);
  EXPECT_LT(fp8.time.forward_s, bf16.time.forward_s);
  // No more than the FP8 tensor rate buys: twice the 16-bit rate.
  EXPECT_GT(fp8.time.iteration_s, bf16.time.iteration_s / 2);
  EXPECT_THROW(predict_step(m, phaze::hw::dgx_a100_system(true), pl), phaze::InputError);
  pl.bf16 = false;
  EXPECT_THROW(predict_step(m, kSystem, pl), phaze::InputError);  // Transformer Engine's recipe is BF16's
}

// Context parallelism over c splits each sequence: the model's FLOPs are those of the unsplit run (the
// causal half of s² per layer, whoever computes it), and with fused attention a rank stores the activations
// of s / c tokens.
TEST(ContextParallel, SplitsTheSequenceButNotTheModel) {
  const ModelSpec m = *phaze::model::find_preset("llama2-7b");
  const TrainingPlan whole = plan(1, 1, 1, 1, 16384);
  TrainingPlan split = plan(1, 4, 1, 1, 16384);
  const StepPrediction one = predict_step(m, kSystem, whole);
  const StepPrediction four = predict_step(m, kSystem, split);
  EXPECT_NEAR(four.model_flop / one.model_flop, 1, 1e-12);
  EXPECT_NEAR(four.model_full_attention_flop / one.model_full_attention_flop, 1, 1e-12);
  const StepPrediction quarter = predict_step(m, kSystem, plan(1, 1, 1, 1, 4096));
  EXPECT_NEAR(four.memory.activations_bytes / quarter.memory.activations_bytes, 1, 1e-12);
  EXPECT_EQ(split.gpus(), 4);
  split.flash_attention = false;
  EXPECT_THROW(predict_step(m, kSystem, split), phaze::InputError);  // Transformer Engine's CP is fused
  split = plan(1, 4, 1, 1, 16388);                                   // 2c chunks must split s evenly
  EXPECT_THROW(predict_step(m, kSystem, split), phaze::InputError);
}

// The p2p ring: c − 1 steps each carrying one rank's keys and values, b · (s/c) · 2 · g · d · 2 bytes (with g
// key/value heads of d), hidden behind the attention blocks; exposed whole when the link is slow enough that
// the blocks hide nothing of it.
TEST(ContextParallel, RingStepsCarryOneRanksKeysAndValues) {
  const ModelSpec m = *phaze::model::find_preset("llama2-7b");
  const phaze::hw::Gpu gpu = phaze::hw::h100_sxm();
  TrainingPlan pl = plan(1, 4, 1, 1, 32768);
  phaze::hw::Network slow = kSystem.network;
  for (phaze::hw::NetworkTier& tier : slow.tiers) {
    tier.bandwidth = 1e6;  // 1 MB/s: no block hides a step
    tier.efficiency = 1;
    tier.latency_s = 0;
  }
  const double kv_bytes = 2.0 * 1 * (32768 / 4) * 32 * 128 * 2;
  const auto a = phaze::megatron::context_parallel_attention_s(gpu, slow, pl, 32, 128, kv_bytes,
                                                               phaze::model::Direction::Forward, true);
  const double step_s = kv_bytes / 1e6;
  // Three transfers behind the causal block of the rank's own 8,192 tokens and two unmasked half blocks.
  const double diagonal_s =
      phaze::cost::gpu_flash_attention_s(gpu, 32, 32768 / 4, 128, 2, phaze::model::Direction::Forward, true);
  const double half_block_s =
      phaze::cost::gpu_flash_attention_s(gpu, 32, 32768 / 4, 128, 2, phaze::model::Direction::Forward, false) / 2;
  EXPECT_NEAR(a.compute_s, diagonal_s + 3 * half_block_s, 1e-12);
  EXPECT_NEAR(a.exposed_comm_s, 3 * step_s - diagonal_s - 2 * half_block_s, 1e-9 * step_s);
  const auto fast = phaze::megatron::context_parallel_attention_s(gpu, kSystem.network, pl, 32, 128, kv_bytes,
                                                                  phaze::model::Direction::Forward, true);
  EXPECT_EQ(fast.exposed_comm_s, 0);  // NVLink: every step hides behind a block
  EXPECT_NEAR(fast.compute_s, a.compute_s, 1e-15);
  (void)m;
}

}  // namespace
