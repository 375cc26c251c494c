// The co-search's per-design cost under each execution and planner (docs/gpu.md 7, docs/piper.md): the
// default GPT-3 175B question, all 24 points of the TPUv4-like design (4 micro-batches × 3 HBM sizes × 2
// recomputation settings) with the layer schedules already cached and a new evaluator each time (no plan
// cached), so that what is measured is the planning; the workload's preparation, where Megatron-LM execution
// lists the configurations that fit and the stagewise planner decides which points can fit at all; and an
// exhaustive search's work unit from cold caches: every design of the space with the tensor cores of the
// default search's best design (8 × 128×256), as one thread takes them, so that the estimates, schedules and
// plans that neighbouring designs share are counted once, as in the search.

#include <benchmark/benchmark.h>

#include <string>

#include "hw/presets.h"
#include "model/presets.h"
#include "search/baselines.h"
#include "search/driver.h"
#include "search/evaluate.h"
#include "search/question.h"

namespace {

using namespace phaze;

enum class Setup { Phaze, Megatron, Stagewise };

/// The default question of one model preset.
search::SearchQuestion preset_question(const std::string& preset) {
  search::SearchQuestion q;
  search::ModelCase m;
  m.source = preset;
  m.spec = *model::find_preset(m.source);
  m.seq = m.spec.default_seq;
  m.widths = search::default_widths(m.spec);
  q.models = {m};
  return q;
}

search::SearchQuestion gpt3_question(Setup setup) {
  const search::Execution execution = setup == Setup::Megatron ? search::Execution::Megatron : search::Execution::Phaze;
  search::SearchQuestion q = preset_question("gpt3-175b");
  q.execution = execution;
  if (execution == search::Execution::Megatron) q.optimizer = placement::Optimizer::Adam;
  if (setup == Setup::Stagewise) q.planner = search::PlannerChoice::Stagewise;
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
  for (auto _ : state) {
    search::Evaluator fresh(w, cache);  // no plan cached
    benchmark::DoNotOptimize(fresh.evaluate(design, all).size());
  }
}
BENCHMARK_CAPTURE(BM_EvaluateDesign, phaze, Setup::Phaze)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_EvaluateDesign, megatron, Setup::Megatron)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_EvaluateDesign, stagewise, Setup::Stagewise)->Unit(benchmark::kMillisecond);

void BM_EvaluateWorkUnit(benchmark::State& state) {
  const search::SearchQuestion q = gpt3_question(Setup::Phaze);
  const search::Workload w = search::prepare_workload(q);
  std::vector<hw::Design> unit;
  for (const hw::Design& d : search::search_designs(q))
    if (d.arch.num_tc == 8 && d.arch.tc_width == 128 && d.arch.tc_depth == 256) unit.push_back(d);
  auto all = [](const std::string&) { return true; };
  for (auto _ : state) {
    search::ScheduleCache cache;
    search::Evaluator evaluator(w, cache);
    for (const hw::Design& d : unit) benchmark::DoNotOptimize(evaluator.evaluate(d, all).size());
  }
  state.counters["designs"] = static_cast<double>(unit.size());
}
BENCHMARK(BM_EvaluateWorkUnit)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();

// The Spotlight-style argmin of Llama-2-7B's default question at one micro-batch size (first argument), from
// a cold schedule cache, as the search's thread that takes it: with its hard passes first bounded by probes
// (second argument 0), and with every pass scheduled exactly (1), as before the probes. The choice is the
// same; the counters give it.
void BM_SpotlightArgmin(benchmark::State& state) {
  const search::SearchQuestion q = preset_question("llama2-7b");
  const std::vector<hw::Design> designs = search::search_designs(q);
  const int64_t quick_nodes = state.range(1) == 0 ? search::kSpotlightQuickNodes : -1;
  search::SpotlightChoice choice;
  for (auto _ : state) {
    search::ScheduleCache cache;
    search::Scheduling scheduling = search::make_scheduling(q, cache);
    choice = search::spotlight_choice(q, designs, state.range(0), scheduling, quick_nodes);
  }
  state.counters["seconds_per_sample"] = choice.seconds_per_sample;
  state.counters["area_mm2"] = choice.design.area_um2 / 1e6;
  state.counters["designs_scheduled"] = static_cast<double>(choice.designs_scheduled);
}
BENCHMARK(BM_SpotlightArgmin)->ArgsProduct({{2, 8}, {0, 1}})->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();

}  // namespace
