#pragma once

// The GPT-3-like placement question of the benchmarks: embedding, 96 transformer layers and the head,
// widths {1, 2, 4, 8}, K = 1024, N = 4096, 32 GiB, recomputation on. Parameters, activations and edge
// bytes come from the model graph; latencies are a stand-in (FLOPs at 275 TFLOP/s per device plus the
// activation traffic at 1.2 TB/s) until the accelerator model exists.

#include "io/placement_json.h"
#include "model/layer_graph.h"
#include "model/presets.h"

namespace phaze::bench {

inline placement::Chain chain_from_model(const model::LayerGraph& graph) {
  placement::Chain chain;
  chain.width = graph.shape.tp;
  constexpr double kFlopsPerSecond = 275e12, kBytesPerSecond = 1.2e12;
  for (int64_t i = 0; i < graph.size(); ++i) {
    const model::Layer& layer = graph.node(i);
    const double traffic = static_cast<double>(layer.activation_bytes) / kBytesPerSecond;
    chain.nodes.push_back(
        placement::ChainNode{static_cast<double>(layer.forward_flops()) / kFlopsPerSecond + traffic,
                             static_cast<double>(layer.backward_flops()) / kFlopsPerSecond + 2 * traffic,
                             static_cast<double>(layer.parameter_bytes), static_cast<double>(layer.activation_bytes),
                             layer.tensor_parallel});
    if (i + 1 < graph.size())
      chain.edges.push_back(
          placement::ChainEdge{static_cast<int>(i), static_cast<int>(i + 1), static_cast<double>(graph.edge_bytes(i))});
  }
  return chain;
}

inline io::PlacementInput gpt3_placement_input() {
  const model::ModelSpec spec = *model::find_preset("gpt3-175b");
  io::PlacementInput input;
  input.cluster = placement::Cluster{.devices = 1024,
                                     .memory_bytes = 32.0 * (1ull << 30),
                                     .micro_batches = 4096,
                                     .recompute = true,
                                     .optimizer = placement::Optimizer::Sgd,
                                     .corrected = {}};
  placement::use_network(input.cluster, hw::one_tier_network(4.0 * (1ull << 30)));
  for (int64_t t : {1, 2, 4, 8})
    input.chains.push_back(
        chain_from_model(model::build_layer_graph(spec, model::Shape{2048, 1, t}, model::Precision{}, "gpt3")));
  for (int64_t i = 0; i < spec.num_layers + 2; ++i) input.node_ids.push_back(i);
  input.hand_set = placement::HandSetPlan{32, 4, 8};
  input.hand_set_layers = 96;
  return input;
}

}  // namespace phaze::bench
