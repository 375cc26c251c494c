#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/layer.h"
#include "model/model_spec.h"

namespace phaze::model {

/// A tensor of the layer: output `output` of forward operator `op`, or layer input `output` when op < 0.
struct Value {
  int op = -1;
  int output = 0;
  bool operator==(const Value&) const = default;
};

/// An operand of a forward operator. Non-differentiable operands (token ids, the running maximum of a
/// stable softmax) receive no gradient. `gradient_elements` > 0 when the gradient touches only part of
/// the value (the pooler reads the first token only).
struct Operand {
  Value value;
  bool differentiable = true;
  int64_t gradient_elements = 0;
};

/// A weight of a forward operator, in elements per rank.
struct Weight {
  int64_t elements = 0;
  bool sharded = false;        ///< split over the tensor-parallel ranks
  bool tied_copy = false;      ///< a copy of a weight owned by another layer
  bool training_only = false;  ///< a pre-training head weight not in the published model (BERT MLM/NSP)
  bool routed_expert = false;  ///< a routed expert's weight, of which a token uses k of E
};

/// One backward node of a forward operator.
struct BackwardSpec {
  std::string suffix;  ///< appended to the backward id ("a", "b" or "")
  std::string name;
  Engine engine = Engine::None;
  std::optional<Gemm> gemm;
  std::vector<VectorPass> passes;
  std::optional<Collective> collective;
  bool needs_output_gradient = true;  ///< waits for the gradient of the operator's outputs
  std::vector<int> after;             ///< earlier backward nodes of the same operator it waits for
  std::vector<int> gradients_for;     ///< operand indices whose gradient this node produces
  bool weight_gradient = false;
  std::optional<AttentionCore> attention;  ///< a fused attention core's backward kernel
};

/// A forward operator with its dataflow, weights, saved tensors and backward rule.
struct ForwardSpec {
  std::string id;
  std::string name;
  Engine engine = Engine::None;
  std::optional<Gemm> gemm;
  std::vector<VectorPass> passes;
  std::optional<Collective> collective;
  std::vector<Operand> operands;
  std::vector<int64_t> output_elements;  ///< one entry per output tensor
  std::vector<Weight> weights;
  std::vector<Value> saved;       ///< values stashed for the backward pass (deduplicated per layer)
  int64_t saved_extra_bytes = 0;  ///< internal tensors stashed (masks, pre-activations)
  std::vector<BackwardSpec> backward;
  std::optional<AttentionCore> attention;  ///< the attention core as one fused kernel (engine Fused, no gemm)
};

/// Collects forward operators in topological order and derives the backward DAG, the parameter count and
/// the stashed activation bytes. Gradients of a tensor with several consumers are accumulated: into the
/// producer's first vector backward node when it has one, else into a vector contributor that follows all
/// other contributors, else by an explicit accumulation node.
class LayerBuilder {
 public:
  LayerBuilder(LayerKind kind, const Precision& precision) : kind_(kind), precision_(precision) {}

  /// Declares a layer input of `elements` elements of `bytes_per_element` bytes each.
  Value input(std::string name, int64_t elements, int64_t bytes_per_element, bool from_previous_layer);
  /// Appends a forward operator; its operands must already exist. Returns its index.
  int add(ForwardSpec spec);
  Value out(int op, int output = 0) const { return Value{op, output}; }
  /// The value that output `output` of the next added operator will be (for operators stashing it).
  Value next_out(int output = 0) const { return Value{static_cast<int>(ops_.size()), output}; }
  /// Marks a value as a layer output; its gradient arrives from outside the layer.
  void output(Value value, bool to_next_layer);

  int64_t elements(Value value) const;
  Layer finish() const;

 private:
  struct Input {
    std::string name;
    int64_t elements;
    int64_t bytes_per_element;
    bool from_previous_layer;
  };
  struct Gradients;
  struct OutputGradients;
  int64_t bytes(Value value) const;
  OperatorGraph build_forward() const;
  OperatorGraph build_backward() const;
  /// Appends the backward nodes of forward operator `i`, taking its outputs' gradients from `gradients`
  /// and recording the gradients of its operands there.
  void add_backward_of(int i, OperatorGraph& graph, Gradients& gradients) const;
  OutputGradients output_gradients(int i, int absorber, const std::string& base, OperatorGraph& graph,
                                   Gradients& gradients) const;

  LayerKind kind_;
  Precision precision_;
  std::vector<Input> inputs_;
  std::vector<ForwardSpec> ops_;
  std::vector<std::pair<Value, bool>> outputs_;
};

}  // namespace phaze::model
