// The projection that opens one multi-token prediction module (DeepSeek-V3, Megatron-Core's --mtp-num-layers;
// docs/models.md 4.3).

#include "model/layer_graph.h"
#include "model/layer_ops.h"

namespace phaze::model {

using namespace ops;

Layer build_mtp_projection_layer(const ModelSpec& m, const Shape& shape, const Precision& p) {
  const CheckedInt t = shape.tp, T = shape.tokens(), h = m.hidden;
  LayerBuilder lb(LayerKind::Head, p);
  const Value x = lb.input("hidden state", T * h, p.activation_bytes, true);
  const Value ids = lb.input("next token ids", T, p.index_bytes, false);
  // The embedding table is the main model's: a lookup of the next tokens' rows, its gradient added to the
  // table's.
  ForwardSpec lookup = vector_op("M1", "embedding of the next tokens", {Operand{ids, false}},
                                 {fwd(VectorKind::Gather, T * h)}, T * h, {bwd(VectorKind::ScatterAdd, T * h)});
  lookup.saved = {ids};
  const Value embedded = lb.out(lb.add(lookup));
  auto norm = [&](const char* id, const std::string& name, Value in) {
    return lb.out(lb.add(norm_op(id, name + " RMSNorm", NormKind::RmsNorm, in, T * h, h, false)));
  };
  const Value e = norm("M2e", "embedding", embedded);
  const Value s = norm("M2h", "hidden state", x);
  const Value both = lb.out(lb.add(layout_op("M3", "concatenate", {e, s}, {T * 2 * h})));
  // Column-parallel 2h → h, its outputs gathered over the tensor-parallel group: a ring all-gather moves what
  // an all-reduce of half the bytes moves.
  Value y = lb.out(lb.add(linear_op("M4", "projection 2h → h", Gemm{T, h / t, 2 * h, 1}, both,
                                    {split_weight(2 * h * (h / t), t)}, Epilogue{}, p)));
  if (t > 1) y = lb.out(lb.add(leave_tp_op("M5", "gather the projection", y, T * h / 2, t, p)));
  lb.output(y, true);
  return lb.finish();
}

}  // namespace phaze::model
