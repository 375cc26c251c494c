// The head and loss layer of one tensor-parallel rank (models.md 4.2).

#include "model/layer_graph.h"
#include "model/layer_ops.h"

namespace phaze::model {

using namespace ops;

namespace {

Weight training_only(Weight w) {
  w.training_only = true;
  return w;
}

/// H6: softmax cross-entropy of the logits of T tokens over `rows` vocabulary rows of one rank; vocab-parallel
/// (t > 1) it needs three all-reduces of T values. Returns the loss.
Value cross_entropy(LayerBuilder& lb, Value logits, Value labels, CheckedInt T, CheckedInt rows, CheckedInt t,
                    const Precision& p) {
  const CheckedInt n = T * rows;
  if (t == 1) {
    ForwardSpec ce = vector_op("H6", "cross-entropy", {Operand{logits}, Operand{labels, false}},
                               {fwd(VectorKind::CrossEntropy, n, rows)}, T, {bwd(VectorKind::CrossEntropy, n, rows)});
    ce.saved = {labels};
    ce.saved_extra_bytes = n * p.activation_bytes;  // the softmax
    return lb.out(lb.add(ce));
  }
  ForwardSpec max =
      vector_op("H6a", "logits row maximum", {Operand{logits, false}}, {fwd(VectorKind::Max, n, rows)}, T, {});
  max.backward.clear();
  const Value local_max = lb.out(lb.add(max));
  ForwardSpec max_all = leave_tp_op("H6b", "all-reduce of the row maxima", local_max, T, t, p);
  max_all.backward.clear();
  const Value row_max = lb.out(lb.add(max_all));
  ForwardSpec ce = vector_op("H6c", "exp, row sum and target logit",
                             {Operand{logits}, Operand{row_max, false}, Operand{labels, false}},
                             {fwd(VectorKind::CrossEntropy, n, rows)}, T, {bwd(VectorKind::CrossEntropy, n, rows)});
  ce.name = "exp, row sum and target logit";
  ce.backward[0].name = "cross-entropy backward (softmax − one-hot)";
  ce.output_elements = {T, T};
  ce.saved = {labels};
  ce.saved_extra_bytes = n * p.activation_bytes;
  const int partial = lb.add(ce);
  const Value sums =
      lb.out(lb.add(leave_tp_op("H6d", "all-reduce of the sums of exponentials", lb.out(partial, 0), T, t, p)));
  const Value targets =
      lb.out(lb.add(leave_tp_op("H6e", "all-reduce of the target logits", lb.out(partial, 1), T, t, p)));
  return lb.out(lb.add(vector_op("H6f", "loss: log-sum-exp − target logit", {Operand{sums}, Operand{targets}},
                                 {fwd(VectorKind::Log, T)}, T, {bwd(VectorKind::Log, T)})));
}

/// H7–H9: BERT's next-sentence head on the first token of each of the b sequences: the pooler (part of the
/// published model), the classifier and its loss (pre-training only).
void next_sentence_head(LayerBuilder& lb, Value hidden, CheckedInt b, CheckedInt h, const Precision& p) {
  ForwardSpec pooler =
      linear_op("H7", "pooler dense + tanh", Gemm{b, h, h, 1}, hidden, {replicated_weight(h * h), replicated_weight(h)},
                Epilogue{true, false, VectorKind::Tanh}, p);
  pooler.operands[0].gradient_elements = b * h;
  pooler.saved.clear();
  pooler.saved_extra_bytes += b * h * p.activation_bytes;  // the first tokens
  const Value pooled = lb.out(lb.add(pooler));
  const Value scores = lb.out(lb.add(linear_op(
      "H8", "NSP classifier", Gemm{b, 2, h, 1}, pooled,
      {training_only(replicated_weight(2 * h)), training_only(replicated_weight(2))}, Epilogue{true, false, {}}, p)));
  const Value nsp_labels = lb.input("next-sentence labels", b, p.index_bytes, false);
  ForwardSpec nsp = vector_op("H9", "NSP cross-entropy", {Operand{scores}, Operand{nsp_labels, false}},
                              {fwd(VectorKind::CrossEntropy, 2 * b, 2)}, b, {bwd(VectorKind::CrossEntropy, 2 * b, 2)});
  nsp.saved = {nsp_labels};
  nsp.saved_extra_bytes = 2 * b * p.activation_bytes;
  lb.output(lb.out(lb.add(nsp)), false);
}

}  // namespace

Layer build_head_layer(const ModelSpec& m, const Shape& shape, const Precision& p) {
  const CheckedInt t = shape.tp, b = shape.micro_batch, T = shape.tokens(), h = m.hidden;
  const CheckedInt rows = padded_vocab(m, t) / t;
  const bool bert = m.head == HeadKind::BertPretraining;

  LayerBuilder lb(LayerKind::Head, p);
  const Value x = lb.input("hidden state", T * h, p.activation_bytes, true);
  const Value labels = lb.input("labels", T, p.index_bytes, false);
  Value hidden = x;
  if (m.final_norm)
    hidden = lb.out(lb.add(norm_op("H1", m.norm == NormKind::LayerNorm ? "final LayerNorm" : "final RMSNorm", m.norm, x,
                                   T * h, h, m.biases)));

  // The LM head's input: BERT's MLM transform (replicated over the ranks), OPT's projection to 512.
  Value lm_in = hidden;
  CheckedInt width = h;
  if (bert) {
    const Value dense =
        lb.out(lb.add(linear_op("H2", "MLM transform dense + bias + GELU", Gemm{T, h, h, 1}, hidden,
                                {training_only(replicated_weight(h * h)), training_only(replicated_weight(h))},
                                Epilogue{true, false, VectorKind::Gelu}, p)));
    ForwardSpec norm = norm_op("H3", "MLM transform LayerNorm", m.norm, dense, T * h, h, m.biases);
    norm.weights[0].training_only = true;
    lm_in = lb.out(lb.add(norm));
  } else if (m.word_embedding_dim != h) {
    width = m.word_embedding_dim;
    lm_in = lb.out(lb.add(
        linear_op("H2", "project_out", Gemm{T, width, h, 1}, hidden, {replicated_weight(h * width)}, Epilogue{}, p)));
  }
  if (t > 1) lm_in = lb.out(lb.add(enter_tp_op("H4", lm_in, T * width, t, p)));

  std::vector<Weight> logit_weights{Weight{rows * width, t > 1, m.tied_head, false}};
  if (bert) logit_weights.push_back(training_only(split_weight(rows, t)));
  const Value logits = lb.out(lb.add(linear_op("H5", bert ? "LM logits + bias" : "LM logits", Gemm{T, rows, width, 1},
                                               lm_in, logit_weights, Epilogue{bert, false, {}}, p)));
  lb.output(cross_entropy(lb, logits, labels, T, rows, t, p), false);
  if (bert) next_sentence_head(lb, hidden, b, h, p);
  return lb.finish();
}

}  // namespace phaze::model
