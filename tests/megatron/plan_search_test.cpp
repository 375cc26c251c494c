// `phaze plan`'s exhaustive search against a brute force that tries every integer degree and keeps what
// Megatron-LM accepts.

#include "megatron/plan_search.h"

#include <gtest/gtest.h>

#include <limits>

#include "model/presets.h"
#include "util/input_error.h"

namespace {

using phaze::megatron::Recompute;
using phaze::megatron::TrainingPlan;

TEST(GpuPlanSearch, FindsTheBruteForceOptimumAndCountsEveryPlan) {
  const auto spec = phaze::model::megatron_gpt("gpt", "test GPT", 8, 1024, 8, 1024);
  // An H100 system, so that FP8 is tried too; fused attention, so that context parallelism is; 8 layers, so
  // that a split counting the embedding and the loss (10 slots) gives 2 stages of 5 (v = 1 or 5) besides the
  // even ones.
  const phaze::hw::System system = phaze::hw::dgx_h100_system();
  for (int64_t gpus : {4, 8, 16}) {
    phaze::megatron::GpuPlanQuestion q;
    q.gpus = gpus;
    q.global_batch = 16;
    q.seq = 1024;
    q.top = 3;
    q.features = phaze::megatron::current_practice();
    q.try_fp8 = true;
    const auto answer = phaze::megatron::search_gpu_plans(spec, system, q);

    int64_t valid = 0, fitting = 0;
    double best = std::numeric_limits<double>::infinity();
    for (int64_t t = 1; t <= gpus; ++t)
      for (int64_t c = 1; c <= gpus; ++c)
        for (int64_t p = 1; p <= gpus; ++p)
          for (int64_t d = 1; d <= gpus; ++d) {
            if (t * c * p * d != gpus) continue;
            for (int64_t b = 1; b <= q.global_batch; ++b)
              for (int64_t v = 1; v <= 8; ++v)
                for (bool sp : {false, true})
                  for (Recompute r : {Recompute::None, Recompute::Selective, Recompute::Full})
                    for (int64_t zero = 0; zero <= 3; ++zero)
                      for (bool fp8 : {false, true})
                        for (bool counted : {false, true}) {
                          if (zero > 0 && d * c == 1) continue;       // nothing to shard: the same plan as without
                          if (counted && p == 1) continue;            // one stage: the same layers as without
                          if (counted && p == 2 && v == 1) continue;  // two stages of L/2: the even split
                          TrainingPlan pl = q.features;
                          pl.tp = t, pl.cp = c, pl.pp = p, pl.dp = d, pl.vp = v, pl.micro_batch = b;
                          pl.global_batch = q.global_batch, pl.seq = q.seq;
                          pl.sequence_parallel = sp, pl.recompute = r, pl.zero = zero, pl.fp8 = fp8;
                          pl.embedding_in_pipeline_split = pl.loss_in_pipeline_split = counted;
                          try {
                            const auto prediction = phaze::megatron::predict_step(spec, system, pl);
                            ++valid;
                            if (!prediction.memory.fits) continue;
                            ++fitting;
                            best = std::min(best, prediction.time.iteration_s);
                          } catch (const phaze::InputError&) {
                          }
                        }
          }
    EXPECT_EQ(answer.evaluated, valid) << gpus;
    EXPECT_EQ(answer.fitting, fitting) << gpus;
    ASSERT_FALSE(answer.best.empty());
    EXPECT_DOUBLE_EQ(answer.best.front().time.iteration_s, best) << gpus;
    for (size_t i = 1; i < answer.best.size(); ++i)
      EXPECT_LE(answer.best[i - 1].time.iteration_s, answer.best[i].time.iteration_s);
  }
}

// A mixture of experts: every expert-parallel and expert tensor-parallel width is tried too, and
// Megatron-Core's rule that experts under tensor parallelism need sequence parallelism holds.
TEST(GpuPlanSearch, ExpertParallelWidthsAgainstTheBruteForce) {
  auto spec = phaze::model::megatron_gpt("moe", "test mixture of experts", 4, 1024, 8, 1024);
  spec.experts = 8;
  spec.experts_per_token = 2;
  spec.expert_ffn = 1024;
  const phaze::hw::System system = phaze::hw::dgx_h100_system();
  for (int64_t gpus : {4, 8}) {
    phaze::megatron::GpuPlanQuestion q;
    q.gpus = gpus;
    q.global_batch = 8;
    q.seq = 1024;
    q.features = phaze::megatron::current_practice();
    q.zero_stages = {0, 1};
    q.context_widths = {1};
    q.try_split_accounting = false;
    const auto answer = phaze::megatron::search_gpu_plans(spec, system, q);
    int64_t valid = 0;
    double best = std::numeric_limits<double>::infinity();
    for (int64_t t = 1; t <= gpus; ++t)
      for (int64_t p = 1; p <= gpus; ++p)
        for (int64_t ep = 1; ep <= gpus; ++ep)
          for (int64_t etp = 0; etp <= gpus; ++etp) {
            const int64_t d = gpus / (t * p);
            if (t * p * d != gpus) continue;
            if (etp == t) continue;  // the same plan as etp 0
            for (int64_t b = 1; b <= q.global_batch; ++b)
              for (int64_t v = 1; v <= 4; ++v)
                for (bool sp : {false, true})
                  for (Recompute r : {Recompute::None, Recompute::Selective, Recompute::Full})
                    for (int64_t zero = 0; zero <= 1; ++zero) {
                      if (zero > 0 && d == 1) continue;
                      TrainingPlan pl = q.features;
                      pl.tp = t, pl.pp = p, pl.dp = d, pl.ep = ep, pl.etp = etp, pl.vp = v, pl.micro_batch = b;
                      pl.global_batch = q.global_batch, pl.seq = q.seq;
                      pl.sequence_parallel = sp, pl.recompute = r, pl.zero = zero;
                      try {
                        const auto prediction = phaze::megatron::predict_step(spec, system, pl);
                        ++valid;
                        if (prediction.memory.fits) best = std::min(best, prediction.time.iteration_s);
                      } catch (const phaze::InputError&) {
                      }
                    }
          }
    EXPECT_EQ(answer.evaluated, valid) << gpus;
    ASSERT_FALSE(answer.best.empty());
    EXPECT_DOUBLE_EQ(answer.best.front().time.iteration_s, best) << gpus;
  }
}

// A sequence too long for one GPU's memory fits only when context parallelism splits it, and the answer
// says so.
TEST(GpuPlanSearch, ALongSequenceFitsOnlyWithContextParallelism) {
  phaze::megatron::GpuPlanQuestion q;
  q.gpus = 8;
  q.global_batch = 1;
  q.seq = 917504;  // 7 · 2^17 tokens of Llama-2-7B on one node
  q.features = phaze::megatron::current_practice();
  const auto answer =
      phaze::megatron::search_gpu_plans(*phaze::model::find_preset("llama2-7b"), phaze::hw::dgx_h100_system(), q);
  ASSERT_FALSE(answer.best.empty());
  EXPECT_TRUE(answer.fits_only_with_context_parallelism);
  EXPECT_GT(answer.best.front().plan.cp, 1);
}

TEST(GpuPlanSearch, NothingFitsIsAnEmptyAnswer) {
  phaze::megatron::GpuPlanQuestion q;
  q.gpus = 1;
  q.global_batch = 8;
  q.seq = 2048;
  const auto answer = phaze::megatron::search_gpu_plans(phaze::model::megatron_gpt("big", "", 96, 12288, 96, 2048),
                                                        phaze::hw::dgx_a100_system(false), q);
  EXPECT_GT(answer.evaluated, 0);
  EXPECT_EQ(answer.fitting, 0);
  EXPECT_TRUE(answer.best.empty());
}

}  // namespace
