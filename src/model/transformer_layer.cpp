// One transformer layer of one tensor-parallel rank (models.md section 3 and its variants in 3.3).

#include "model/layer_graph.h"
#include "model/layer_ops.h"

namespace phaze::model {

using namespace ops;

namespace {

const char* norm_name(NormKind kind) {
  return kind == NormKind::LayerNorm ? "LayerNorm" : "RMSNorm";
}

/// Bias (if any) + dropout (if any) + residual add after a row-parallel projection (F12, F18).
ForwardSpec residual_op(std::string id, const ModelSpec& m, Value branch, Value residual, CheckedInt n,
                        const Precision& p) {
  const bool dropout = m.hidden_dropout > 0.0;
  std::string name = std::string(m.biases ? "bias + " : "") + (dropout ? "dropout + " : "") + "residual add";
  std::vector<VectorPass> passes, backward;
  if (m.biases) passes.push_back(fwd(VectorKind::BiasAdd, n));
  if (dropout) passes.push_back(fwd(VectorKind::Dropout, n));
  passes.push_back(fwd(VectorKind::Add, n));
  if (dropout) backward.push_back(bwd(VectorKind::Dropout, n));
  backward.push_back(bwd(VectorKind::Add, n));  // the residual gradient copy
  if (m.biases) backward.push_back(bwd(VectorKind::BiasGrad, n));
  ForwardSpec spec =
      vector_op(std::move(id), std::move(name), {Operand{branch}, Operand{residual}}, passes, n, backward);
  if (m.biases) spec.weights = {replicated_weight(m.hidden)};
  if (dropout) spec.saved_extra_bytes = n * p.mask_bytes;
  return spec;
}

}  // namespace

Layer build_transformer_layer(const ModelSpec& m, const Shape& shape, const Precision& p) {
  const CheckedInt t = shape.tp, b = shape.micro_batch, s = shape.seq, T = shape.tokens();
  const CheckedInt h = m.hidden, dh = m.head_dim(), heads_t = m.heads / t, kv_t = m.kv_heads / t;
  const CheckedInt group = m.heads / m.kv_heads;  // query heads sharing one key/value head
  const CheckedInt f_t = m.ffn / t, q_cols = h / t, kv_cols = kv_t * dh;
  const CheckedInt scores_n = b * heads_t * s * s;

  LayerBuilder lb(LayerKind::Transformer, p);
  const Value x = lb.input("hidden state", T * h, p.activation_bytes, true);
  auto norm = [&](const char* id, const std::string& name, Value in) {
    return lb.out(lb.add(norm_op(id, name + " " + norm_name(m.norm), m.norm, in, T * h, h, m.biases)));
  };

  // Attention block.
  Value attn_in = m.pre_norm ? norm("F1", "input", x) : x;
  if (t > 1) attn_in = lb.out(lb.add(enter_tp_op("F2", attn_in, T * h, t, p)));

  Value q, k, v;
  if (m.fused_qkv) {
    const CheckedInt cols = q_cols + 2 * kv_cols;
    std::vector<Weight> w{split_weight(h * cols, t)};
    if (m.biases) w.push_back(split_weight(cols, t));
    const int qkv = lb.add(linear_op("F3", m.biases ? "QKV projection + bias" : "QKV projection", Gemm{T, cols, h, 1},
                                     attn_in, w, Epilogue{m.biases, false, {}}, p));
    const int split =
        lb.add(layout_op("F4", "split into heads", {lb.out(qkv)}, {T * q_cols, T * kv_cols, T * kv_cols}));
    q = lb.out(split, 0);
    k = lb.out(split, 1);
    v = lb.out(split, 2);
  } else {
    auto projection = [&](const char* id, const std::string& what, CheckedInt cols, bool scale) {
      std::vector<Weight> w{split_weight(h * cols, t)};
      if (m.biases) w.push_back(split_weight(cols, t));
      const std::string name = what + " projection" + (m.biases ? " + bias" : "") + (scale ? " + scale" : "");
      return lb.out(lb.add(linear_op(id, name, Gemm{T, cols, h, 1}, attn_in, w, Epilogue{m.biases, scale, {}}, p)));
    };
    q = projection("F3q", "query", q_cols, m.scale_query);
    k = projection("F3k", "key", kv_cols, false);
    v = projection("F3v", "value", kv_cols, false);
  }
  if (m.rotary) {
    auto rope = [&](const char* id, const char* name, Value in, CheckedInt n) {
      return lb.out(
          lb.add(vector_op(id, name, {Operand{in}}, {fwd(VectorKind::Rope, n)}, n, {bwd(VectorKind::Rope, n)})));
    };
    q = rope("F4q", "RoPE on q", q, T * q_cols);
    k = rope("F4k", "RoPE on k", k, T * kv_cols);
  }

  // Scores S = Q·Kᵀ, reduction over d_h. One key/value head serves `group` query heads, so the gradients
  // of K and V also reduce over the group's rows.
  const bool scale_scores = !m.scale_query;
  ForwardSpec scores;
  scores.id = "F5";
  scores.name = std::string("scores Q·Kᵀ") + (scale_scores ? " × 1/√d_h" : "") + " + mask";
  scores.engine = Engine::Fused;
  scores.gemm = Gemm{s, s, dh, b * heads_t};
  if (scale_scores) scores.passes.push_back(fwd(VectorKind::Scale, scores_n));
  scores.passes.push_back(fwd(VectorKind::Mask, scores_n));
  scores.operands = {Operand{q}, Operand{k}};
  scores.output_elements = {scores_n};
  scores.saved = {q, k};
  scores.backward = {
      BackwardSpec{
          "a", "dQ = dS·K", Engine::Tensor, Gemm{s, dh, s, b * heads_t}, {}, std::nullopt, true, {}, {0}, false},
      BackwardSpec{
          "b", "dK = dSᵀ·Q", Engine::Tensor, Gemm{s, dh, s * group, b * kv_t}, {}, std::nullopt, true, {}, {1}, false}};
  const Value score = lb.out(lb.add(scores));

  std::vector<VectorPass> softmax_bwd{bwd(VectorKind::Softmax, scores_n, s)};
  if (scale_scores) softmax_bwd.push_back(bwd(VectorKind::Scale, scores_n));
  ForwardSpec softmax =
      vector_op("F6", "softmax", {Operand{score}}, {fwd(VectorKind::Softmax, scores_n, s)}, scores_n, softmax_bwd);
  if (scale_scores) softmax.backward[0].name = "softmax backward, then × 1/√d_h";
  softmax.saved = {lb.next_out()};
  Value probs = lb.out(lb.add(softmax));
  if (m.attention_dropout > 0.0) {
    ForwardSpec dropout = vector_op("F7", "attention dropout", {Operand{probs}}, {fwd(VectorKind::Dropout, scores_n)},
                                    scores_n, {bwd(VectorKind::Dropout, scores_n)});
    dropout.saved_extra_bytes = scores_n * p.mask_bytes;
    probs = lb.out(lb.add(dropout));
  }

  // Context O = P·V, reduction over s.
  ForwardSpec context;
  context.id = "F8";
  context.name = "context P·V";
  context.engine = Engine::Tensor;
  context.gemm = Gemm{s, dh, s, b * heads_t};
  context.operands = {Operand{probs}, Operand{v}};
  context.output_elements = {T * q_cols};
  context.saved = {probs, v};
  context.backward = {
      BackwardSpec{
          "a", "dP = dO·Vᵀ", Engine::Tensor, Gemm{s, s, dh, b * heads_t}, {}, std::nullopt, true, {}, {0}, false},
      BackwardSpec{
          "b", "dV = Pᵀ·dO", Engine::Tensor, Gemm{s, dh, s * group, b * kv_t}, {}, std::nullopt, true, {}, {1}, false}};
  const Value ctx = lb.out(lb.add(context));
  const Value merged = lb.out(lb.add(layout_op("F9", "merge heads", {ctx}, {T * q_cols})));
  Value attn_out = lb.out(lb.add(linear_op("F10", "attention output projection", Gemm{T, h, q_cols, 1}, merged,
                                           {split_weight(q_cols * h, t)}, Epilogue{}, p)));
  if (t > 1) attn_out = lb.out(lb.add(leave_tp_op("F11", "g: all-reduce", attn_out, T * h, t, p)));
  Value h1 = lb.out(lb.add(residual_op("F12", m, attn_out, x, T * h, p)));

  // MLP block. Post-LN layers normalise the attention block's output, pre-LN layers the MLP input.
  Value mlp_in;
  if (m.pre_norm) {
    mlp_in = norm("F13", "post-attention", h1);
  } else {
    h1 = norm("F13", "attention output", h1);
    mlp_in = h1;
  }
  if (t > 1) mlp_in = lb.out(lb.add(enter_tp_op("F14", mlp_in, T * h, t, p)));

  Value act;
  if (m.activation == Activation::SwiGlu) {
    const Value gate = lb.out(lb.add(
        linear_op("F15g", "gate projection", Gemm{T, f_t, h, 1}, mlp_in, {split_weight(h * f_t, t)}, Epilogue{}, p)));
    const Value up = lb.out(lb.add(
        linear_op("F15u", "up projection", Gemm{T, f_t, h, 1}, mlp_in, {split_weight(h * f_t, t)}, Epilogue{}, p)));
    ForwardSpec swiglu = vector_op("F15s", "SiLU(gate) ⊙ up", {Operand{gate}, Operand{up}},
                                   {fwd(VectorKind::SwiGlu, T * f_t)}, T * f_t, {bwd(VectorKind::SwiGlu, T * f_t)});
    swiglu.saved = {gate, up};
    act = lb.out(lb.add(swiglu));
  } else {
    const VectorKind kind = m.activation == Activation::Relu ? VectorKind::Relu : VectorKind::Gelu;
    std::vector<Weight> w{split_weight(h * f_t, t)};
    if (m.biases) w.push_back(split_weight(f_t, t));
    const std::string name =
        std::string("FFN1") + (m.biases ? " + bias" : "") + " + " + (kind == VectorKind::Relu ? "ReLU" : "GELU");
    act = lb.out(lb.add(linear_op("F15", name, Gemm{T, f_t, h, 1}, mlp_in, w, Epilogue{m.biases, false, kind}, p)));
  }
  Value mlp_out =
      lb.out(lb.add(linear_op("F16", "FFN2", Gemm{T, h, f_t, 1}, act, {split_weight(f_t * h, t)}, Epilogue{}, p)));
  if (t > 1) mlp_out = lb.out(lb.add(leave_tp_op("F17", "g: all-reduce", mlp_out, T * h, t, p)));
  Value y = lb.out(lb.add(residual_op("F18", m, mlp_out, h1, T * h, p)));
  if (!m.pre_norm) y = norm("F19", "output", y);
  lb.output(y, true);
  return lb.finish();
}

}  // namespace phaze::model
