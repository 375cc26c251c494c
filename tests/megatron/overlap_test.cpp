// Communication overlap as Megatron-LM does it (docs/gpu.md), against closed forms: Transformer Engine's
// tensor-parallel overlap exposes one pipeline chunk of each reduce-scatter and one ring step of each
// all-gather when the GEMMs are long enough; the data-parallel overlaps leave one bucket exposed.

#include <gtest/gtest.h>

#include "cost/collective_time.h"
#include "hw/system.h"
#include "megatron/layer_time.h"
#include "megatron/training_step.h"
#include "model/layer_graph.h"
#include "model/presets.h"
#include "util/input_error.h"

namespace {

using phaze::megatron::predict_step;
using phaze::megatron::TrainingPlan;

TrainingPlan base_plan(int64_t t, int64_t d) {
  TrainingPlan p;
  p.tp = t;
  p.dp = d;
  p.micro_batch = 1;
  p.global_batch = d;
  p.seq = 4096;
  p.sequence_parallel = t > 1;
  p.flash_attention = true;
  p.recompute = phaze::megatron::Recompute::None;
  return p;
}

TEST(Overlap, TensorParallelCollectivesExposeOneChunkAndOneRingStep) {
  // GPT-3's layer at t = 4 on one DGX H100: each collective takes far less than its neighbouring GEMMs, so
  // only (1/4 + 1/t) of each half stays exposed, here a quarter of the collective.
  const auto spec = phaze::model::megatron_gpt("gpt", "GPT-3 shape", 2, 12288, 96, 4096);
  const phaze::hw::System system = phaze::hw::dgx_h100_system();
  TrainingPlan pl = base_plan(4, 1);
  const auto graph =
      phaze::model::build_layer_graph(spec, phaze::model::Shape{pl.seq, 1, pl.tp}, phaze::model::Precision{}, "gpt");
  double collectives = 0;
  for (const auto& op : graph.transformer.forward.ops)
    if (op.engine == phaze::model::Engine::Comm)
      collectives += phaze::cost::all_reduce_s(system.network, phaze::cost::DeviceGroup{op.collective->ranks, 1},
                                               static_cast<double>(op.collective->bytes));
  ASSERT_GT(collectives, 0);
  const auto& gpu = phaze::hw::gpu_of(system);
  const auto plain = phaze::megatron::gpu_layer_time(graph.transformer, spec, pl, gpu, system.network);
  pl.tp_comm_overlap = true;
  const auto overlapped = phaze::megatron::gpu_layer_time(graph.transformer, spec, pl, gpu, system.network);
  EXPECT_NEAR(plain.forward.tp_comm_s, collectives, 1e-12);
  EXPECT_NEAR(overlapped.forward.tp_comm_s, collectives / 2 * (1.0 / 4 + 1.0 / 4), 1e-12);
  // The hidden three quarters of each reduce-scatter (half the collective) ran on 16 of the 132 SMs.
  EXPECT_NEAR(overlapped.forward.compute_s - plain.forward.compute_s, 0.75 * collectives / 2 * 16 / 132, 1e-12);
}

TEST(Overlap, TensorParallelOverlapNeedsSequenceParallelism) {
  const auto spec = phaze::model::megatron_gpt("gpt", "GPT", 2, 4096, 32, 4096);
  TrainingPlan pl = base_plan(4, 1);
  pl.sequence_parallel = false;
  pl.tp_comm_overlap = true;
  EXPECT_THROW(phaze::megatron::validate(pl, spec), phaze::InputError);
  pl = base_plan(1, 8);
  pl.overlap_param_gather = true;  // without the distributed optimizer
  EXPECT_THROW(phaze::megatron::validate(pl, spec), phaze::InputError);
}

TEST(Overlap, DataParallelOverlapsLeaveOneBucketExposed) {
  // Llama-2-7B-shaped model at d = 64 over 8 DGX H100s (t 1): 6.5 B parameters in buckets of 64 M
  // (max(40 M, 1 M · 64)). With the distributed optimizer the reduce-scatter and the all-gather each take
  // half a ring all-reduce of their bytes; a long backward and forward pass hide all but one bucket of each.
  const auto spec = phaze::model::megatron_gpt("gpt", "GPT", 32, 4096, 32, 4096);
  const phaze::hw::System system = phaze::hw::dgx_h100_system();
  TrainingPlan pl = base_plan(1, 64);
  pl.micro_batch = 8;  // a long pass per micro-batch
  pl.global_batch = 512;
  pl.bf16 = true;
  pl.zero = 1;
  const auto plain = predict_step(spec, system, pl);
  pl.overlap_dp = true;
  pl.overlap_param_gather = true;
  const auto overlapped = predict_step(spec, system, pl);
  // Closed form of the exposed part: the stage's parameters P, one bucket's share 64e6 / P of each half.
  const auto graph = phaze::model::build_layer_graph(spec, phaze::model::Shape{pl.seq, pl.micro_batch, 1},
                                                     phaze::model::Precision{}, "gpt");
  const double params = static_cast<double>(graph.embedding.parameters + 32 * graph.transformer.parameters +
                                            graph.head.parameters - graph.head.tied_copy_parameters);
  const phaze::cost::DeviceGroup group{64, 1};
  const double gradients = phaze::cost::all_reduce_s(system.network, group, params * 4) / 2;
  const double parameters = phaze::cost::all_reduce_s(system.network, group, params * 2) / 2;
  EXPECT_NEAR(plain.time.dp_comm_s, gradients + parameters, 1e-9);
  EXPECT_NEAR(overlapped.time.dp_comm_s, 64e6 / params * (gradients + parameters), 1e-9);
}

}  // namespace
