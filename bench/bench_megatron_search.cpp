// The co-search's per-design cost under each execution (docs/gpu.md 7): the default GPT-3 175B question,
// all 24 points of one design (4 micro-batches × 3 HBM sizes × 2 recomputation settings) with the layer
// schedules already cached, so that what is measured is the planning; and the workload's preparation, where
// Megatron-LM execution lists the configurations that fit.

#include <benchmark/benchmark.h>

#include "hw/presets.h"
#include "model/presets.h"
#include "search/driver.h"
#include "search/evaluate.h"

namespace {

using namespace phaze;

search::SearchQuestion gpt3_question(search::Execution execution) {
  search::SearchQuestion q;
  search::ModelCase m;
  m.source = "gpt3-175b";
  m.spec = *model::find_preset(m.source);
  m.seq = m.spec.default_seq;
  m.widths = search::default_widths(m.spec);
  q.models = {m};
  q.execution = execution;
  if (execution == search::Execution::Megatron) q.optimizer = placement::Optimizer::Adam;
  return q;
}

void BM_PrepareWorkload(benchmark::State& state, search::Execution execution) {
  const search::SearchQuestion q = gpt3_question(execution);
  for (auto _ : state) benchmark::DoNotOptimize(search::prepare_workload(q).fits.size());
}
BENCHMARK_CAPTURE(BM_PrepareWorkload, phaze, search::Execution::Phaze)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_PrepareWorkload, megatron, search::Execution::Megatron)->Unit(benchmark::kMillisecond);

void BM_EvaluateDesign(benchmark::State& state, search::Execution execution) {
  const search::SearchQuestion q = gpt3_question(execution);
  const search::Workload w = search::prepare_workload(q);
  search::ScheduleCache cache;
  search::Evaluator evaluator(w, cache);
  const hw::Design design = search::tpuv4_design(q);
  auto all = [](const std::string&) { return true; };
  evaluator.evaluate(design, all);  // schedules every layer pass once
  for (auto _ : state) benchmark::DoNotOptimize(evaluator.evaluate(design, all).size());
}
BENCHMARK_CAPTURE(BM_EvaluateDesign, phaze, search::Execution::Phaze)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_EvaluateDesign, megatron, search::Execution::Megatron)->Unit(benchmark::kMillisecond);

}  // namespace
