#include "model/layer_graph.h"

#include <fmt/format.h>

#include <stdexcept>

#include "util/input_error.h"

namespace phaze::model {

const Layer& LayerGraph::node(int64_t index) const {
  if (index < 0 || index >= size()) throw std::out_of_range("layer graph node index");
  if (index == 0) return embedding;
  if (index == size() - 1) return head;
  return index < first_main_node() ? dense_transformer : transformer;
}

std::vector<DistinctLayer> LayerGraph::distinct_layers() const {
  if (dense_layers() == 0) return {{&embedding, 1}, {&transformer, spec.num_layers}, {&head, 1}};
  return {{&embedding, 1}, {&dense_transformer, dense_layers()}, {&transformer, main_layers()}, {&head, 1}};
}

size_t LayerGraph::distinct_index(int64_t index) const {
  return distinct_layer_index(spec, index);
}

size_t distinct_layer_index(const ModelSpec& spec, int64_t index) {
  const int64_t nodes = spec.num_layers + 2;
  if (index < 0 || index >= nodes) throw std::out_of_range("layer graph node index");
  const size_t dense = spec.first_dense_layers > 0 ? 1 : 0;
  if (index == 0) return 0;
  if (index == nodes - 1) return 2 + dense;
  return index <= spec.first_dense_layers ? 1 : 1 + dense;
}

std::vector<LayerKind> distinct_layer_kinds(const ModelSpec& spec) {
  if (spec.first_dense_layers == 0) return {LayerKind::Embedding, LayerKind::Transformer, LayerKind::Head};
  return {LayerKind::Embedding, LayerKind::Transformer, LayerKind::Transformer, LayerKind::Head};
}

std::string LayerGraph::node_name(int64_t index) const {
  if (index == 0) return "embedding";
  if (index == size() - 1) return "head";
  return fmt::format("layer{}", index);
}

int64_t LayerGraph::edge_bytes(int64_t index) const {
  return node(index).output_bytes;
}

int64_t LayerGraph::tied_gradient_bytes() const {
  return spec.tied_head ? CheckedInt(head.tied_copy_parameters) * precision.parameter_bytes : CheckedInt(0);
}

int64_t LayerGraph::parameters() const {
  return CheckedInt(embedding.parameters) + CheckedInt(main_layers()) * transformer.parameters +
         CheckedInt(dense_layers()) * dense_transformer.parameters + head.parameters - head.tied_copy_parameters;
}

int64_t LayerGraph::forward_flops() const {
  return CheckedInt(embedding.forward_flops()) + CheckedInt(main_layers()) * transformer.forward_flops() +
         CheckedInt(dense_layers()) * dense_transformer.forward_flops() + head.forward_flops();
}

int64_t LayerGraph::backward_flops() const {
  return CheckedInt(embedding.backward_flops()) + CheckedInt(main_layers()) * transformer.backward_flops() +
         CheckedInt(dense_layers()) * dense_transformer.backward_flops() + head.backward_flops();
}

LayerGraph build_layer_graph(const ModelSpec& spec, const Shape& shape, const Precision& precision,
                             const std::string& source) {
  validate(spec, shape, source);
  try {
    LayerGraph graph{spec,
                     shape,
                     precision,
                     build_embedding_layer(spec, shape, precision),
                     build_transformer_layer(spec, shape, precision),
                     build_head_layer(spec, shape, precision),
                     spec.first_dense_layers > 0 ? build_dense_transformer_layer(spec, shape, precision) : Layer{}};
    // The whole-chain sums are checked here once, so that every later use of them is safe.
    graph.parameters();
    CheckedInt(graph.forward_flops()) + graph.backward_flops();  // and their sum, one training pass
    graph.tied_gradient_bytes();
    return graph;
  } catch (const SizeOverflow&) {
    throw InputError(fmt::format(
        "{}: seq = {}, mbs = {}, tp = {}: the layer sizes (elements, bytes or FLOPs) exceed 2^63 - 1; lower the "
        "sequence length or the micro-batch",
        source, shape.seq, shape.micro_batch, shape.tp));
  }
}

ModelTotals model_totals(const ModelSpec& spec, int64_t seq, const Precision& precision) {
  const LayerGraph graph = build_layer_graph(spec, Shape{seq, 1, 1}, precision, spec.name);
  ModelTotals totals;
  totals.training_parameters = graph.parameters();
  totals.parameters = CheckedInt(totals.training_parameters) - graph.embedding.training_only_parameters -
                      CheckedInt(graph.main_layers()) * graph.transformer.training_only_parameters -
                      CheckedInt(graph.dense_layers()) * graph.dense_transformer.training_only_parameters -
                      graph.head.training_only_parameters;
  // A token runs k of the E routed experts of each expert layer (their weights divide by E).
  const CheckedInt routed = graph.transformer.routed_expert_parameters;
  const CheckedInt unused =
      spec.moe() ? routed / spec.experts * (spec.experts - spec.experts_per_token) : CheckedInt(0);
  totals.active_parameters = CheckedInt(totals.parameters) - CheckedInt(spec.moe_layers()) * unused;
  totals.forward_flops_per_sample = graph.forward_flops();
  try {
    totals.training_flops_per_sample = CheckedInt(graph.forward_flops()) + graph.backward_flops();
  } catch (const SizeOverflow&) {
    throw InputError(fmt::format("{}: seq = {}: the training FLOPs of one sequence exceed 2^63 - 1", spec.name, seq));
  }
  return totals;
}

}  // namespace phaze::model
