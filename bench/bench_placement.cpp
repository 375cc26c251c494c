// Placement engine speed: the whole `phaze place` run on the GPT-3-like question (target: under 40 ms wall
// on one core), and the library API as the co-search uses it (one planner, many calls).

#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "gpt3_chain.h"
#include "placement/corrected_planner.h"
#include "placement/reference_planner.h"

namespace {

using namespace phaze;

void BM_PlaceGpt3_ReusedPlanner(benchmark::State& state) {
  const io::PlacementInput input = bench::gpt3_placement_input();
  placement::ReferencePlanner planner;
  for (auto _ : state) benchmark::DoNotOptimize(planner.solve(input.chains, input.cluster).time_per_batch);
}

void BM_PlaceGpt3_ReusedPlanner_VaryingMemory(benchmark::State& state) {
  // The co-search asks the same graph under several HBM sizes and recomputation choices.
  io::PlacementInput input = bench::gpt3_placement_input();
  placement::ReferencePlanner planner;
  const double sizes[] = {32.0, 64.0, 80.0};
  size_t k = 0;
  for (auto _ : state) {
    placement::Cluster cluster = input.cluster;
    cluster.memory_bytes = sizes[k % 3] * (1ull << 30);
    cluster.recompute = (k / 3) % 2 == 0;
    ++k;
    benchmark::DoNotOptimize(planner.solve(input.chains, cluster).time_per_batch);
  }
}

void BM_PlaceGpt3_OneWidth(benchmark::State& state) {
  const io::PlacementInput input = bench::gpt3_placement_input();
  const placement::Chain& chain = input.chains[static_cast<size_t>(state.range(0))];
  placement::ReferencePlanner planner;
  for (auto _ : state) benchmark::DoNotOptimize(planner.solve(chain, input.cluster).time_per_batch);
  state.SetLabel("t = " + std::to_string(chain.width));
}

/// The corrected time-per-batch terms as the co-search sets them: ring latency of a PCIe-class hop and an
/// SGD update streaming 3 bytes per parameter byte at 1.2·10^12 B/s of HBM.
placement::Cluster corrected(placement::Cluster cluster) {
  cluster.corrected.enabled = true;
  cluster.data_parallel_network.tiers[0].latency_s = 5e-6;
  cluster.corrected.optimizer_seconds_per_byte = 3.0 / 1.2e12;
  return cluster;
}

void BM_PlaceGpt3_Corrected_ReusedPlanner(benchmark::State& state) {
  const io::PlacementInput input = bench::gpt3_placement_input();
  const placement::Cluster cluster = corrected(input.cluster);
  placement::CorrectedPlanner planner;
  for (auto _ : state) benchmark::DoNotOptimize(planner.solve(input.chains, cluster).time_per_batch);
}

void BM_PlaceGpt3_Corrected_ReusedPlanner_VaryingMemory(benchmark::State& state) {
  io::PlacementInput input = bench::gpt3_placement_input();
  placement::CorrectedPlanner planner;
  const double sizes[] = {32.0, 64.0, 80.0};
  size_t k = 0;
  for (auto _ : state) {
    placement::Cluster cluster = corrected(input.cluster);
    cluster.memory_bytes = sizes[k % 3] * (1ull << 30);
    cluster.recompute = (k / 3) % 2 == 0;
    ++k;
    benchmark::DoNotOptimize(planner.solve(input.chains, cluster).time_per_batch);
  }
}

void BM_PlaceGpt3_Corrected_OneWidth(benchmark::State& state) {
  const io::PlacementInput input = bench::gpt3_placement_input();
  const placement::Chain& chain = input.chains[static_cast<size_t>(state.range(0))];
  const placement::Cluster cluster = corrected(input.cluster);
  placement::CorrectedPlanner planner;
  for (auto _ : state) benchmark::DoNotOptimize(planner.solve(chain, cluster).time_per_batch);
  state.SetLabel("t = " + std::to_string(chain.width));
}

void BM_PlaceGpt3_Cli(benchmark::State& state) {
  // Wall time of the whole command: process start, JSON parsing, the search over four widths, output.
  const std::string dir = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp");
  const std::string input_path = dir + "/phaze_bench_gpt3_place_" + std::to_string(getpid()) + ".json";
  {
    std::ofstream out(input_path);
    out << io::placement_input_json(bench::gpt3_placement_input()).dump();
  }
  const std::string command = "taskset -c 0 " PHAZE_BINARY " place " + input_path +
                              " > /dev/null 2>&1 || " PHAZE_BINARY " place " + input_path + " > /dev/null";
  for (auto _ : state)
    if (std::system(command.c_str()) != 0) state.SkipWithError("phaze place failed");
  std::remove(input_path.c_str());
}

}  // namespace

BENCHMARK(BM_PlaceGpt3_Cli)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);
BENCHMARK(BM_PlaceGpt3_ReusedPlanner)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_PlaceGpt3_ReusedPlanner_VaryingMemory)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_PlaceGpt3_OneWidth)->DenseRange(0, 3)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_PlaceGpt3_Corrected_ReusedPlanner)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_PlaceGpt3_Corrected_ReusedPlanner_VaryingMemory)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_PlaceGpt3_Corrected_OneWidth)->DenseRange(0, 3)->Unit(benchmark::kMicrosecond);
