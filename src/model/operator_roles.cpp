#include "model/operator_roles.h"

#include <cctype>

namespace phaze::model {

namespace {

int64_t split(int64_t value, int64_t t) {
  return (value + t - 1) / t;
}

void split_outside_region(OperatorGraph& graph, int64_t t) {
  for (Operator& op : graph.ops) {
    if (op.engine != Engine::Vector || !outside_tensor_parallel_region(op.id)) continue;
    op.read_bytes = split(op.read_bytes, t);
    op.write_bytes = split(op.write_bytes, t);
    for (VectorPass& p : op.passes) p.elements = split(p.elements, t);
  }
}

}  // namespace

int operator_number(const std::string& id) {
  size_t i = 0;
  while (i < id.size() && !std::isdigit(static_cast<unsigned char>(id[i]))) ++i;
  if (i == id.size()) return -1;
  int n = 0;
  while (i < id.size() && std::isdigit(static_cast<unsigned char>(id[i])) && n < 100000) n = n * 10 + (id[i++] - '0');
  return n;
}

bool in_attention_core(const std::string& id) {
  const int n = operator_number(id);
  return n >= 5 && n <= 8;
}

bool in_shared_expert(const std::string& id) {
  size_t i = 0;
  while (i < id.size() && !std::isdigit(static_cast<unsigned char>(id[i]))) ++i;
  if (i == id.size()) return false;
  while (i < id.size() && std::isdigit(static_cast<unsigned char>(id[i]))) ++i;
  return i < id.size() && id[i] == 'x';
}

bool runs_in_fp8(const std::string& id) {
  const int n = operator_number(id);
  return n == 3 || n == 10 || n == 15 || n == 16;
}

bool is_fp8_gemm(const Operator& op) {
  return op.gemm && (op.engine == Engine::Tensor || op.engine == Engine::Fused) && runs_in_fp8(op.id);
}

bool outside_tensor_parallel_region(const std::string& id) {
  const int n = operator_number(id);
  return n == 1 || n == 12 || n == 13 || n == 18 || n == 19;
}

Layer sequence_parallel_layer(const Layer& layer, int64_t t) {
  Layer out = layer;
  if (layer.kind != LayerKind::Transformer || t <= 1) return out;
  split_outside_region(out.forward, t);
  split_outside_region(out.backward, t);
  return out;
}

}  // namespace phaze::model
