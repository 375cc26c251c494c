#include "model/layer_ops.h"

namespace phaze::model::ops {

namespace {

std::vector<int> all_operands(size_t count) {
  std::vector<int> indices;
  for (size_t i = 0; i < count; ++i) indices.push_back(static_cast<int>(i));
  return indices;
}

}  // namespace

ForwardSpec vector_op(std::string id, std::string name, std::vector<Operand> operands, std::vector<VectorPass> passes,
                      int64_t output_elements, std::vector<VectorPass> backward_passes) {
  ForwardSpec spec;
  spec.backward.push_back(BackwardSpec{"",
                                       name + " backward",
                                       Engine::Vector,
                                       std::nullopt,
                                       std::move(backward_passes),
                                       std::nullopt,
                                       true,
                                       {},
                                       all_operands(operands.size()),
                                       false,
                                       {}});
  spec.id = std::move(id);
  spec.name = std::move(name);
  spec.engine = Engine::Vector;
  spec.passes = std::move(passes);
  spec.operands = std::move(operands);
  spec.output_elements = {output_elements};
  return spec;
}

ForwardSpec norm_op(std::string id, std::string name, NormKind kind, Value x, int64_t elements, int64_t row,
                    bool with_bias) {
  const VectorKind vk = kind == NormKind::LayerNorm ? VectorKind::LayerNorm : VectorKind::RmsNorm;
  ForwardSpec spec = vector_op(std::move(id), std::move(name), {Operand{x}}, {fwd(vk, elements, row)}, elements,
                               {bwd(vk, elements, row)});
  const bool has_bias = kind == NormKind::LayerNorm && with_bias;
  spec.weights = {replicated_weight(has_bias ? CheckedInt(2) * row : CheckedInt(row))};
  spec.saved = {x};
  return spec;
}

ForwardSpec linear_op(std::string id, std::string name, Gemm gemm, Value x, std::vector<Weight> weights,
                      const Epilogue& epilogue, const Precision& precision) {
  const CheckedInt out = CheckedInt(gemm.m) * gemm.n * gemm.batch;
  ForwardSpec spec;
  spec.id = std::move(id);
  spec.name = name;
  spec.gemm = gemm;
  spec.operands = {Operand{x}};
  spec.output_elements = {out};
  spec.weights = std::move(weights);
  spec.saved = {x};
  if (epilogue.bias) spec.passes.push_back(fwd(VectorKind::BiasAdd, out));
  if (epilogue.scale) spec.passes.push_back(fwd(VectorKind::Scale, out));
  if (epilogue.activation) spec.passes.push_back(fwd(*epilogue.activation, out));
  spec.engine = spec.passes.empty() ? Engine::Tensor : Engine::Fused;

  std::vector<int> after;
  if (epilogue.activation) {
    // The activation's input is stashed; its backward (with the bias gradient) precedes both GEMMs.
    spec.saved_extra_bytes = out * precision.activation_bytes;
    std::vector<VectorPass> passes{bwd(*epilogue.activation, out)};
    if (epilogue.bias) passes.push_back(bwd(VectorKind::BiasGrad, out));
    spec.backward.push_back(BackwardSpec{"",
                                         name + ": activation backward",
                                         Engine::Vector,
                                         std::nullopt,
                                         passes,
                                         std::nullopt,
                                         true,
                                         {},
                                         {},
                                         false,
                                         {}});
    after = {0};
  }
  BackwardSpec data{"a",
                    name + ": data gradient",
                    Engine::Tensor,
                    Gemm{gemm.m, gemm.k, gemm.n, gemm.batch},
                    {},
                    std::nullopt,
                    !epilogue.activation,
                    after,
                    {0},
                    false,
                    {}};
  if (epilogue.scale) data.passes.push_back(bwd(VectorKind::Scale, out));
  BackwardSpec weight{"b",
                      name + ": weight gradient",
                      Engine::Tensor,
                      Gemm{gemm.k, gemm.n, gemm.m, gemm.batch},
                      {},
                      std::nullopt,
                      !epilogue.activation,
                      after,
                      {},
                      true,
                      {}};
  if (epilogue.bias && !epilogue.activation) weight.passes.push_back(bwd(VectorKind::BiasGrad, out));
  spec.backward.push_back(std::move(data));
  spec.backward.push_back(std::move(weight));
  return spec;
}

ForwardSpec enter_tp_op(std::string id, Value x, int64_t elements, int64_t tp, const Precision& precision) {
  ForwardSpec spec;
  spec.id = std::move(id);
  spec.name = "f (enter tensor-parallel region)";
  spec.engine = Engine::None;
  spec.operands = {Operand{x}};
  spec.output_elements = {elements};
  spec.backward.push_back(BackwardSpec{"",
                                       "f backward: all-reduce of the input gradient",
                                       Engine::Comm,
                                       std::nullopt,
                                       {},
                                       Collective{CheckedInt(elements) * precision.activation_bytes, tp},
                                       true,
                                       {},
                                       {0},
                                       false,
                                       {}});
  return spec;
}

ForwardSpec leave_tp_op(std::string id, std::string name, Value x, int64_t elements, int64_t tp,
                        const Precision& precision) {
  ForwardSpec spec;
  spec.id = std::move(id);
  spec.name = std::move(name);
  spec.engine = Engine::Comm;
  spec.collective = Collective{CheckedInt(elements) * precision.activation_bytes, tp};
  spec.operands = {Operand{x}};
  spec.output_elements = {elements};
  spec.backward.push_back(BackwardSpec{
      "", "g backward (identity)", Engine::None, std::nullopt, {}, std::nullopt, true, {}, {0}, false, {}});
  return spec;
}

ForwardSpec all_to_all_op(std::string id, std::string name, Value x, int64_t elements, int64_t ranks, int64_t stride,
                          const Precision& precision) {
  const Collective exchange{CheckedInt(elements) * precision.activation_bytes, ranks, Collective::Kind::AllToAll,
                            stride};
  ForwardSpec spec;
  spec.id = std::move(id);
  spec.name = name;
  spec.engine = Engine::Comm;
  spec.collective = exchange;
  spec.operands = {Operand{x}};
  spec.output_elements = {elements};
  spec.backward.push_back(
      BackwardSpec{"", name + " backward", Engine::Comm, std::nullopt, {}, exchange, true, {}, {0}, false, {}});
  return spec;
}

ForwardSpec layout_op(std::string id, std::string name, std::vector<Value> inputs,
                      std::vector<int64_t> output_elements) {
  ForwardSpec spec;
  spec.id = std::move(id);
  spec.name = name;
  spec.engine = Engine::None;
  for (const Value& v : inputs) spec.operands.push_back(Operand{v});
  spec.output_elements = std::move(output_elements);
  spec.backward.push_back(BackwardSpec{"",
                                       name + " backward",
                                       Engine::None,
                                       std::nullopt,
                                       {},
                                       std::nullopt,
                                       true,
                                       {},
                                       all_operands(inputs.size()),
                                       false,
                                       {}});
  return spec;
}

}  // namespace phaze::model::ops
