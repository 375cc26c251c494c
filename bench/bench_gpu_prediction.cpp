// The GPU predictor's speed: one iteration of GPT-3 on 512 A100s, the exhaustive `phaze plan` of GPT-3 on
// 1,024 GPUs and of Llama-2-7B on 64 H100s ("in seconds", docs/gpu.md 5), and the whole vTrain single-node
// file (what each step of the calibration's fit costs).

#include <benchmark/benchmark.h>

#include <string>

#include "hw/system.h"
#include "io/measured_runs.h"
#include "megatron/plan_search.h"
#include "megatron/training_step.h"
#include "megatron/validation.h"
#include "model/presets.h"

namespace {

using namespace phaze;

void BM_PredictGpt3(benchmark::State& state) {
  const model::ModelSpec spec = *model::find_preset("gpt3-175b");
  const hw::System system = hw::vtrain_a100_system();
  megatron::TrainingPlan plan;
  plan.tp = 8, plan.pp = 16, plan.dp = 4, plan.micro_batch = 2, plan.global_batch = 1536, plan.seq = 2048;
  for (auto _ : state) benchmark::DoNotOptimize(megatron::predict_step(spec, system, plan).time.iteration_s);
}
BENCHMARK(BM_PredictGpt3)->Unit(benchmark::kMicrosecond);

void BM_PlanSearch(benchmark::State& state, const char* preset, hw::System system, int64_t gpus, int64_t batch) {
  const model::ModelSpec spec = *model::find_preset(preset);
  megatron::GpuPlanQuestion q;
  q.gpus = gpus;
  q.global_batch = batch;
  q.seq = spec.default_seq;
  int64_t evaluated = 0;
  for (auto _ : state) evaluated = megatron::search_gpu_plans(spec, system, q).evaluated;
  state.counters["configurations"] = static_cast<double>(evaluated);
}
BENCHMARK_CAPTURE(BM_PlanSearch, gpt3_1024_a100, "gpt3-175b", hw::dgx_a100_system(true), 1024, 1536)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_PlanSearch, llama2_7b_64_h100, "llama2-7b", hw::dgx_h100_system(), 64, 512)
    ->Unit(benchmark::kMillisecond);

void BM_ValidateSingleNodeFile(benchmark::State& state) {
  const auto runs =
      io::read_measured_runs(std::string(PHAZE_SOURCE_DIR) + "/tests/data/vtrain/ground_truth_single.csv");
  const hw::System system = hw::vtrain_a100_system();
  for (auto _ : state) benchmark::DoNotOptimize(megatron::check_runs(runs, system).mean_abs_error);
}
BENCHMARK(BM_ValidateSingleNodeFile)->Unit(benchmark::kMillisecond);

}  // namespace
