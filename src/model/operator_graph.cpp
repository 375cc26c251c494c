#include "model/operator_graph.h"

#include "model/layer.h"

namespace phaze::model {

int64_t AttentionCore::blocks() const {
  if (!causal) return 1;
  const CheckedInt n = (seq + kBlock - 1) / kBlock;
  return n * (n + 1) / 2;
}

int64_t AttentionCore::scores() const {
  if (!causal) return CheckedInt(heads) * seq * seq;
  return CheckedInt(heads) * blocks() * kBlock * kBlock;
}

double AttentionCore::share() const {
  return static_cast<double>(scores()) /
         (static_cast<double>(heads) * static_cast<double>(seq) * static_cast<double>(seq));
}

std::vector<Gemm> AttentionCore::products() const {
  const int64_t s = seq, kv = kv_heads(), g = group;
  if (direction == Direction::Forward) return {Gemm{s, s, qk_dim, heads}, Gemm{s, v_dim, s, heads}};
  // The key and value gradients reduce over the group's query heads, as in the materialised form.
  return {Gemm{s, s, qk_dim, heads}, Gemm{s, s, v_dim, heads}, Gemm{s, v_dim, CheckedInt(s) * g, kv},
          Gemm{s, qk_dim, s, heads}, Gemm{s, qk_dim, CheckedInt(s) * g, kv}};
}

int64_t AttentionCore::flops() const {
  // Each product spans the s² scores of each head (its batch times its group, for the key/value gradients)
  // and one more dimension d: 2 · d FLOPs per score.
  CheckedInt per_score = 0;
  for (const Gemm& p : products()) per_score += CheckedInt(2) * p.macs() / (CheckedInt(seq) * seq * heads);
  return per_score * scores();
}

int64_t Operator::gemm_flops() const {
  if (gemm) return gemm->flops();
  return attention ? attention->flops() : 0;
}

int64_t OperatorGraph::gemm_flops() const {
  CheckedInt total = 0;
  for (const Operator& op : ops) total += op.gemm_flops();
  return total;
}

int OperatorGraph::find(const std::string& id) const {
  for (size_t i = 0; i < ops.size(); ++i)
    if (ops[i].id == id) return static_cast<int>(i);
  return -1;
}

const char* to_string(Engine engine) {
  switch (engine) {
    case Engine::Tensor: return "TC";
    case Engine::Vector: return "VC";
    case Engine::Fused: return "TC+VC";
    case Engine::Comm: return "COMM";
    case Engine::None: return "-";
  }
  return "?";
}

const char* to_string(VectorKind kind) {
  switch (kind) {
    case VectorKind::Add: return "add";
    case VectorKind::Mul: return "mul";
    case VectorKind::Scale: return "scale";
    case VectorKind::BiasAdd: return "bias_add";
    case VectorKind::BiasGrad: return "bias_grad";
    case VectorKind::Mask: return "mask";
    case VectorKind::Dropout: return "dropout";
    case VectorKind::Relu: return "relu";
    case VectorKind::Gelu: return "gelu";
    case VectorKind::Tanh: return "tanh";
    case VectorKind::SwiGlu: return "swiglu";
    case VectorKind::Rope: return "rope";
    case VectorKind::LayerNorm: return "layernorm";
    case VectorKind::RmsNorm: return "rmsnorm";
    case VectorKind::Softmax: return "softmax";
    case VectorKind::Max: return "max";
    case VectorKind::Log: return "log";
    case VectorKind::CrossEntropy: return "cross_entropy";
    case VectorKind::Gather: return "gather";
    case VectorKind::ScatterAdd: return "scatter_add";
    case VectorKind::TopK: return "top_k";
    case VectorKind::Sigmoid: return "sigmoid";
    case VectorKind::Exp: return "exp";
  }
  return "?";
}

const char* to_string(Direction direction) {
  return direction == Direction::Forward ? "forward" : "backward";
}

const char* to_string(LayerKind kind) {
  switch (kind) {
    case LayerKind::Embedding: return "embedding";
    case LayerKind::Transformer: return "transformer";
    case LayerKind::Head: return "head";
  }
  return "?";
}

}  // namespace phaze::model
