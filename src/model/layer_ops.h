#pragma once

// Building blocks shared by the embedding, transformer and head layer builders: each returns the forward
// operator with its operands, weights, stashed tensors and backward rule.

#include <optional>
#include <string>
#include <vector>

#include "model/layer_builder.h"

namespace phaze::model::ops {

inline VectorPass fwd(VectorKind kind, int64_t elements, int64_t row_length = 0) {
  return VectorPass{kind, Direction::Forward, elements, row_length};
}
inline VectorPass bwd(VectorKind kind, int64_t elements, int64_t row_length = 0) {
  return VectorPass{kind, Direction::Backward, elements, row_length};
}

/// A weight split over the ranks when t > 1 (`elements` already per rank).
inline Weight split_weight(int64_t elements, int64_t tp) {
  return Weight{elements, tp > 1, false};
}
inline Weight replicated_weight(int64_t elements) {
  return Weight{elements, false, false};
}
/// Weights of routed experts (all E on each rank, each split over the t ranks).
inline Weight routed_expert_weight(int64_t elements, int64_t tp) {
  Weight w = split_weight(elements, tp);
  w.routed_expert = true;
  return w;
}

/// A vector operator over one value, stashing `saved` for its backward node with `backward_passes`.
ForwardSpec vector_op(std::string id, std::string name, std::vector<Operand> operands, std::vector<VectorPass> passes,
                      int64_t output_elements, std::vector<VectorPass> backward_passes);

/// LayerNorm or RMSNorm over rows of `row` elements; stashes its input.
ForwardSpec norm_op(std::string id, std::string name, NormKind kind, Value x, int64_t elements, int64_t row,
                    bool with_bias);

/// The epilogue of a linear layer, when it has one.
struct Epilogue {
  bool bias = false;                     ///< bias add (gradient: column sums)
  bool scale = false;                    ///< multiply by a constant (OPT's query scaling)
  std::optional<VectorKind> activation;  ///< GELU, ReLU or tanh; stashes its input
};

/// Y[M×N] = X[M×K] · W[K×N] with an optional epilogue: Tensor (no epilogue) or Fused. Stashes X; the
/// backward has the activation's vector node (if any), the data gradient (M, K, N) and the weight gradient
/// (K, N, M) carrying the bias gradient.
ForwardSpec linear_op(std::string id, std::string name, Gemm gemm, Value x, std::vector<Weight> weights,
                      const Epilogue& epilogue, const Precision& precision);

/// Megatron's operator f: identity forward, all-reduce of the input gradient backward.
ForwardSpec enter_tp_op(std::string id, Value x, int64_t elements, int64_t tp, const Precision& precision);
/// Megatron's operator g: all-reduce forward, identity backward.
ForwardSpec leave_tp_op(std::string id, std::string name, Value x, int64_t elements, int64_t tp,
                        const Precision& precision);
/// An expert-parallel all-to-all of `elements` elements of `x` on each of `ranks` ranks, `stride` devices
/// apart; its backward sends the gradients back the same way.
ForwardSpec all_to_all_op(std::string id, std::string name, Value x, int64_t elements, int64_t ranks, int64_t stride,
                          const Precision& precision);
/// A layout-only operator (no cost either way).
ForwardSpec layout_op(std::string id, std::string name, std::vector<Value> inputs,
                      std::vector<int64_t> output_elements);

}  // namespace phaze::model::ops
