#include "model/layer_builder.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>

namespace phaze::model {

namespace {

struct Contribution {
  int node;          ///< backward node producing this gradient tensor, -1 when it comes from outside
  int64_t elements;  ///< elements of the gradient tensor
};

using ValueKey = std::pair<int, int>;
ValueKey key(Value value) {
  return {value.op, value.output};
}

bool has_ancestor(const OperatorGraph& graph, int node, int ancestor) {
  std::vector<int> stack{node};
  std::set<int> seen;
  while (!stack.empty()) {
    const int current = stack.back();
    stack.pop_back();
    for (int pred : graph.ops[current].predecessors) {
      if (pred == ancestor) return true;
      if (seen.insert(pred).second) stack.push_back(pred);
    }
  }
  return false;
}

/// Elements added when several gradient tensors of one value are summed: every one but the largest.
std::vector<VectorPass> accumulation_passes(std::vector<Contribution> contributions) {
  std::vector<VectorPass> passes;
  if (contributions.size() < 2) return passes;
  std::stable_sort(contributions.begin(), contributions.end(),
                   [](const Contribution& a, const Contribution& b) { return a.elements > b.elements; });
  for (size_t i = 1; i < contributions.size(); ++i)
    passes.push_back(VectorPass{VectorKind::Add, Direction::Forward, contributions[i].elements, 0});
  return passes;
}

std::vector<int> nodes_of(const std::vector<Contribution>& contributions) {
  std::vector<int> nodes;
  for (const Contribution& c : contributions)
    if (c.node >= 0) nodes.push_back(c.node);
  return nodes;
}

void add_unique(std::vector<int>& list, int value) {
  if (std::find(list.begin(), list.end(), value) == list.end()) list.push_back(value);
}

}  // namespace

Value LayerBuilder::input(std::string name, int64_t elements, int64_t bytes_per_element, bool from_previous_layer) {
  inputs_.push_back(Input{std::move(name), elements, bytes_per_element, from_previous_layer});
  return Value{-1, static_cast<int>(inputs_.size()) - 1};
}

int LayerBuilder::add(ForwardSpec spec) {
  for (const Operand& operand : spec.operands) {
    const bool known = operand.value.op < 0
                           ? operand.value.output < static_cast<int>(inputs_.size())
                           : operand.value.op < static_cast<int>(ops_.size()) &&
                                 operand.value.output < static_cast<int>(ops_[operand.value.op].output_elements.size());
    if (!known) throw std::logic_error("layer builder: operand of " + spec.id + " does not exist yet");
  }
  ops_.push_back(std::move(spec));
  return static_cast<int>(ops_.size()) - 1;
}

void LayerBuilder::output(Value value, bool to_next_layer) {
  outputs_.emplace_back(value, to_next_layer);
}

int64_t LayerBuilder::elements(Value value) const {
  return value.op < 0 ? inputs_[value.output].elements : ops_[value.op].output_elements[value.output];
}

int64_t LayerBuilder::bytes(Value value) const {
  const int64_t per_element = value.op < 0 ? inputs_[value.output].bytes_per_element : precision_.activation_bytes;
  return CheckedInt(elements(value)) * per_element;
}

OperatorGraph LayerBuilder::build_forward() const {
  OperatorGraph graph{Direction::Forward, {}};
  for (const ForwardSpec& spec : ops_) {
    Operator op{spec.id, spec.name, spec.engine, spec.gemm, spec.passes,   spec.collective,
                {},      0,         0,           false,     spec.attention};
    std::set<ValueKey> read;
    for (const Operand& operand : spec.operands) {
      if (operand.value.op >= 0) add_unique(op.predecessors, operand.value.op);
      if (read.insert(key(operand.value)).second) op.read_bytes = checked_add(op.read_bytes, bytes(operand.value));
    }
    std::sort(op.predecessors.begin(), op.predecessors.end());
    for (size_t o = 0; o < spec.output_elements.size(); ++o)
      op.write_bytes =
          checked_add(op.write_bytes, bytes(Value{static_cast<int>(&spec - ops_.data()), static_cast<int>(o)}));
    op.write_bytes = checked_add(op.write_bytes, spec.saved_extra_bytes);
    graph.ops.push_back(std::move(op));
  }
  return graph;
}

/// The gradient tensors of every value so far, by the value: what each consumer's backward node produced.
struct LayerBuilder::Gradients {
  std::map<ValueKey, std::vector<Contribution>> of;
};

/// The gradients of one operator's outputs, as its backward nodes take them: the nodes that produce them,
/// the accumulation passes its absorbing node takes over, and their bytes.
struct LayerBuilder::OutputGradients {
  std::vector<int> dependencies;
  std::vector<VectorPass> absorbed;
  CheckedInt bytes = 0;
};

namespace {

/// Sums several gradient tensors of one value: into a vector contributor that follows all the others, or in
/// an explicit node `id`. Returns the nodes the gradient's consumers must wait for.
std::vector<int> accumulate(OperatorGraph& graph, const std::vector<Contribution>& contributions, const std::string& id,
                            int64_t value_elements, int64_t activation_bytes) {
  std::vector<int> nodes = nodes_of(contributions);
  if (contributions.size() < 2) return nodes;
  for (int candidate : nodes) {
    if (graph.ops[candidate].engine != Engine::Vector) continue;
    const bool follows_all = std::all_of(nodes.begin(), nodes.end(), [&](int other) {
      return other == candidate || has_ancestor(graph, candidate, other);
    });
    if (!follows_all) continue;
    Operator& absorber = graph.ops[candidate];
    absorber.name += " + gradient accumulation";
    const auto passes = accumulation_passes(contributions);
    absorber.passes.insert(absorber.passes.begin(), passes.begin(), passes.end());
    return {candidate};
  }
  Operator sum{id,
               "gradient accumulation",
               Engine::Vector,
               std::nullopt,
               accumulation_passes(contributions),
               std::nullopt,
               nodes,
               0,
               0,
               false,
               {}};
  std::sort(sum.predecessors.begin(), sum.predecessors.end());
  for (const Contribution& c : contributions)
    sum.read_bytes = checked_add(sum.read_bytes, CheckedInt(c.elements) * activation_bytes);
  sum.write_bytes = CheckedInt(value_elements) * activation_bytes;
  graph.ops.push_back(std::move(sum));
  return {static_cast<int>(graph.ops.size()) - 1};
}

/// Elements of the gradient an operand receives.
int64_t gradient_elements(const Operand& operand, int64_t value_elements) {
  return operand.gradient_elements > 0 ? operand.gradient_elements : value_elements;
}

}  // namespace

LayerBuilder::OutputGradients LayerBuilder::output_gradients(int i, int absorber, const std::string& base,
                                                             OperatorGraph& graph, Gradients& gradients) const {
  const ForwardSpec& spec = ops_[i];
  OutputGradients out;
  for (size_t o = 0; o < spec.output_elements.size(); ++o) {
    const Value value{i, static_cast<int>(o)};
    out.bytes += bytes(value);
    const auto& contributions = gradients.of[key(value)];
    std::vector<int> nodes;
    if (absorber >= 0 || contributions.size() < 2) {
      nodes = nodes_of(contributions);
      const auto passes = accumulation_passes(contributions);
      out.absorbed.insert(out.absorbed.end(), passes.begin(), passes.end());
    } else {
      const std::string id = spec.output_elements.size() == 1 ? base + "acc" : base + "acc" + std::to_string(o);
      nodes = accumulate(graph, contributions, id, elements(value), precision_.activation_bytes);
    }
    for (int node : nodes) add_unique(out.dependencies, node);
  }
  std::sort(out.dependencies.begin(), out.dependencies.end());
  return out;
}

void LayerBuilder::add_backward_of(int i, OperatorGraph& graph, Gradients& gradients) const {
  const ForwardSpec& spec = ops_[i];
  // Transformer ids follow models.md (F3 → B3a); embedding and head ids keep their letter (H5 → HB5a).
  const std::string base = (spec.id[0] == 'F' ? "B" : spec.id.substr(0, 1) + "B") + spec.id.substr(1);

  // The first vector node that reads the output gradient absorbs the accumulation of that gradient.
  int absorber = -1;
  for (size_t k = 0; k < spec.backward.size(); ++k)
    if (spec.backward[k].needs_output_gradient && spec.backward[k].engine == Engine::Vector) {
      absorber = static_cast<int>(k);
      break;
    }
  const OutputGradients incoming = output_gradients(i, absorber, base, graph, gradients);

  CheckedInt saved_bytes = spec.saved_extra_bytes;
  for (const Value& value : spec.saved) saved_bytes += bytes(value);

  std::vector<int> created;
  for (size_t k = 0; k < spec.backward.size(); ++k) {
    const BackwardSpec& b = spec.backward[k];
    Operator op{base + b.suffix,   b.name,     b.engine, b.gemm, b.passes, b.collective, {}, 0, 0,
                b.weight_gradient, b.attention};
    if (b.needs_output_gradient) {
      op.predecessors = incoming.dependencies;
      op.read_bytes = checked_add(op.read_bytes, incoming.bytes);
    }
    for (int a : b.after) add_unique(op.predecessors, created.at(a));
    std::sort(op.predecessors.begin(), op.predecessors.end());
    if (static_cast<int>(k) == absorber && !incoming.absorbed.empty()) {
      op.passes.insert(op.passes.begin(), incoming.absorbed.begin(), incoming.absorbed.end());
      op.name += " + gradient accumulation";
    }
    if (b.engine == Engine::Vector || b.engine == Engine::Fused)
      op.read_bytes = checked_add(op.read_bytes, saved_bytes);
    for (int j : b.gradients_for) {
      const Operand& operand = spec.operands.at(j);
      if (!operand.differentiable) continue;
      op.write_bytes = checked_add(op.write_bytes, CheckedInt(gradient_elements(operand, elements(operand.value))) *
                                                       precision_.activation_bytes);
    }
    graph.ops.push_back(std::move(op));
    const int index = static_cast<int>(graph.ops.size()) - 1;
    created.push_back(index);
    for (int j : b.gradients_for) {
      const Operand& operand = spec.operands.at(j);
      if (!operand.differentiable) continue;
      gradients.of[key(operand.value)].push_back({index, gradient_elements(operand, elements(operand.value))});
    }
  }
}

OperatorGraph LayerBuilder::build_backward() const {
  OperatorGraph graph{Direction::Backward, {}};
  Gradients gradients;
  for (const auto& [value, to_next] : outputs_) gradients.of[key(value)].push_back({-1, elements(value)});
  for (int i = static_cast<int>(ops_.size()) - 1; i >= 0; --i)
    if (!ops_[i].backward.empty()) add_backward_of(i, graph, gradients);

  // The gradient handed to the previous layer is summed inside this layer.
  for (size_t in = 0; in < inputs_.size(); ++in) {
    const auto& contributions = gradients.of[key(Value{-1, static_cast<int>(in)})];
    const std::string prefix = kind_ == LayerKind::Transformer ? "B" : kind_ == LayerKind::Embedding ? "EB" : "HB";
    accumulate(graph, contributions, prefix + (in == 0 ? "0" : "0_" + std::to_string(in)), inputs_[in].elements,
               precision_.activation_bytes);
  }
  return graph;
}

Layer LayerBuilder::finish() const {
  Layer layer;
  layer.kind = kind_;
  CheckedInt parameters = 0, tied = 0, training_only = 0, routed = 0, activation_bytes = 0, input_bytes = 0,
             output_bytes = 0;
  layer.forward = build_forward();
  layer.backward = build_backward();
  std::set<ValueKey> saved;
  for (const ForwardSpec& spec : ops_) {
    for (const Weight& w : spec.weights) {
      parameters += w.elements;
      if (w.tied_copy) tied += w.elements;
      if (w.training_only) training_only += w.elements;
      if (w.routed_expert) routed += w.elements;
      if (w.sharded) layer.tensor_parallel = true;
    }
    for (const Value& value : spec.saved)
      if (saved.insert(key(value)).second) activation_bytes += bytes(value);
    activation_bytes += spec.saved_extra_bytes;
  }
  for (size_t in = 0; in < inputs_.size(); ++in)
    if (inputs_[in].from_previous_layer) input_bytes += bytes(Value{-1, static_cast<int>(in)});
  for (const auto& [value, to_next] : outputs_)
    if (to_next) output_bytes += bytes(value);
  layer.parameters = parameters;
  layer.tied_copy_parameters = tied;
  layer.training_only_parameters = training_only;
  layer.routed_expert_parameters = routed;
  layer.parameter_bytes = parameters * precision_.parameter_bytes;
  layer.activation_bytes = activation_bytes;
  layer.input_bytes = input_bytes;
  layer.output_bytes = output_bytes;
  // Totals over every operator, so that no later sum of a layer's figures can wrap either.
  layer.forward.gemm_flops();
  layer.backward.gemm_flops();
  return layer;
}

}  // namespace phaze::model
