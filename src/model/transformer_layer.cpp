// One transformer layer of one tensor-parallel rank (models.md section 3 and its variants in 3.3).

#include <algorithm>
#include <cmath>

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

/// The sizes of one rank's layer that its blocks share.
struct LayerDims {
  CheckedInt t, b, s, T;       // tensor-parallel width, micro-batch, sequence, tokens b·s
  CheckedInt h, dh;            // hidden size, head size
  CheckedInt dqk, dv;          // elements of a head's query and key, and of its value
  CheckedInt heads_t, kv_t;    // query and key/value heads of one rank
  CheckedInt group;            // query heads sharing one key/value head
  CheckedInt f_t;              // FFN columns of one rank
  CheckedInt q_cols, kv_cols;  // query and key projection columns of one rank (heads · d_qk)
  CheckedInt v_cols, o_cols;   // value columns of one rank, and the context's (query heads · d_v)
  CheckedInt scores_n;         // attention scores of one rank: b · heads/t · s²
  CheckedInt ep, etp;          // expert-parallel and expert tensor-parallel widths
  double expert_load = 1;      // the busiest expert's copies over the balanced share (Shape::expert_load)
  bool expert_padded = false;  // every expert padded to its capacity
  bool fused_attention = false;
};

LayerDims dims_of(const ModelSpec& m, const Shape& shape) {
  LayerDims d;
  d.t = shape.tp;
  d.b = shape.micro_batch;
  d.s = shape.seq;
  d.T = shape.tokens();
  d.h = m.hidden;
  d.dh = m.head_dim();
  d.dqk = m.qk_head_dim();
  d.dv = m.v_head_dim();
  d.heads_t = m.heads / d.t;
  d.kv_t = kv_heads_per_rank(m, shape.tp);
  d.group = d.heads_t / d.kv_t;
  d.f_t = m.ffn / d.t;
  d.q_cols = d.heads_t * d.dqk;
  d.kv_cols = d.kv_t * d.dqk;
  d.v_cols = d.kv_t * d.dv;
  d.o_cols = d.heads_t * d.dv;
  d.scores_n = d.b * d.heads_t * d.s * d.s;
  d.ep = shape.ep;
  d.etp = shape.expert_tp();
  d.expert_load = shape.expert_load;
  d.expert_padded = shape.expert_padded;
  d.fused_attention = shape.fused_attention;
  return d;
}

/// RoPE turning `turned` of the `n` elements of `in` (all of them, or the rope part of each head, the rest
/// passing on unchanged): two multiplies, a rotate-half and an add per turned element.
Value rope(LayerBuilder& lb, const char* id, const char* name, Value in, CheckedInt turned, CheckedInt n) {
  return lb.out(
      lb.add(vector_op(id, name, {Operand{in}}, {fwd(VectorKind::Rope, turned)}, n, {bwd(VectorKind::Rope, turned)})));
}

struct QueryKeyValue {
  Value q, k, v;
};

/// F3–F4: the query, key and value projections (fused or not), and RoPE on q and k when the model has it.
QueryKeyValue project_qkv(LayerBuilder& lb, const ModelSpec& m, const LayerDims& d, Value attn_in, const Precision& p) {
  const CheckedInt t = d.t, T = d.T, h = d.h;
  // Key and value weights: split over t, or whole on every rank when their heads are replicated.
  const bool replicated = m.kv_heads < d.t;
  const auto kv_weight = [&](CheckedInt elements) {
    return replicated ? replicated_weight(elements) : split_weight(elements, t);
  };
  QueryKeyValue out;
  if (m.fused_qkv) {
    const CheckedInt cols = d.q_cols + d.kv_cols + d.v_cols;
    std::vector<Weight> w{split_weight(h * d.q_cols, t), kv_weight(h * (d.kv_cols + d.v_cols))};
    if (m.biases) w.insert(w.end(), {split_weight(d.q_cols, t), kv_weight(d.kv_cols + d.v_cols)});
    const int qkv = lb.add(linear_op("F3", m.biases ? "QKV projection + bias" : "QKV projection", Gemm{T, cols, h, 1},
                                     attn_in, w, Epilogue{m.biases, false, {}}, p));
    const int split =
        lb.add(layout_op("F4", "split into heads", {lb.out(qkv)}, {T * d.q_cols, T * d.kv_cols, T * d.v_cols}));
    out = {lb.out(split, 0), lb.out(split, 1), lb.out(split, 2)};
  } else {
    const bool bias = m.biases || m.qkv_bias;
    auto projection = [&](const char* id, const std::string& what, CheckedInt cols, bool scale) {
      const bool query = id == std::string("F3q");
      std::vector<Weight> w{query ? split_weight(h * cols, t) : kv_weight(h * cols)};
      if (bias) w.push_back(query ? split_weight(cols, t) : kv_weight(cols));
      const std::string name = what + " projection" + (bias ? " + bias" : "") + (scale ? " + scale" : "");
      return lb.out(lb.add(linear_op(id, name, Gemm{T, cols, h, 1}, attn_in, w, Epilogue{bias, scale, {}}, p)));
    };
    out.q = projection("F3q", "query", d.q_cols, m.scale_query);
    out.k = projection("F3k", "key", d.kv_cols, false);
    out.v = projection("F3v", "value", d.v_cols, false);
  }
  if (m.qk_norm) {
    // One norm of d_h elements per head (the layer's kind), its d_h weights shared by the heads.
    auto head_norm = [&](const char* id, const std::string& name, Value in, CheckedInt n) {
      return lb.out(lb.add(norm_op(id, name + " " + norm_name(m.norm), m.norm, in, n, d.dh, m.biases)));
    };
    out.q = head_norm("F4qn", "query head", out.q, T * d.q_cols);
    out.k = head_norm("F4kn", "key head", out.k, T * d.kv_cols);
  }
  if (m.rotary) {
    out.q = rope(lb, "F4q", "RoPE on q", out.q, T * d.q_cols, T * d.q_cols);
    out.k = rope(lb, "F4k", "RoPE on k", out.k, T * d.kv_cols, T * d.kv_cols);
  }
  return out;
}

/// F3–F4 of multi-head latent attention (DeepSeek-V2 and V3; docs/models.md 3.3). The down projections to
/// the query latent (F3qa) and to the key/value latent with the shared RoPE key part (F3kva) are duplicated
/// on every tensor-parallel rank, as Megatron-Core builds them; each latent is normalised (F4qa, F4kva) and
/// projected up, column-parallel, to the rank's heads: the queries' d_qk = d_nope + d_rope columns each
/// (F3qb), the keys' d_nope and the values' d_v (F3kvb). RoPE runs on the queries' rope part and the shared
/// key part (F4q, F4k), which every head's key then repeats (F4c).
QueryKeyValue project_latent_qkv(LayerBuilder& lb, const ModelSpec& m, const LayerDims& d, Value attn_in,
                                 const Precision& p) {
  const CheckedInt t = d.t, T = d.T, h = d.h, heads = d.heads_t, dn = d.dh, dr = m.rope_head_size, dv = d.dv;
  auto latent_norm = [&](const char* id, const std::string& name, Value in, CheckedInt cols, CheckedInt width) {
    return lb.out(lb.add(norm_op(id, name + " " + norm_name(m.norm), m.norm, in, T * cols, width, m.biases)));
  };
  auto projection = [&](const char* id, const std::string& name, Value in, CheckedInt k, CheckedInt n, Weight w) {
    return lb.out(lb.add(linear_op(id, name, Gemm{T, n, k, 1}, in, {w}, Epilogue{}, p)));
  };
  QueryKeyValue out;
  if (m.q_lora_rank > 0) {
    const CheckedInt r = m.q_lora_rank;
    const Value latent = projection("F3qa", "query down projection", attn_in, h, r, replicated_weight(h * r));
    const Value normed = latent_norm("F4qa", "query latent", latent, r, r);
    out.q = projection("F3qb", "query up projection", normed, r, d.q_cols, split_weight(r * d.q_cols, t));
  } else {
    out.q = projection("F3q", "query projection", attn_in, h, d.q_cols, split_weight(h * d.q_cols, t));
  }
  const CheckedInt r = m.kv_lora_rank;
  const Value down =
      projection("F3kva", "key/value down projection", attn_in, h, r + dr, replicated_weight(h * (r + dr)));
  const int parts = lb.add(layout_op("F4kvs", "split latent and RoPE key part", {down}, {T * r, T * dr}));
  const Value normed = latent_norm("F4kva", "key/value latent", lb.out(parts, 0), r, r);
  const CheckedInt up_cols = heads * (dn + dv);
  const Value up = projection("F3kvb", "key/value up projection", normed, r, up_cols, split_weight(r * up_cols, t));
  out.q = rope(lb, "F4q", "RoPE on q's rope part", out.q, T * heads * dr, T * d.q_cols);
  const Value k_rope = rope(lb, "F4k", "RoPE on the shared key part", lb.out(parts, 1), T * dr, T * dr);
  const int kv =
      lb.add(layout_op("F4c", "keys from their two parts, values", {up, k_rope}, {T * d.kv_cols, T * d.v_cols}));
  out.k = lb.out(kv, 0);
  out.v = lb.out(kv, 1);
  return out;
}

/// F5: the attention core as one fused kernel (AttentionCore); returns the context. It stashes q, k, v and
/// the softmax's row statistics (one FP32 log-sum-exp per query row), never the scores; its output, which the
/// backward kernel reads too, is the tensor the output projection stashes (merging the heads is a view), so
/// it is not counted twice. The dropout mask (if any) is regenerated from its seed in the backward kernel.
Value fused_attention_core(LayerBuilder& lb, const ModelSpec& m, const LayerDims& d, const QueryKeyValue& qkv) {
  const CheckedInt s = d.s, rows = d.b * d.heads_t * d.s;
  const bool scale_scores = !m.scale_query, dropout = m.attention_dropout > 0.0;
  const AttentionCore core{d.b * d.heads_t, d.group, s, d.dqk, d.dv, Direction::Forward, m.causal()};
  // The scores the kernel computes: a causal kernel skips the blocks above the diagonal. Its softmax rows are a
  // block long when causal (the online softmax works a block at a time), s otherwise.
  const CheckedInt scores_n = core.scores(), row = m.causal() ? AttentionCore::kBlock : d.s.value();
  ForwardSpec spec;
  spec.id = "F5";
  spec.name = "fused attention: Q·Kᵀ, softmax, P·V";
  spec.engine = Engine::Fused;
  spec.attention = core;
  // The online softmax's work per score: a running maximum, the exponential and the sum (one softmax pass),
  // the scaling and the mask; the rescaling of the output block is per row.
  if (scale_scores) spec.passes.push_back(fwd(VectorKind::Scale, scores_n));
  spec.passes.push_back(fwd(VectorKind::Mask, scores_n));
  spec.passes.push_back(fwd(VectorKind::Softmax, scores_n, row));
  if (dropout) spec.passes.push_back(fwd(VectorKind::Dropout, scores_n));
  spec.operands = {Operand{qkv.q}, Operand{qkv.k}, Operand{qkv.v}};
  spec.output_elements = {d.T * d.o_cols};
  spec.saved = {qkv.q, qkv.k, qkv.v};
  spec.saved_extra_bytes = rows * 4;
  // Backward: D = rowsum(dO ⊙ O) first, then per block the scores recomputed, scaled and masked, the
  // probabilities from the stored log-sum-exp, dS = P ⊙ (dP − D), and the scaling's gradient.
  std::vector<VectorPass> passes{fwd(VectorKind::Mul, d.T * d.o_cols)};
  if (scale_scores) passes.push_back(fwd(VectorKind::Scale, scores_n));
  passes.push_back(fwd(VectorKind::Mask, scores_n));
  passes.push_back(fwd(VectorKind::Exp, scores_n));
  if (dropout) passes.push_back(bwd(VectorKind::Dropout, scores_n));
  passes.push_back(bwd(VectorKind::Exp, scores_n));
  if (scale_scores) passes.push_back(bwd(VectorKind::Scale, scores_n));
  AttentionCore backward = core;
  backward.direction = Direction::Backward;
  BackwardSpec b{"",
                 "fused attention backward: dQ, dK, dV",
                 Engine::Fused,
                 std::nullopt,
                 passes,
                 std::nullopt,
                 true,
                 {},
                 {0, 1, 2},
                 false,
                 backward};
  spec.backward = {b};
  return lb.out(lb.add(spec));
}

/// F5–F8: the materialised attention core, scores, softmax, dropout and context; returns the context.
Value attention_core(LayerBuilder& lb, const ModelSpec& m, const LayerDims& d, const QueryKeyValue& qkv,
                     const Precision& p) {
  if (d.fused_attention) return fused_attention_core(lb, m, d, qkv);
  const CheckedInt s = d.s, dqk = d.dqk, dv = d.dv, scores_n = d.scores_n, heads = d.b * d.heads_t, kv = d.b * d.kv_t;
  // Scores S = Q·Kᵀ, reduction over d_h. One key/value head serves `group` query heads, so the gradients
  // of K and V also reduce over the group's rows.
  const bool scale_scores = !m.scale_query;
  ForwardSpec scores;
  scores.id = "F5";
  scores.name = std::string("scores Q·Kᵀ") + (scale_scores ? " × 1/√d_h" : "") + " + mask";
  scores.engine = Engine::Fused;
  scores.gemm = Gemm{s, s, dqk, heads};
  if (scale_scores) scores.passes.push_back(fwd(VectorKind::Scale, scores_n));
  scores.passes.push_back(fwd(VectorKind::Mask, scores_n));
  scores.operands = {Operand{qkv.q}, Operand{qkv.k}};
  scores.output_elements = {scores_n};
  scores.saved = {qkv.q, qkv.k};
  scores.backward = {
      BackwardSpec{
          "a", "dQ = dS·K", Engine::Tensor, Gemm{s, dqk, s, heads}, {}, std::nullopt, true, {}, {0}, false, {}},
      BackwardSpec{"b",
                   "dK = dSᵀ·Q",
                   Engine::Tensor,
                   Gemm{s, dqk, s * d.group, kv},
                   {},
                   std::nullopt,
                   true,
                   {},
                   {1},
                   false,
                   {}}};
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
  context.gemm = Gemm{s, dv, s, heads};
  context.operands = {Operand{probs}, Operand{qkv.v}};
  context.output_elements = {d.T * d.o_cols};
  context.saved = {probs, qkv.v};
  context.backward = {
      BackwardSpec{
          "a", "dP = dO·Vᵀ", Engine::Tensor, Gemm{s, s, dv, heads}, {}, std::nullopt, true, {}, {0}, false, {}},
      BackwardSpec{
          "b", "dV = Pᵀ·dO", Engine::Tensor, Gemm{s, dv, s * d.group, kv}, {}, std::nullopt, true, {}, {1}, false, {}}};
  return lb.out(lb.add(context));
}

/// Where one gated or plain FFN sits in the layer: its operator ids (the dense MLP's F15 and F16, a shared
/// expert's F15x and F16x), its rows (tokens, or tokens per expert) and columns per rank, and how many
/// experts run it side by side as one grouped GEMM (1 for a dense FFN).
struct FfnPlace {
  std::string first, second;  // ids of the first projection (and its gate/up/activation) and of the second
  std::string what;           // "", "expert ", "shared expert "
  CheckedInt rows, cols, experts;
  bool routed = false;  // the routed experts (their weights are routed_expert weights)
};

/// A weight of the FFN at `at`: a routed expert's for the routed experts.
Weight ffn_weight(const FfnPlace& at, CheckedInt elements, CheckedInt t) {
  return at.routed ? routed_expert_weight(elements, t) : split_weight(elements, t);
}

/// F15: the FFN's first projection and activation (SwiGLU's gate and up projections, or FFN1 with ReLU or
/// GELU in its epilogue); returns the activation.
Value ffn_activation(LayerBuilder& lb, const ModelSpec& m, const LayerDims& d, const FfnPlace& at, Value in,
                     const Precision& p) {
  const CheckedInt t = d.t, h = d.h, rows = at.rows, cols = at.cols, g = at.experts;
  const Gemm gemm{rows, cols, h, g};
  if (m.activation == Activation::SwiGlu) {
    const Value gate = lb.out(lb.add(linear_op(at.first + "g", at.what + "gate projection", gemm, in,
                                               {ffn_weight(at, g * h * cols, t)}, Epilogue{}, p)));
    const Value up = lb.out(lb.add(linear_op(at.first + "u", at.what + "up projection", gemm, in,
                                             {ffn_weight(at, g * h * cols, t)}, Epilogue{}, p)));
    const CheckedInt n = g * rows * cols;
    ForwardSpec swiglu = vector_op(at.first + "s", "SiLU(gate) ⊙ up", {Operand{gate}, Operand{up}},
                                   {fwd(VectorKind::SwiGlu, n)}, n, {bwd(VectorKind::SwiGlu, n)});
    swiglu.saved = {gate, up};
    return lb.out(lb.add(swiglu));
  }
  const VectorKind kind = m.activation == Activation::Relu ? VectorKind::Relu : VectorKind::Gelu;
  std::vector<Weight> w{ffn_weight(at, g * h * cols, t)};
  if (m.biases) w.push_back(ffn_weight(at, g * cols, t));
  const std::string name =
      at.what + "FFN1" + (m.biases ? " + bias" : "") + " + " + (kind == VectorKind::Relu ? "ReLU" : "GELU");
  return lb.out(lb.add(linear_op(at.first, name, gemm, in, w, Epilogue{m.biases, false, kind}, p)));
}

/// F15–F16: one FFN; returns its output.
Value ffn(LayerBuilder& lb, const ModelSpec& m, const LayerDims& d, const FfnPlace& at, Value in, const Precision& p) {
  const Value act = ffn_activation(lb, m, d, at, in, p);
  return lb.out(lb.add(linear_op(at.second, at.what + "FFN2", Gemm{at.rows, d.h, at.cols, at.experts}, act,
                                 {ffn_weight(at, at.experts * at.cols * d.h, d.t)}, Epilogue{}, p)));
}

/// The mixture-of-experts MLP of one rank (docs/models.md 3.3): the router's scores and top-k choice (F14r,
/// F14t) with the load-balancing loss (F14l), the tokens permuted into expert order (F14p), the routed
/// experts as grouped GEMMs (F15, F16) with every expert's columns split over the t ranks, the outputs
/// unpermuted and summed with their router weights (F16c), and the shared expert (F15x, F16x, its gate
/// F16xg) added (F16m). Routing is balanced at load 1: each expert gets ⌈T·k/E⌉ of the T·k token copies. At
/// load λ (a capacity factor, or the busiest rank's imbalance) each expert takes ⌈T·k/E · λ⌉ of a rank's
/// copies, Megatron-Core's capacity: the experts and the all-to-alls of the busiest rank carry that many,
/// while the rank's own permutation moves its balanced share (all λ of it when every expert is padded to
/// its capacity, and no more than it keeps when tokens are dropped). With
/// expert parallelism each rank holds E/ep experts: each of the t ranks of a group dispatches 1/t of the
/// group's permuted tokens by all-to-all to the groups holding their experts (F14d) and gets as many back
/// (F16d), so its E/ep experts see ep times the rows. With t > 1 the tensor-parallel group gathers the
/// permuted tokens before the experts and reduces their outputs after them (F14, F17: k copies of each
/// token where a dense layer moves one), as Megatron-Core's token dispatcher does; the shared expert has the
/// dense layer's own (F14x, F17x). With an expert tensor-parallel width etp other than t (parallel folding)
/// each rank routes its own ⌈T/t⌉ tokens (the sequence-parallel shard), dispatches all its permuted copies,
/// and its expert tensor-parallel group of etp gathers them (etp times the rows) around experts of expert
/// f/etp columns.
Value moe_mlp(LayerBuilder& lb, const ModelSpec& m, const LayerDims& d, Value in, const Precision& p) {
  const CheckedInt h = d.h, t = d.t, E = m.experts, k = m.experts_per_token, ep = d.ep, etp = d.etp;
  const bool folded = etp != t;
  const CheckedInt T = folded ? (d.T + t - 1) / t : d.T;  // the tokens this rank routes
  const CheckedInt routed = T * k, balanced = (routed + E - 1) / E;
  // Each expert's copies from this rank on the busiest rank, and those this rank permutes itself.
  // (λ ≤ E/k keeps it within the rank's T tokens.)
  const CheckedInt rows =
      d.expert_load == 1 ? balanced
                         : CheckedInt(static_cast<int64_t>(std::ceil(static_cast<double>(routed.value()) /
                                                                     static_cast<double>(E.value()) * d.expert_load)));
  const CheckedInt local = d.expert_padded ? rows : std::min(rows, balanced);
  const CheckedInt permuted = rows * E * h;
  // What the rank sends by all-to-all (each of a group of t its 1/t share, or all its own when folded) and
  // what its expert tensor-parallel group gathers.
  const CheckedInt dispatched = folded ? permuted : (permuted + t - 1) / t;
  const CheckedInt gathered = folded ? permuted * etp : permuted;
  const CheckedInt expert_rows = folded ? rows * ep * etp : rows * ep;
  const Value scores = lb.out(
      lb.add(linear_op("F14r", "router scores", Gemm{T, E, h, 1}, in, {replicated_weight(E * h)}, Epilogue{}, p)));
  // The score (a softmax over the experts, or a sigmoid per expert), the group choice where routing is
  // group-limited (each group's score, the best groups), and the top k.
  const VectorKind score = m.router_sigmoid ? VectorKind::Sigmoid : VectorKind::Softmax;
  const CheckedInt row = m.router_sigmoid ? CheckedInt(0) : E;
  std::vector<VectorPass> route{fwd(score, T * E, row)};
  if (m.expert_groups > 0) {
    const CheckedInt groups = m.expert_groups;
    route.push_back(fwd(VectorKind::TopK, T * E * 2, E / groups));  // each group's best two
    route.push_back(fwd(VectorKind::TopK, T * groups * m.expert_groups_per_token, groups));
  }
  route.push_back(fwd(VectorKind::TopK, T * E * k, E));
  ForwardSpec top = vector_op("F14t",
                              std::string("router ") + (m.router_sigmoid ? "sigmoid" : "softmax") +
                                  (m.expert_groups > 0 ? ", group-limited top-k" : " and top-k"),
                              {Operand{scores}}, route, T * k, {bwd(score, T * E, row)});
  top.saved = {lb.next_out()};
  top.saved_extra_bytes = routed * p.index_bytes;  // the chosen experts
  const Value weights = lb.out(lb.add(top));
  ForwardSpec aux = vector_op("F14l", "load-balancing loss", {Operand{scores, false}}, {fwd(VectorKind::Mul, T * E)}, 1,
                              {bwd(VectorKind::Mul, T * E)});
  lb.output(lb.out(lb.add(aux)), false);
  ForwardSpec permute = vector_op(
      "F14p", "permute tokens to their experts", {Operand{in}}, {fwd(VectorKind::Gather, local * E * h)}, permuted,
      {bwd(VectorKind::ScatterAdd, (d.expert_padded ? local * E : std::min(routed, local * E)) * h)});
  Value grouped = lb.out(lb.add(permute));
  // The expert-parallel ranks are etp apart (the t ranks of a group each exchanging with its peers).
  if (ep > 1) grouped = lb.out(lb.add(all_to_all_op("F14d", "dispatch all-to-all", grouped, dispatched, ep, etp, p)));
  if (etp > 1) grouped = lb.out(lb.add(enter_tp_op("F14", grouped, gathered, etp, p)));
  Value experts =
      ffn(lb, m, d, FfnPlace{"F15", "F16", "expert ", expert_rows, m.expert_ffn / etp, E / ep, true}, grouped, p);
  if (etp > 1) experts = lb.out(lb.add(leave_tp_op("F17", "reduce the experts' outputs", experts, gathered, etp, p)));
  if (ep > 1) experts = lb.out(lb.add(all_to_all_op("F16d", "combine all-to-all", experts, dispatched, ep, etp, p)));
  ForwardSpec combine = vector_op("F16c", "unpermute and weight by the router", {Operand{experts}, Operand{weights}},
                                  {fwd(VectorKind::Mul, routed * h), fwd(VectorKind::Add, routed * h)}, T * h,
                                  {bwd(VectorKind::Mul, routed * h), bwd(VectorKind::Gather, routed * h)});
  combine.saved = {experts, weights};
  Value out = lb.out(lb.add(combine));
  if (m.shared_expert_ffn == 0) return out;
  // The shared expert is a dense MLP on all the layer's tokens, whatever the experts' layout.
  const CheckedInt all = d.T;
  const Value shared_in = t > 1 ? lb.out(lb.add(enter_tp_op("F14x", in, all * h, t, p))) : in;
  Value shared =
      ffn(lb, m, d, FfnPlace{"F15x", "F16x", "shared expert ", all, m.shared_expert_ffn / t, 1}, shared_in, p);
  if (t > 1) shared = lb.out(lb.add(leave_tp_op("F17x", "g: all-reduce", shared, all * h, t, p)));
  if (m.shared_expert_gate) {
    const Value gate =
        lb.out(lb.add(linear_op("F16xg", "shared expert gate + sigmoid", Gemm{all, 1, h, 1}, in, {replicated_weight(h)},
                                Epilogue{false, false, VectorKind::Sigmoid}, p)));
    ForwardSpec gated = vector_op("F16xm", "shared expert × gate", {Operand{shared}, Operand{gate}},
                                  {fwd(VectorKind::Mul, all * h)}, all * h, {bwd(VectorKind::Mul, all * h)});
    gated.saved = {shared, gate};
    shared = lb.out(lb.add(gated));
  }
  return lb.out(lb.add(vector_op("F16m", "routed + shared experts", {Operand{out}, Operand{shared}},
                                 {fwd(VectorKind::Add, all * h)}, all * h, {bwd(VectorKind::Add, all * h)})));
}

/// One transformer layer; `dense_mlp` gives a mixture of experts' layer its dense FFN of `ffn` columns.
Layer transformer_layer(const ModelSpec& m, const Shape& shape, const Precision& p, bool dense_mlp) {
  const LayerDims d = dims_of(m, shape);
  const CheckedInt t = d.t, T = d.T, h = d.h;

  LayerBuilder lb(LayerKind::Transformer, p);
  const Value x = lb.input("hidden state", T * h, p.activation_bytes, true);
  auto norm = [&](const char* id, const std::string& name, Value in) {
    return lb.out(lb.add(norm_op(id, name + " " + norm_name(m.norm), m.norm, in, T * h, h, m.biases)));
  };

  // Attention block.
  Value attn_in = m.pre_norm ? norm("F1", "input", x) : x;
  if (t > 1) attn_in = lb.out(lb.add(enter_tp_op("F2", attn_in, T * h, t, p)));
  const QueryKeyValue qkv = m.mla() ? project_latent_qkv(lb, m, d, attn_in, p) : project_qkv(lb, m, d, attn_in, p);
  const Value ctx = attention_core(lb, m, d, qkv, p);
  const Value merged = lb.out(lb.add(layout_op("F9", "merge heads", {ctx}, {T * d.o_cols})));
  Value attn_out = lb.out(lb.add(linear_op("F10", "attention output projection", Gemm{T, h, d.o_cols, 1}, merged,
                                           {split_weight(d.o_cols * h, t)}, Epilogue{}, p)));
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
  Value mlp_out;
  if (m.moe() && !dense_mlp) {
    mlp_out = moe_mlp(lb, m, d, mlp_in, p);  // with its own tensor-parallel collectives
  } else {
    if (t > 1) mlp_in = lb.out(lb.add(enter_tp_op("F14", mlp_in, T * h, t, p)));
    mlp_out = ffn(lb, m, d, FfnPlace{"F15", "F16", "", T, d.f_t, 1}, mlp_in, p);
    if (t > 1) mlp_out = lb.out(lb.add(leave_tp_op("F17", "g: all-reduce", mlp_out, T * h, t, p)));
  }
  Value y = lb.out(lb.add(residual_op("F18", m, mlp_out, h1, T * h, p)));
  if (!m.pre_norm) y = norm("F19", "output", y);
  lb.output(y, true);
  return lb.finish();
}

}  // namespace

Layer build_transformer_layer(const ModelSpec& m, const Shape& shape, const Precision& p) {
  return transformer_layer(m, shape, p, false);
}

Layer build_dense_transformer_layer(const ModelSpec& m, const Shape& shape, const Precision& p) {
  return transformer_layer(m, shape, p, true);
}

}  // namespace phaze::model
