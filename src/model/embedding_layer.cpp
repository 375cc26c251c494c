// The embedding layer of one tensor-parallel rank (models.md 4.1).

#include "model/layer_graph.h"
#include "model/layer_ops.h"

namespace phaze::model {

using namespace ops;

namespace {

/// Looks up a replicated table (positions, token types) and adds it; backward scatter-adds into the table.
ForwardSpec table_add_op(std::string id, std::string name, Value x, std::vector<Operand> ids, CheckedInt rows,
                         CheckedInt T, CheckedInt h) {
  std::vector<Operand> operands{Operand{x}};
  operands.insert(operands.end(), ids.begin(), ids.end());
  ForwardSpec spec =
      vector_op(std::move(id), std::move(name), operands, {fwd(VectorKind::Gather, T * h), fwd(VectorKind::Add, T * h)},
                T * h, {bwd(VectorKind::ScatterAdd, T * h)});
  spec.weights = {replicated_weight(rows * h)};
  for (const Operand& operand : ids) spec.saved.push_back(operand.value);
  return spec;
}

}  // namespace

Layer build_embedding_layer(const ModelSpec& m, const Shape& shape, const Precision& p) {
  const CheckedInt t = shape.tp, T = shape.tokens(), h = m.hidden, ew = m.word_embedding_dim;
  const CheckedInt rows = padded_vocab(m, t) / t;

  LayerBuilder lb(LayerKind::Embedding, p);
  const Value ids = lb.input("token ids", T, p.index_bytes, false);

  std::vector<VectorPass> lookup_passes;
  if (t > 1) lookup_passes.push_back(fwd(VectorKind::Mask, T));  // token ids outside this rank's rows
  lookup_passes.push_back(fwd(VectorKind::Gather, T * ew));
  ForwardSpec lookup = vector_op("E1", t > 1 ? "word embedding lookup (vocab-parallel)" : "word embedding lookup",
                                 {Operand{ids, false}}, lookup_passes, T * ew, {bwd(VectorKind::ScatterAdd, T * ew)});
  lookup.backward[0].name = "word embedding gradient (scatter-add)";
  lookup.backward[0].weight_gradient = true;
  lookup.weights = {split_weight(rows * ew, t)};
  lookup.saved = {ids};
  Value x = lb.out(lb.add(lookup));
  if (t > 1) x = lb.out(lb.add(leave_tp_op("E2", "g: all-reduce of the looked-up embeddings", x, T * ew, t, p)));
  if (ew != h)
    x = lb.out(lb.add(linear_op("E3", "project_in", Gemm{T, h, ew, 1}, x, {replicated_weight(ew * h)}, Epilogue{}, p)));
  if (!m.rotary)
    x = lb.out(lb.add(
        table_add_op("E4", "position embedding lookup + add", x, {}, m.max_positions + m.position_offset, T, h)));
  if (m.token_types > 0) {
    const Value types = lb.input("token type ids", T, p.index_bytes, false);
    x = lb.out(lb.add(
        table_add_op("E5", "token-type embedding lookup + add", x, {Operand{types, false}}, m.token_types, T, h)));
  }
  if (m.embedding_norm) x = lb.out(lb.add(norm_op("E6", "embedding LayerNorm", m.norm, x, T * h, h, m.biases)));
  if (m.embedding_dropout && m.hidden_dropout > 0.0) {
    ForwardSpec dropout = vector_op("E7", "embedding dropout", {Operand{x}}, {fwd(VectorKind::Dropout, T * h)}, T * h,
                                    {bwd(VectorKind::Dropout, T * h)});
    dropout.saved_extra_bytes = T * h * p.mask_bytes;
    x = lb.out(lb.add(dropout));
  }
  lb.output(x, true);
  return lb.finish();
}

}  // namespace phaze::model
