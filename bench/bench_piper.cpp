// The exact Piper planner on the BERT-32-like input (tests/data/piper/bert32_like.json: 36 nodes, widths
// 1/2/4/8, two TMPCs per width, N = 1,920, M = 8 GiB) at K = 512 … 8,192 devices (docs/piper.md: under
// 0.2 s at K = 2,048 and under a second at 8,192; the original takes minutes at 2,048), and on a wide graph
// of the GNMT file's scale: four parallel chains of ten layers (14,641 downsets, 19.0 million candidate
// stages; the GNMT file has 17,914 and 15.5 million), on 1 and 2 threads.

#include <benchmark/benchmark.h>

#include <string>
#include <utility>

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

namespace {

/// Four parallel chains of ten layers, two TMPCs each (as a stash and a recomputation: the second slower, with
/// a tenth of the memory per micro-batch in flight), K = 8, N = 256, the figures varying along each chain.
piper::Problem parallel_chains() {
  piper::Problem p;
  p.devices = 8;
  p.micro_batches = 256;
  p.bandwidth_bytes_per_s = 25e9;
  p.memory_per_device_bytes = 2.4 * 1024 * 1024 * 1024;
  p.widths = {1};
  for (int branch = 0; branch < 4; ++branch)
    for (int k = 0; k < 10; ++k) {
      const int v = static_cast<int>(p.nodes.size());
      piper::Node node{v, "", {}, {}, {}};
      if (k > 0) {
        p.nodes.back().out_edges.push_back(static_cast<int>(p.edges.size()));
        node.in_edges.push_back(static_cast<int>(p.edges.size()));
        p.edges.push_back(piper::Edge{v - 1, v, 4e6 * (1 + branch)});
      }
      const double time = 2.0 + 0.3 * k + 0.5 * branch, a = 1.3e7 * (1 + k % 3), b = 2.6e8 + 1e7 * branch;
      const size_t in = node.in_edges.size(), out = 1;  // the out-edge comes with the next layer
      auto tmpc = [&](const char* id, double t, double per_batch, double fixed) {
        return piper::Tmpc{id, t, 1.3e8, per_batch, fixed, std::vector<double>(in, 0.0), std::vector<double>(out, 0.0)};
      };
      node.tmpcs = {{tmpc("vanilla", time, a, b), tmpc("activation recomp", time * 1.3, a / 10, b + a)}};
      p.nodes.push_back(std::move(node));
    }
  // The last layer of each chain has no out-edge.
  for (piper::Node& node : p.nodes)
    for (piper::Tmpc& c : node.tmpcs[0]) c.sync_out_bytes.resize(node.out_edges.size());
  return p;
}

void BM_PiperParallelChains(benchmark::State& state) {
  const piper::Problem problem = parallel_chains();
  piper::PiperAnswer answer;
  for (auto _ : state) answer = piper::plan_piper(problem, static_cast<int>(state.range(0)));
  state.counters["time_per_sample_s"] = answer.time_per_sample_s;
  state.counters["stages"] = static_cast<double>(answer.stages.size());
  state.counters["checks"] = static_cast<double>(answer.checks);
  state.counters["stage_pairs"] = static_cast<double>(answer.stage_pairs);
}
BENCHMARK(BM_PiperParallelChains)->ArgName("threads")->Arg(1)->Arg(2)->Iterations(1)->Unit(benchmark::kSecond);

}  // namespace
