// Building the layer graphs is on the co-search's path once per (model, micro-batch, width): it must stay
// far below the cost of estimating and scheduling the operators it produces.

#include <benchmark/benchmark.h>

#include "model/layer_graph.h"
#include "model/presets.h"

namespace {

using namespace phaze::model;

void BM_BuildLayerGraph(benchmark::State& state, const char* preset, int64_t tp) {
  const ModelSpec spec = *find_preset(preset);
  const Shape shape{spec.default_seq, 1, tp};
  for (auto _ : state) {
    LayerGraph graph = build_layer_graph(spec, shape, Precision{}, preset);
    benchmark::DoNotOptimize(graph.transformer.backward.ops.data());
  }
}

void BM_AllPresetsAllWidths(benchmark::State& state) {
  for (auto _ : state) {
    for (const std::string& name : preset_names()) {
      const ModelSpec spec = *find_preset(name);
      for (int64_t tp : {1, 2, 4, 8}) {
        if (spec.heads % tp != 0 || spec.kv_heads % tp != 0 || spec.ffn % tp != 0) continue;
        for (int64_t mbs : {1, 2, 4, 8}) {
          LayerGraph graph = build_layer_graph(spec, Shape{spec.default_seq, mbs, tp}, Precision{}, name);
          benchmark::DoNotOptimize(graph.head.forward.ops.data());
        }
      }
    }
  }
}

}  // namespace

BENCHMARK_CAPTURE(BM_BuildLayerGraph, gpt3_t8, "gpt3-175b", 8)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_BuildLayerGraph, llama2_t1, "llama2-7b", 1)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_BuildLayerGraph, bert_t4, "bert-large", 4)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AllPresetsAllWidths)->Unit(benchmark::kMillisecond);
