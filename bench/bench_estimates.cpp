// Estimating every distinct GEMM of a GPT-3 175B layer (t = 8, b = 1, forward and backward) for every
// distinct tensor-core configuration of the 29,360-design space, single-core and all-cores: cold (a new
// cache file, every mapping searched) and warm (every answer read back from the cache file).
// Targets on a 2-core machine: under 60 s cold, under 2 s warm.

#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <thread>
#include <tuple>

#include "cost/gemm_cost.h"
#include "cost/operator_cost.h"
#include "hw/enumerate.h"
#include "model/layer_graph.h"
#include "model/presets.h"

namespace {

using namespace phaze;

std::vector<std::pair<model::Gemm, hw::TensorCoreConfig>> gpt3_layer_jobs() {
  const model::ModelSpec spec = *model::find_preset("gpt3-175b");
  const model::Layer layer = model::build_transformer_layer(spec, model::Shape{2048, 1, 8}, model::Precision{});
  std::set<std::tuple<int64_t, int64_t, int64_t, int64_t>> gemms;
  for (const model::OperatorGraph* g : {&layer.forward, &layer.backward})
    for (const model::Operator& op : g->ops)
      if (op.gemm) gemms.insert({op.gemm->m, op.gemm->n, op.gemm->k, op.gemm->batch});
  std::set<std::tuple<int64_t, int64_t, int64_t, int64_t>> configs;  // (cores, width, depth, GLB)
  for (const hw::Design& d : hw::enumerate_designs()) {
    configs.insert({d.arch.num_tc, d.arch.tc_width, d.arch.tc_depth, d.arch.glb_bytes});
    configs.insert({1, d.arch.tc_width, d.arch.tc_depth, d.arch.glb_bytes});
  }
  std::vector<std::pair<model::Gemm, hw::TensorCoreConfig>> jobs;
  for (const auto& [cores, width, depth, glb] : configs) {
    hw::Architecture arch;
    arch.num_tc = cores;
    arch.tc_width = width;
    arch.tc_depth = depth;
    arch.glb_bytes = glb;
    for (const auto& [m, n, k, g] : gemms) jobs.emplace_back(model::Gemm{m, n, k, g}, hw::tensor_cores(arch, true));
  }
  return jobs;
}

std::string cache_path() {
  return (std::filesystem::temp_directory_path() / ("phaze_bench_estimates_" + std::to_string(getpid()) + ".sqlite"))
      .string();
}

void remove_cache(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
}

const int kThreads = std::max(1u, std::thread::hardware_concurrency());

void BM_Gpt3LayerAllDesigns_ColdCache(benchmark::State& state) {
  const auto jobs = gpt3_layer_jobs();
  const std::string path = cache_path();
  for (auto _ : state) {
    remove_cache(path);
    cost::EstimateCache cache(path);
    cost::Estimator estimator({}, hw::tpuv4_like_system().network, &cache);
    benchmark::DoNotOptimize(estimator.gemms(jobs, kThreads).data());
  }
  state.counters["estimates"] = static_cast<double>(jobs.size());
  state.counters["threads"] = kThreads;
}

void BM_Gpt3LayerAllDesigns_WarmCache(benchmark::State& state) {
  const auto jobs = gpt3_layer_jobs();
  const std::string path = cache_path();
  remove_cache(path);
  {
    cost::EstimateCache cache(path);
    cost::Estimator estimator({}, hw::tpuv4_like_system().network, &cache);
    estimator.gemms(jobs, kThreads);
  }
  for (auto _ : state) {
    cost::EstimateCache cache(path);  // a new process would start here
    cost::Estimator estimator({}, hw::tpuv4_like_system().network, &cache);
    benchmark::DoNotOptimize(estimator.gemms(jobs, kThreads).data());
  }
  remove_cache(path);
  state.counters["estimates"] = static_cast<double>(jobs.size());
}

void BM_MapOneGemm(benchmark::State& state) {
  const model::Gemm g{2048, 4608, 12288, 1};
  hw::TensorCoreConfig c{state.range(0), 128, 128, 256 << 10, 128ll << 20, 1.2e12, 1.05e9};
  for (auto _ : state) benchmark::DoNotOptimize(cost::map_gemm(g, c, {}).cycles);
  state.SetLabel(std::to_string(state.range(0)) + " cores");
}

}  // namespace

BENCHMARK(BM_Gpt3LayerAllDesigns_ColdCache)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();
BENCHMARK(BM_Gpt3LayerAllDesigns_WarmCache)->Iterations(3)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_MapOneGemm)->Arg(1)->Arg(8)->Arg(64)->Arg(4096)->Unit(benchmark::kMicrosecond);
