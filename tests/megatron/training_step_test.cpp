// A Megatron-LM iteration on a GPU system against published closed forms: the FLOP count of Narayanan et al.
// (SC'21, eq. 3) and Megatron-Bridge's model FLOPs per token, the activation memory of Korthikanti et al. (2022, Table
// 2), Megatron's bytes per parameter with and without the distributed optimizer, and the 1F1B bubble that does not grow
// with the micro-batches.

#include "megatron/training_step.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <variant>

#include "hw/gpu.h"
#include "hw/system.h"
#include "model/hf_config.h"
#include "model/presets.h"
#include "util/input_error.h"

namespace {

using phaze::InputError;
using phaze::megatron::predict_step;
using phaze::megatron::Recompute;
using phaze::megatron::StepPrediction;
using phaze::megatron::TrainingPlan;
using phaze::model::ModelSpec;

ModelSpec gpt(int64_t layers, int64_t hidden, int64_t heads, int64_t seq) {
  return phaze::model::megatron_gpt("gpt", "test GPT", layers, hidden, heads, seq);
}

TrainingPlan plan(int64_t t, int64_t p, int64_t d, int64_t b, int64_t global, int64_t seq) {
  TrainingPlan pl;
  pl.tp = t;
  pl.pp = p;
  pl.dp = d;
  pl.micro_batch = b;
  pl.global_batch = global;
  pl.seq = seq;
  return pl;
}

const phaze::hw::System kSystem = phaze::hw::dgx_a100_system(true);

TEST(TrainingStep, FlopsAreNarayanansEquationThree) {
  // A materialised attention core executes every s × s score: the hardware FLOPs are Narayanan's
  // F = 96 B s l h² (1 + s/(6h) + V/(16 l h)) with full recomputation and 72 B s l h² (1 + s/(6h) + V/(12 l h))
  // without; V the padded vocabulary Megatron allocates. A causal model needs half the attention products,
  // so its model FLOPs have s/(12h) for s/(6h).
  for (int64_t t : {1, 8}) {
    const ModelSpec m = gpt(24, 2048, 16, 2048);
    TrainingPlan pl = plan(t, 2, 2, 2, 64, 2048);
    const double V = static_cast<double>(phaze::model::padded_vocab(m, t));
    const double B = 64, s = 2048, l = 24, h = 2048;
    const StepPrediction full = predict_step(m, kSystem, pl);
    EXPECT_NEAR(full.hardware_flop / (96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h))), 1, 1e-12);
    EXPECT_NEAR(full.model_flop / (72 * B * s * l * h * h * (1 + s / (12 * h) + V / (12 * l * h))), 1, 1e-12);
    pl.recompute = Recompute::None;
    EXPECT_NEAR(
        predict_step(m, kSystem, pl).hardware_flop / (72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h))), 1,
        1e-12);
    // A fused kernel runs the causal half, recomputing Q·Kᵀ backward: 4 B s² h · ½ · (2 + 5) per layer
    // where the materialised core has 4 B s² h · (2 + 4) / 2 · 2.
    pl.flash_attention = true;
    const double attention_materialised = 12 * B * s * s * h * l, attention_fused = 7 * B * s * s * h * l;
    EXPECT_NEAR(
        predict_step(m, kSystem, pl).hardware_flop /
            (72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h)) - attention_materialised + attention_fused),
        1, 1e-12);
  }
}

// Megatron-LM's num_floating_point_operations (since March 2025) and Megatron-Bridge count, per trained token,
// 12·h·f·γ·L + 12·L·h·q·(1 + g/a) + 6·L·q·s + 6·h·V with γ = 3/2 for a gated MLP and the attention core over
// the causal half (6·L·q·s); their performance pages' TFLOP/s over tokens/s give 51.47 GFLOP per token for
// Llama-3-8B and 449.2 for Llama-3-70B at s = 8192. The model count is theirs, flash attention or not.
TEST(TrainingStep, ModelFlopsAreMegatronBridgesCount) {
  struct Case {
    const char* file;
    double published_gflop_per_token;
    double rounding;  // half a unit of the published figure's last digit
  };
  for (const Case& c :
       {Case{"hf/llama-3-8b/config.json", 51.47, 0.005}, Case{"hf/llama-3-70b/config.json", 449.2, 0.05}}) {
    const ModelSpec m = phaze::model::read_hf_config(fmt::format("{}/{}", PHAZE_TEST_DATA, c.file));
    const double h = static_cast<double>(m.hidden), f = static_cast<double>(m.ffn),
                 L = static_cast<double>(m.num_layers), a = static_cast<double>(m.heads),
                 g = static_cast<double>(m.kv_heads), q = h, s = 8192, V = static_cast<double>(m.vocab);
    const double formula = 12 * h * f * 1.5 * L + 12 * L * h * q * (1 + g / a) + 6 * L * q * s + 6 * h * V;
    for (bool flash : {false, true}) {
      TrainingPlan pl = plan(1, 1, 1, 1, 2, 8192);
      pl.flash_attention = flash;
      pl.recompute = Recompute::None;
      const double per_token = predict_step(m, kSystem, pl).model_flop / (2 * s);
      EXPECT_NEAR(per_token / formula, 1, 1e-12) << c.file;
      EXPECT_NEAR(per_token / 1e9, c.published_gflop_per_token, c.rounding) << c.file;
    }
  }
}

// The model's FLOPs never exceed what the kernels execute, and no kernel runs faster than the peak: over every
// GPU system preset, sequence lengths from 512 to 131,072, flash attention on and off, every recomputation,
// sequence parallelism, context parallelism and FP8 (where the GPU has it), MFU ≤ 1 and TFLOP/s per GPU ≤ the
// peak, the 16-bit one in BF16 and the FP8 one with FP8 GEMMs.
TEST(TrainingStep, UtilisationNeverExceedsThePeak) {
  int checked = 0;
  for (const std::string& system_name : phaze::hw::system_preset_names()) {
    const phaze::hw::System system = *phaze::hw::find_system_preset(system_name);
    if (!std::holds_alternative<phaze::hw::Gpu>(system.device)) continue;  // Megatron-LM runs on GPUs
    const phaze::hw::Gpu& gpu = phaze::hw::gpu_of(system);
    ASSERT_LT(phaze::hw::mfu_ceiling(gpu), 1);
    for (const char* model_name : {"llama2-7b", "gpt2-xl", "bert-large"})
      for (int64_t seq : {512, 2048, 8192, 32768, 131072})
        for (int64_t t : {1, 8})
          for (bool flash : {false, true})
            for (Recompute recompute : {Recompute::None, Recompute::Selective, Recompute::Full})
              for (bool sp : {false, true})
                for (int64_t cp : {1, 4})
                  for (bool fp8 : {false, true}) {
                    ModelSpec m = *phaze::model::find_preset(model_name);
                    if ((sp && t == 1) || m.heads % t != 0 || (cp > 1 && !flash)) continue;
                    if (fp8 && phaze::hw::peak_fp8_flop_per_s(gpu) == 0) continue;
                    // Learned positions as long as the sequence: the shape, not the table, is what is swept.
                    if (m.max_positions > 0) m.max_positions = std::max(m.max_positions, seq);
                    TrainingPlan pl = plan(t, 1, 1, 1, 8, seq);
                    pl.flash_attention = flash;
                    pl.recompute = recompute;
                    pl.sequence_parallel = sp;
                    pl.cp = cp;
                    pl.fp8 = fp8;
                    pl.bf16 = pl.bf16 || fp8;
                    const StepPrediction p = predict_step(m, system, pl);
                    SCOPED_TRACE(testing::Message()
                                 << system_name << " " << model_name << " s " << seq << " t " << t << " flash " << flash
                                 << " recompute " << static_cast<int>(recompute) << " sp " << sp << " cp " << cp
                                 << " fp8 " << fp8);
                    // The ceiling is a share of the 16-bit peak: with FP8, the FP8 GEMMs' efficiency of the
                    // FP8 peak.
                    const double ceiling = phaze::hw::mfu_ceiling(gpu, fp8);
                    const double peak = phaze::hw::peak_tensor_flop_per_s(gpu);
                    EXPECT_GT(p.mfu, 0);
                    EXPECT_LE(p.mfu, ceiling * (1 + 1e-12));
                    EXPECT_LE(p.mfu, p.mfu_ceiling * (1 + 1e-12));
                    EXPECT_LE(p.flop_per_s_per_gpu, ceiling * peak * (1 + 1e-12));
                    EXPECT_LE(p.model_flop, p.hardware_flop);
                    ++checked;
                  }
  }
  EXPECT_GT(checked, 500);
}

// Mistral's sliding window of 4,096 keys: sequences past the window train (they were refused before), the
// fused kernel computes only the band of blocks the window reaches, and the counts stay under the ceiling.
TEST(TrainingStep, SlidingWindowAttentionTrainsPastTheWindow) {
  const ModelSpec m = phaze::model::load_model(std::string(PHAZE_TEST_DATA) + "/hf/mistral-7b-v0.1/config.json");
  ASSERT_EQ(m.sliding_window, 4096);
  const phaze::hw::System system = phaze::hw::dgx_h100_system();
  TrainingPlan pl = plan(8, 1, 1, 1, 8, 32768);
  pl.flash_attention = true;
  pl.sequence_parallel = true;
  pl.recompute = Recompute::Selective;
  const StepPrediction windowed = predict_step(m, system, pl);
  ModelSpec full = m;
  full.sliding_window = 0;
  const StepPrediction causal = predict_step(full, system, pl);
  EXPECT_LT(windowed.time.iteration_s, causal.time.iteration_s);
  EXPECT_LT(windowed.model_flop, causal.model_flop);
  EXPECT_LE(windowed.mfu, phaze::hw::mfu_ceiling(phaze::hw::gpu_of(system)));
  EXPECT_LE(windowed.model_flop, windowed.hardware_flop);
}

// Megatron-LM's --decoder-first-pipeline-num-layers and --decoder-last-pipeline-num-layers: naming the even
// split changes nothing; a first stage of one layer leaves the rest to the last stage, whose weights are
// then 2 bytes per parameter of L − 1 GPT layers (12h² + 13h each) and the head (its tied copy of the
// V × h embedding and the final LayerNorm's 2h).
TEST(TrainingStep, UnevenStagesHoldTheirOwnLayers) {
  const int64_t L = 8, h = 1024;
  const ModelSpec m = gpt(L, h, 16, 1024);
  TrainingPlan even = plan(1, 4, 1, 1, 8, 1024);
  TrainingPlan named = even;
  named.first_stage_layers = named.last_stage_layers = 2;
  EXPECT_EQ(predict_step(m, kSystem, named).time.iteration_s, predict_step(m, kSystem, even).time.iteration_s);

  TrainingPlan two = plan(1, 2, 1, 1, 8, 1024);
  two.first_stage_layers = 1;
  const StepPrediction p = predict_step(m, kSystem, two);
  const double V = static_cast<double>(phaze::model::padded_vocab(m, 1)), hd = static_cast<double>(h);
  EXPECT_EQ(p.memory.stage, 1);
  EXPECT_NEAR(p.memory.weights_bytes, 2 * ((L - 1) * (12 * hd * hd + 13 * hd) + V * hd + 2 * hd), 1e-6);
  // The longer last stage sets the pipeline: slower than the even split.
  EXPECT_GT(p.time.iteration_s, predict_step(m, kSystem, plan(1, 2, 1, 1, 8, 1024)).time.iteration_s);
}

TEST(TrainingStep, UnevenStagesThatDoNotShareEvenlyNameTheOption) {
  const ModelSpec m = gpt(126, 1024, 16, 1024);
  TrainingPlan pl = plan(1, 16, 1, 1, 16, 1024);
  auto message = [&](const TrainingPlan& p) {
    try {
      predict_step(m, kSystem, p);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message(pl).find("--pp = 16"), std::string::npos);  // 126 layers do not split evenly in 16
  pl.first_stage_layers = 7;                                    // 119 over 15 stages: no
  EXPECT_NE(message(pl).find("--decoder-first-pipeline-num-layers = 7"), std::string::npos);
  pl.last_stage_layers = 7;  // 112 over 14 stages: 8 each, as Llama 3 405B trained
  EXPECT_EQ(message(pl), "accepted");
  pl.vp = 2;  // 7 layers do not split into 2 chunks
  EXPECT_NE(message(pl).find("--vp = 2"), std::string::npos);
  TrainingPlan one = plan(1, 1, 1, 1, 16, 1024);
  one.last_stage_layers = 3;
  EXPECT_NE(message(one).find("needs a pipeline"), std::string::npos);
}

// Megatron-LM's --account-for-embedding-in-pipeline-split and --account-for-loss-in-pipeline-split: Llama 3
// 405B's 126 layers and the two counted with them make 128 slots, 8 a stage on 16 stages, so the first and
// the last stage hold 7 transformer layers; the 4 chunks of 2 slots a stage interleave (v = 4), which
// 7-layer stages named by their counts cannot. The same stages as the named counts at v = 1.
TEST(TrainingStep, TheEmbeddingAndTheLossCountAsLayersOfTheSplit) {
  const ModelSpec m = gpt(126, 1024, 16, 1024);
  TrainingPlan split = plan(1, 16, 1, 1, 16, 1024);
  split.embedding_in_pipeline_split = split.loss_in_pipeline_split = true;
  EXPECT_EQ(phaze::megatron::stage_layers(split, m, 0), 7);
  EXPECT_EQ(phaze::megatron::stage_layers(split, m, 1), 8);
  EXPECT_EQ(phaze::megatron::stage_layers(split, m, 15), 7);
  TrainingPlan named = plan(1, 16, 1, 1, 16, 1024);
  named.first_stage_layers = named.last_stage_layers = 7;
  EXPECT_EQ(predict_step(m, kSystem, split).time.iteration_s, predict_step(m, kSystem, named).time.iteration_s);
  split.vp = 4;
  EXPECT_NO_THROW(predict_step(m, kSystem, split));
  split.vp = 3;  // 128 slots do not split into 48 chunks
  EXPECT_THROW(predict_step(m, kSystem, split), InputError);
  split.vp = 1;
  split.first_stage_layers = 7;  // Megatron-LM refuses both ways at once
  EXPECT_THROW(predict_step(m, kSystem, split), InputError);
  // Only the loss: 127 slots split over 127 stages of one layer, the last holding none.
  TrainingPlan loss_only = plan(1, 127, 1, 1, 127, 1024);
  loss_only.loss_in_pipeline_split = true;
  EXPECT_THROW(predict_step(gpt(126, 1024, 16, 1024), kSystem, loss_only), InputError);
}

TEST(TrainingStep, ActivationMemoryFollowsKorthikanti) {
  // One stage, one micro-batch in flight: the transformer layers' part of the activation memory per layer is
  // s b h (10 + 24/t + 5 a s/(h t)) without sequence parallelism and s b h (34 + 5 a s/h)/t with it;
  // selective recomputation removes the 5 a s² b / t of the attention core from every layer but the one being
  // recomputed.
  const int64_t L = 4, h = 1024, a = 16, s = 1024, b = 2, t = 4;
  const ModelSpec m = gpt(L, h, a, s);
  const double sbh = static_cast<double>(s * b * h);
  auto activations = [&](bool sp, Recompute r) {
    TrainingPlan pl = plan(t, 1, 1, b, b, s);
    pl.sequence_parallel = sp;
    pl.recompute = r;
    return predict_step(m, kSystem, pl).memory.activations_bytes;
  };
  const double core = 5.0 * a * s * s * b / t;
  EXPECT_NEAR(activations(false, Recompute::None) - activations(true, Recompute::None), L * 10 * sbh * (1 - 1.0 / t),
              1e-3);
  EXPECT_NEAR(activations(false, Recompute::None) - activations(false, Recompute::Selective), (L - 1) * core, 1e-3);
  EXPECT_NEAR(activations(true, Recompute::None) - activations(true, Recompute::Selective), (L - 1) * core, 1e-3);
  // Full recomputation keeps 2 s b h per layer (/t with sequence parallelism) plus one layer being recomputed.
  const double none = activations(false, Recompute::None), full = activations(false, Recompute::Full);
  const double per_layer = sbh * (10 + 24.0 / t) + core;
  EXPECT_NEAR(none - full, L * per_layer - (L * 2 * sbh + per_layer), 1e-3);
}

// Megatron-LM's loss without --cross-entropy-loss-fusion, counted from its vocab_parallel_cross_entropy: the
// 16-bit logits cast to FP32, then max, subtract, exp, sum and divide as kernels of their own, 6 + 4 + 8 + 8 +
// 4 + 8 bytes per logit forward, and 8 + 6 backward (scale in place, cast back); the FP32 softmax kept for the
// backward pass, 2 bytes per logit more than 16 bits. It replaces the fused loss's kernels (the row maximum
// too, at t > 1) and nothing else.
TEST(TrainingStep, UnfusedLossIsMegatronLmsKernelSequence) {
  const ModelSpec m = gpt(2, 1024, 16, 1024);
  const phaze::hw::System h100 = phaze::hw::dgx_h100_system();
  const phaze::hw::Gpu gpu = phaze::hw::gpu_of(h100);
  const auto stream = [&](double bytes) {
    return std::max(bytes / (gpu.hbm_bandwidth * gpu.memory_efficiency), gpu.kernel_launch_s);
  };
  for (int64_t t : {1, 2}) {
    TrainingPlan fused = plan(t, 1, 1, 2, 2, 1024);
    fused.flash_attention = true;
    TrainingPlan unfused = fused;
    unfused.unfused_loss = true;
    const auto a = phaze::megatron::layer_costs(m, h100, fused);
    const auto b = phaze::megatron::layer_costs(m, h100, unfused);
    const double logits = 2.0 * 1024 * (static_cast<double>(phaze::model::padded_vocab(m, t)) / static_cast<double>(t));
    EXPECT_EQ(b.loss_logits, logits);
    double fused_loss_forward = 0, fused_loss_backward = 0;
    for (const auto& op : a.graph.head.forward.ops)
      if (op.id.rfind("H6", 0) == 0 && op.engine == phaze::model::Engine::Vector && op.id != "H6f")
        fused_loss_forward += stream(static_cast<double>(op.read_bytes + op.write_bytes));
    for (const auto& op : a.graph.head.backward.ops)
      for (const auto& pass : op.passes)
        if (pass.kind == phaze::model::VectorKind::CrossEntropy)
          fused_loss_backward += stream(static_cast<double>(op.read_bytes + op.write_bytes));
    double forward = 0;
    for (double bytes : {6, 4, 8, 8, 4, 8}) forward += stream(bytes * logits);
    const double backward = stream(8 * logits) + stream(6 * logits);
    EXPECT_NEAR(b.head.forward.compute_s - a.head.forward.compute_s, forward - fused_loss_forward, 1e-12) << t;
    EXPECT_NEAR(b.head.backward.compute_s - a.head.backward.compute_s, backward - fused_loss_backward, 1e-12) << t;
    EXPECT_EQ(b.transformer.forward.compute_s, a.transformer.forward.compute_s);
    EXPECT_NEAR(predict_step(m, h100, unfused, b).memory.activations_bytes -
                    predict_step(m, h100, fused, a).memory.activations_bytes,
                2 * logits, 1e-3);
  }
}

TEST(TrainingStep, BytesPerParameterAsMegatronDocumentsThem) {
  // fp16 parameters and gradients with Adam: 20 bytes per parameter, 4 + 16/d with the distributed optimizer.
  const ModelSpec m = gpt(8, 1024, 16, 1024);
  TrainingPlan pl = plan(1, 1, 8, 1, 64, 1024);
  const StepPrediction plain = predict_step(m, kSystem, pl);
  pl.zero = 1;
  const StepPrediction sharded = predict_step(m, kSystem, pl);
  const double params = plain.memory.weights_bytes / 2;
  const auto state = [](const StepPrediction& p) {
    return p.memory.weights_bytes + p.memory.gradients_bytes + p.memory.optimizer_bytes;
  };
  EXPECT_NEAR(state(plain) / params, 20, 1e-9);
  EXPECT_NEAR(state(sharded) / params, 4 + 16.0 / 8, 1e-9);
  // BF16 parameters with FP32 gradients: 18 bytes, 6 + 12/d with the distributed optimizer.
  pl.bf16 = true;
  EXPECT_NEAR(state(predict_step(m, kSystem, pl)) / params, 6 + 12.0 / 8, 1e-9);
  pl.zero = 0;
  EXPECT_NEAR(state(predict_step(m, kSystem, pl)) / params, 18, 1e-9);
}

TEST(TrainingStep, Bf16ReducesGradientsInFp32) {
  // Megatron-LM accumulates and all-reduces BF16 runs' gradients in FP32: twice FP16's bytes, so on a
  // bandwidth-bound ring (1.3 B parameters over 16 GPUs of two nodes) about twice the time.
  const ModelSpec m = gpt(24, 2048, 16, 2048);
  TrainingPlan pl = plan(1, 1, 16, 1, 16, 2048);
  const double fp16 = predict_step(m, kSystem, pl).time.dp_comm_s;
  pl.bf16 = true;
  const double bf16 = predict_step(m, kSystem, pl).time.dp_comm_s;
  EXPECT_GT(bf16 / fp16, 1.95);
  EXPECT_LT(bf16 / fp16, 2.0);
}

TEST(TrainingStep, PeakAddsRuntimeCommunicatorsAndAllocatorAndKeepsTheReserveFree) {
  // t 2 · p 2 · d 2: three NCCL communicators besides the runtime's fixed share; the allocator's overhead
  // on all the tensors, as it was measured.
  const ModelSpec m = gpt(8, 1024, 16, 1024);
  phaze::hw::System system = kSystem;
  phaze::hw::Gpu gpu = phaze::hw::gpu_of(system);
  gpu.runtime_memory_bytes = 1000;
  gpu.communicator_memory_bytes = 100;
  gpu.allocator_overhead = 0.5;
  system.device = gpu;
  TrainingPlan pl = plan(2, 2, 2, 1, 16, 1024);
  const StepPrediction p = predict_step(m, system, pl);
  EXPECT_EQ(p.memory.runtime_bytes, 1300);
  const double tensors =
      p.memory.weights_bytes + p.memory.gradients_bytes + p.memory.optimizer_bytes + p.memory.activations_bytes;
  EXPECT_NEAR(p.memory.allocator_bytes, 0.5 * tensors, 1e-3);
  EXPECT_NEAR(p.memory.peak_bytes, 1.5 * tensors + 1300, 1e-3);
  // A reserve that leaves the peak exactly room still fits; one byte more does not.
  pl.memory_reserve_bytes = gpu.hbm_bytes - static_cast<int64_t>(std::ceil(p.memory.peak_bytes));
  EXPECT_TRUE(predict_step(m, system, pl).memory.fits);
  pl.memory_reserve_bytes += 1;
  EXPECT_FALSE(predict_step(m, system, pl).memory.fits);
}

TEST(TrainingStep, OneFOneBBubbleDoesNotGrowWithMicroBatches) {
  // Narayanan et al.: the 1F1B bubble is (p − 1) stage times whatever m is; more micro-batches only add
  // steady-state time.
  const ModelSpec m = gpt(16, 2048, 16, 1024);
  const StepPrediction few = predict_step(m, kSystem, plan(2, 4, 1, 1, 8, 1024));
  const StepPrediction many = predict_step(m, kSystem, plan(2, 4, 1, 1, 32, 1024));
  EXPECT_GT(few.time.bubble_s, 0);
  EXPECT_NEAR(few.time.bubble_s, many.time.bubble_s, 1e-12);
  // Interleaving with v chunks divides the fill and drain by about v (the sends grow v-fold).
  TrainingPlan interleaved = plan(2, 4, 1, 1, 32, 1024);
  interleaved.vp = 2;
  const double ratio = predict_step(m, kSystem, interleaved).time.bubble_s / many.time.bubble_s;
  EXPECT_GT(ratio, 0.5);
  EXPECT_LT(ratio, 0.6);
}

TEST(TrainingStep, BreakdownSumsToTheIteration) {
  const ModelSpec m = gpt(16, 2048, 16, 1024);
  TrainingPlan pl = plan(2, 4, 2, 2, 64, 1024);
  const StepPrediction p = predict_step(m, kSystem, pl);
  const auto& t = p.time;
  EXPECT_NEAR(
      t.forward_s + t.backward_s + t.recompute_s + t.tp_comm_s + t.pp_comm_s + t.bubble_s + t.dp_comm_s + t.optimizer_s,
      t.iteration_s, 1e-9 * t.iteration_s);
}

TEST(TrainingStep, ImpossiblePlansNameTheOption) {
  const ModelSpec m = gpt(24, 1024, 16, 1024);
  auto message = [&](TrainingPlan pl) {
    try {
      predict_step(m, kSystem, pl);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(plan(3, 1, 1, 1, 8, 1024)).find("--tp"), std::string::npos);  // 3 ∤ 16 heads
  EXPECT_NE(message(plan(1, 5, 1, 1, 8, 1024)).find("--pp"), std::string::npos);  // 5 ∤ 24 layers
  EXPECT_NE(message(plan(1, 1, 3, 1, 8, 1024)).find("--global-batch"), std::string::npos);
  TrainingPlan v = plan(1, 2, 1, 1, 3, 1024);
  v.vp = 2;  // 3 micro-batches, not a multiple of p = 2
  EXPECT_NE(message(v).find("--vp"), std::string::npos);
  TrainingPlan sp = plan(1, 1, 1, 1, 8, 1024);
  sp.sequence_parallel = true;
  EXPECT_NE(message(sp).find("--sequence-parallel"), std::string::npos);
  EXPECT_THROW(predict_step(m, phaze::hw::tpuv4_like_system(), plan(1, 1, 1, 1, 8, 1024)), InputError);
}

}  // namespace
