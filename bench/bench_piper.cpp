// The exact Piper planner on the BERT-32-like input (tests/data/piper/bert32_like.json: 36 nodes, widths
// 1/2/4/8, two TMPCs per width, N = 1,920, M = 8 GiB) at K = 512 … 8,192 devices (docs/piper.md: under
// 0.2 s at K = 2,048 and under a second at 8,192; the original takes minutes at 2,048).

#include <benchmark/benchmark.h>

#include <string>

#include "io/piper_json.h"
#include "piper/planner.h"
#include "util/read_file.h"

namespace {

using namespace phaze;

void BM_PiperBert32(benchmark::State& state) {
  const std::string path = std::string(PHAZE_SOURCE_DIR) + "/tests/data/piper/bert32_like.json";
  piper::Problem problem = io::read_piper_problem(read_text_file(path), path);
  problem.devices = state.range(0);
  piper::PiperAnswer answer;
  for (auto _ : state) answer = piper::plan_piper(problem);
  state.counters["time_per_sample_s"] = answer.time_per_sample_s;
  state.counters["stages"] = static_cast<double>(answer.stages.size());
  state.counters["checks"] = static_cast<double>(answer.checks);
  state.counters["stage_pairs"] = static_cast<double>(answer.stage_pairs);
}
BENCHMARK(BM_PiperBert32)->Arg(512)->Arg(1024)->Arg(2048)->Arg(8192)->Unit(benchmark::kMillisecond);

}  // namespace
