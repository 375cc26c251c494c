#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "util/checked_int.h"

namespace phaze::model {

/// Which cores run an operator: a tensor core (GEMM), a vector core, a tensor core with a fused
/// element-wise epilogue on its paired vector core, the chip's link (a collective), or nothing (layout).
enum class Engine { Tensor, Vector, Fused, Comm, None };

enum class Direction { Forward, Backward };

/// Kinds of element-wise or row-wise vector work. The cost model prices each kind per element (and per
/// row for row-wise kinds) and per direction.
enum class VectorKind {
  Add,       ///< element-wise add (residual add, gradient accumulation)
  Mul,       ///< element-wise product of two tensors
  Scale,     ///< multiply by a constant (1/√d_h)
  BiasAdd,   ///< add a broadcast bias
  BiasGrad,  ///< column sums of a gradient into a bias gradient
  Mask,      ///< add an attention mask / mask out-of-range token ids
  Dropout,   ///< dropout with a 1-byte mask
  Relu,
  Gelu,
  Tanh,
  SwiGlu,     ///< SiLU(gate) ⊙ up
  Rope,       ///< rotary position embedding on q or k
  LayerNorm,  ///< row-wise
  RmsNorm,    ///< row-wise
  Softmax,    ///< row-wise
  Max,        ///< row-wise maximum
  Log,
  CrossEntropy,  ///< row-wise softmax cross-entropy (max, subtract, exp, sum, log, target pick)
  Gather,        ///< embedding lookup (memory traffic only)
  ScatterAdd,    ///< embedding gradient into its table
  TopK,          ///< a router's choice of k of E scores: one compare-and-select sweep per chosen expert
  Sigmoid,       ///< 1 / (1 + e^-x) (a shared expert's gate)
  /// A fused attention kernel's probabilities from the scores and each row's stored log-sum-exp, P = e^(S − lse)
  /// (forward); backward, dS = P ⊙ (dP − D) with D each row's dO·O.
  Exp,
};

/// A GEMM in (M, N, K, G) notation: G independent products C[M×N] = A[M×K] · B[K×N].
struct Gemm {
  int64_t m = 0, n = 0, k = 0, batch = 1;
  /// Multiply-accumulates; SizeOverflow beyond int64_t.
  int64_t macs() const { return CheckedInt(m) * n * k * batch; }
  int64_t flops() const { return CheckedInt(2) * macs(); }
  bool operator==(const Gemm&) const = default;
};

/// One pass of vector work over `elements` elements; `row_length` > 0 for row-wise kinds.
struct VectorPass {
  VectorKind kind = VectorKind::Add;
  Direction direction = Direction::Forward;
  int64_t elements = 0;
  int64_t row_length = 0;
  bool operator==(const VectorPass&) const = default;
};

/// A ring collective over `ranks` tensor-parallel ranks carrying `bytes` bytes per rank.
struct Collective {
  int64_t bytes = 0;
  int64_t ranks = 1;
  /// A tensor-parallel all-reduce (of `bytes` on every rank), or an expert-parallel all-to-all (every rank
  /// sends its `bytes`, split evenly over the ranks, to the ranks t apart).
  enum class Kind { AllReduce, AllToAll } kind = Kind::AllReduce;
  /// Devices between consecutive ranks: 1 for a tensor-parallel group, t (etp when folded) for the ranks of an
  /// expert-parallel all-to-all.
  int64_t stride = 1;
  bool operator==(const Collective&) const = default;
};

/// The attention core of a layer as one fused kernel (flash-style): the scores and probabilities of each
/// block of queries live in the on-chip buffers and never reach HBM (docs/accelerator.md, section 6.4).
/// Forward: S = Q·Kᵀ, the online softmax, O = P·V. Backward: S recomputed, dP = dO·Vᵀ, dV = Pᵀ·dO,
/// dS = P ⊙ (dP − rowsum(dO ⊙ O)), dQ = dS·K, dK = dSᵀ·Q. Without a causal mask every product is the full
/// s × s one; with it the kernel runs the blocks of kBlock queries × kBlock keys on or below the diagonal only,
/// n(n + 1)/2 of the n² blocks (n = ⌈s / kBlock⌉): that share of each product's work (share()).
struct AttentionCore {
  /// Queries and keys per block of a causal kernel (FlashAttention's and the TPU kernels' usual 128).
  static constexpr int64_t kBlock = 128;
  int64_t heads = 0;              ///< query heads times micro-batch sequences (the products' batch)
  int64_t group = 1;              ///< query heads sharing one key/value head
  int64_t seq = 0;                ///< s, queries and keys per sequence
  int64_t qk_dim = 0, v_dim = 0;  ///< elements of a head's query and key, and of its value
  Direction direction = Direction::Forward;
  bool causal = false;  ///< only the blocks on or below the diagonal run
  int64_t kv_heads() const { return heads / group; }
  /// Blocks of each head the kernel runs: n(n + 1)/2 when causal (each kBlock × kBlock), else 1 (s × s).
  int64_t blocks() const;
  /// Scores the kernel computes: heads · s² without a mask, heads · blocks · kBlock² with it.
  int64_t scores() const;
  /// The share of the full products' work the kernel runs: scores() / (heads · s²), 1 without a mask.
  double share() const;
  /// The kernel's products in full, in the order it runs them (forward: S, O; backward: S, dP, dV, dQ, dK);
  /// it runs share() of each.
  std::vector<Gemm> products() const;
  /// FLOPs the kernel runs: share() of its products', exactly (each product spans s × s scores per head).
  int64_t flops() const;
  bool operator==(const AttentionCore&) const = default;
};

/// One node of a layer's operator DAG (forward or backward).
struct Operator {
  std::string id;    ///< e.g. "F3", "B3a" (ids of models.md where it has them)
  std::string name;  ///< e.g. "QKV projection + bias"
  Engine engine = Engine::None;
  std::optional<Gemm> gemm;              ///< Tensor and Fused engines
  std::vector<VectorPass> passes;        ///< Vector: the work; Tensor/Fused: epilogue work on the output
  std::optional<Collective> collective;  ///< Comm engine
  std::vector<int> predecessors;         ///< indices (in the same graph) of operators this one waits for
  int64_t read_bytes = 0;                ///< activation bytes read (inputs, saved tensors, incoming gradient)
  int64_t write_bytes = 0;               ///< activation bytes written (outputs, gradients, masks)
  bool weight_gradient = false;          ///< a weight-gradient node: nothing in the layer waits for it
  /// Fused engine: the attention core as one kernel (gemm empty; `passes` its vector work).
  std::optional<AttentionCore> attention;

  /// FLOPs of the operator's products: its GEMM's, or those of a fused attention core's products.
  int64_t gemm_flops() const;
};

/// A DAG of operators stored in a topological order (every predecessor index is smaller).
struct OperatorGraph {
  Direction direction = Direction::Forward;
  std::vector<Operator> ops;

  int64_t gemm_flops() const;
  /// Index of the operator with this id, or -1.
  int find(const std::string& id) const;
};

const char* to_string(Engine);
const char* to_string(VectorKind);
const char* to_string(Direction);

}  // namespace phaze::model
