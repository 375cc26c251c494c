// The co-search's per-design cost under each execution and planner (docs/gpu.md 7, docs/piper.md): the
// default GPT-3 175B question, all 24 points of the TPUv4-like design (4 micro-batches × 3 HBM sizes × 2
// recomputation settings) with the layer schedules already cached, so that what is measured is the
// planning; and the workload's preparation, where Megatron-LM execution lists the configurations that fit
// and the stagewise planner decides which points can fit at all.

#include <benchmark/benchmark.h>

#include "hw/presets.h"
#include "model/presets.h"
#include "search/driver.h"
#include "search/evaluate.h"

namespace {

using namespace phaze;

enum class Setup { Phaze, Megatron, Stagewise };

search::SearchQuestion gpt3_question(Setup setup) {
  const search::Execution execution = setup == Setup::Megatron ? search::Execution::Megatron : search::Execution::Phaze;
  search::SearchQuestion q;
  search::ModelCase m;
  m.source = "gpt3-175b";
  m.spec = *model::find_preset(m.source);
  m.seq = m.spec.default_seq;
  m.widths = search::default_widths(m.spec);
  q.models = {m};
  q.execution = execution;
  if (execution == search::Execution::Megatron) q.optimizer = placement::Optimizer::Adam;
  if (setup == Setup::Stagewise) q.planner = search::PlannerChoice::Piper;
  return q;
}

void BM_PrepareWorkload(benchmark::State& state, Setup setup) {
  const search::SearchQuestion q = gpt3_question(setup);
  for (auto _ : state) benchmark::DoNotOptimize(search::prepare_workload(q).fits.size());
}
BENCHMARK_CAPTURE(BM_PrepareWorkload, phaze, Setup::Phaze)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_PrepareWorkload, megatron, Setup::Megatron)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_PrepareWorkload, stagewise, Setup::Stagewise)->Unit(benchmark::kMillisecond);

void BM_EvaluateDesign(benchmark::State& state, Setup setup) {
  const search::SearchQuestion q = gpt3_question(setup);
  const search::Workload w = search::prepare_workload(q);
  search::ScheduleCache cache;
  search::Evaluator evaluator(w, cache);
  const hw::Design design = search::tpuv4_design(q);
  auto all = [](const std::string&) { return true; };
  evaluator.evaluate(design, all);  // schedules every layer pass once
  for (auto _ : state) benchmark::DoNotOptimize(evaluator.evaluate(design, all).size());
}
BENCHMARK_CAPTURE(BM_EvaluateDesign, phaze, Setup::Phaze)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_EvaluateDesign, megatron, Setup::Megatron)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_EvaluateDesign, stagewise, Setup::Stagewise)->Unit(benchmark::kMillisecond);

}  // namespace
