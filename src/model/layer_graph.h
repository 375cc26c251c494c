#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/layer.h"
#include "model/model_spec.h"

namespace phaze::model {

/// Builders of the three distinct layers of a model for one tensor-parallel rank (rank 0).
Layer build_embedding_layer(const ModelSpec& spec, const Shape& shape, const Precision& precision);
Layer build_transformer_layer(const ModelSpec& spec, const Shape& shape, const Precision& precision);
/// A mixture of experts' first dense layers (spec.first_dense_layers): the attention and a dense FFN of
/// spec.ffn columns.
Layer build_dense_transformer_layer(const ModelSpec& spec, const Shape& shape, const Precision& precision);
/// The projection that opens one multi-token prediction module: the next tokens' embeddings (the main
/// table's rows) and the hidden states, each RMSNormed, concatenated and projected 2h → h (column-parallel,
/// gathered). The module then runs a transformer layer and the LM head and loss, the main ones'.
Layer build_mtp_projection_layer(const ModelSpec& spec, const Shape& shape, const Precision& precision);
Layer build_head_layer(const ModelSpec& spec, const Shape& shape, const Precision& precision);

/// A layer built once and the number of chain nodes that are it.
struct DistinctLayer {
  const Layer* layer = nullptr;
  int64_t nodes = 0;
};

/// The model as a chain for placement: node 0 is the embedding, nodes 1..L the transformer layers, node
/// L+1 the head with the loss. The transformer layers are identical (built once) but for a mixture of
/// experts' first dense layers, nodes 1..spec.first_dense_layers, which are dense_transformer (built once
/// too). Everything per rank and per micro-batch.
struct LayerGraph {
  ModelSpec spec;
  Shape shape;
  Precision precision;
  Layer embedding;
  Layer transformer;  ///< every transformer layer, or a mixture of experts' layers with experts
  Layer head;
  Layer dense_transformer;  ///< the first dense layers of a mixture of experts (empty without them)

  int64_t size() const { return spec.num_layers + 2; }
  /// Transformer layers that are dense_transformer (the first ones), and those that are `transformer`.
  int64_t dense_layers() const { return spec.first_dense_layers; }
  int64_t main_layers() const { return spec.num_layers - spec.first_dense_layers; }
  /// The chain node of the first `transformer` layer.
  int64_t first_main_node() const { return 1 + dense_layers(); }
  const Layer& node(int64_t index) const;
  /// The layers that are built once, in the order of their first node, each with its node count: whatever
  /// works per layer (scheduling, figures) works on these and maps chain nodes to them by distinct_index.
  std::vector<DistinctLayer> distinct_layers() const;
  /// The index in distinct_layers() of chain node `index`.
  size_t distinct_index(int64_t index) const;
  std::string node_name(int64_t index) const;
  /// Bytes of the edge from node `index` to node `index + 1` (one micro-batch, one direction).
  int64_t edge_bytes(int64_t index) const;
  /// Bytes of the tied word-embedding gradient that the first and the last stage all-reduce once per
  /// iteration when they differ (0 for an untied head).
  int64_t tied_gradient_bytes() const;

  /// Sums over the whole chain for one rank and one micro-batch.
  int64_t parameters() const;  ///< per rank, tied copies counted once
  int64_t forward_flops() const;
  int64_t backward_flops() const;
};

/// The kinds of the distinct layers of a model of `spec`, in the order of LayerGraph::distinct_layers (for
/// naming per-layer figures without building the graph).
std::vector<LayerKind> distinct_layer_kinds(const ModelSpec& spec);
/// The index in those kinds (and in LayerGraph::distinct_layers) of chain node `index` of a model of `spec`.
size_t distinct_layer_index(const ModelSpec& spec, int64_t index);

/// Builds the layer graph; validates spec and shape first (InputError naming `source`).
LayerGraph build_layer_graph(const ModelSpec& spec, const Shape& shape, const Precision& precision,
                             const std::string& source);

/// Whole-model totals independent of the sharding: parameter count of the model as published (for BERT
/// the encoder with pooler, without the pre-training-only MLM transform, decoder bias and NSP classifier)
/// and the GEMM FLOPs of training one sequence (forward + backward, no recomputation) at t = 1.
struct ModelTotals {
  int64_t parameters = 0;           ///< elements, as published
  int64_t training_parameters = 0;  ///< elements including pre-training-only head weights
  int64_t active_parameters = 0;    ///< of `parameters`, those one token uses: k of the E routed experts
  int64_t forward_flops_per_sample = 0;
  int64_t training_flops_per_sample = 0;  ///< forward + backward
};
ModelTotals model_totals(const ModelSpec& spec, int64_t seq, const Precision& precision);

}  // namespace phaze::model
