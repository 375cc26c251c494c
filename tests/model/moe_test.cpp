// Mixture-of-experts models and heads of their own size: parameter counts against closed forms written out
// from each model's published config and against the rounded totals their publishers give, the configs
// against the presets, and the operators of an expert layer.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "model/hf_config.h"
#include "model/layer_graph.h"
#include "model/model_spec.h"
#include "model/operator_roles.h"
#include "model/presets.h"
#include "model_test_util.h"
#include "util/input_error.h"

namespace {

using phaze::InputError;
using phaze::model::ModelSpec;
using phaze::model::Precision;

std::string data_path(const std::string& relative) {
  return std::string(PHAZE_TEST_DATA) + "/" + relative;
}

/// A Llama-shaped mixture of experts as its config describes it.
struct MoeShape {
  int64_t layers, hidden, heads, kv_heads, head_dim, experts, top_k, expert_ffn, shared_ffn, vocab;
  bool qkv_bias, qk_norm, shared_gate;

  /// Parameters of the whole model: per layer the four attention projections (with Qwen2's query, key and
  /// value biases, Qwen3's two head norms), the router, E gated experts of 3·h·f weights, the shared expert
  /// and its gate, two RMSNorms; the untied embedding and head, the final norm.
  int64_t total() const {
    const int64_t q = heads * head_dim, kv = kv_heads * head_dim;
    int64_t layer = hidden * q + 2 * hidden * kv + q * hidden;
    if (qkv_bias) layer += q + 2 * kv;
    if (qk_norm) layer += 2 * head_dim;
    layer += hidden * experts + experts * 3 * hidden * expert_ffn;
    if (shared_ffn > 0) layer += 3 * hidden * shared_ffn + (shared_gate ? hidden : 0);
    layer += 2 * hidden;
    return layers * layer + 2 * vocab * hidden + hidden;
  }
  /// Those one token uses: k of the E routed experts.
  int64_t active() const { return total() - layers * (experts - top_k) * 3 * hidden * expert_ffn; }
};

struct Published {
  const char* preset;
  const char* config;
  MoeShape shape;
  double total_billions, active_billions;  // as the publisher rounds them
  double digits;                           // the rounding step, billions
  bool floored;                            // the publisher cuts the figure down rather than rounding it
};

// Sources of the rounded figures: Mistral AI's Mixtral of Experts (arXiv 2401.04088: 47B, 13B active) and its
// 8x22B announcement (141B, 39B active); the Qwen2 technical report (arXiv 2407.10671, Table 1: 57B, 14B
// activated; the model card's 57.4B); the Qwen3 model card (30.5B, 3.3B activated). Qwen's cards cut to the
// tenth below (Qwen3-30B-A3B activates 3.35 B).
const Published kModels[] = {
    {"mixtral-8x7b", "hf/mixtral-8x7b/config.json",
     MoeShape{32, 4096, 32, 8, 128, 8, 2, 14336, 0, 32000, false, false, false}, 47, 13, 1, false},
    {"mixtral-8x22b", "hf/mixtral-8x22b/config.json",
     MoeShape{56, 6144, 48, 8, 128, 8, 2, 16384, 0, 32768, false, false, false}, 141, 39, 1, false},
    {"qwen2-57b-a14b", "hf/qwen2-57b-a14b/config.json",
     MoeShape{28, 3584, 28, 4, 128, 64, 8, 2560, 20480, 151936, true, false, true}, 57.4, 14.2, 0.1, true},
    {"qwen3-30b-a3b", "hf/qwen3-30b-a3b/config.json",
     MoeShape{48, 2048, 32, 4, 128, 128, 8, 768, 0, 151936, false, true, false}, 30.5, 3.3, 0.1, true},
};

TEST(MixtureOfExperts, TotalAndActiveParametersAsPublished) {
  for (const Published& p : kModels) {
    SCOPED_TRACE(p.preset);
    const auto totals = phaze::model::model_totals(phaze_test::preset(p.preset), 4096, Precision{});
    EXPECT_EQ(totals.parameters, p.shape.total());
    EXPECT_EQ(totals.active_parameters, p.shape.active());
    const auto rounded = [&](int64_t n) {
      const double steps = static_cast<double>(n) / 1e9 / p.digits;
      return (p.floored ? std::floor(steps) : std::round(steps)) * p.digits;
    };
    EXPECT_NEAR(rounded(totals.parameters), p.total_billions, 1e-9);
    EXPECT_NEAR(rounded(totals.active_parameters), p.active_billions, 1e-9);
  }
  // Mixtral 8x7B's exact count, as its published safetensors index totals it.
  EXPECT_EQ(kModels[0].shape.total(), 46702792704);
}

TEST(MixtureOfExperts, ConfigsReproduceThePresets) {
  for (const Published& p : kModels) {
    SCOPED_TRACE(p.config);
    ModelSpec spec = phaze::model::read_hf_config(data_path(p.config));
    const ModelSpec expected = phaze_test::preset(p.preset);
    spec.name = expected.name;
    spec.description = expected.description;
    EXPECT_TRUE(spec == expected);
  }
}

TEST(MixtureOfExperts, ExpertLayerOperatorsAndFlops) {
  // Mixtral 8x7B at one 4,096-token sequence, t = 2: the router, top-k and load-balancing loss over every
  // token, the tokens permuted into E grouped GEMMs of T·k/E rows, each expert's columns split over the ranks.
  const ModelSpec m = phaze_test::preset("mixtral-8x7b");
  const int64_t T = 4096, t = 2, h = 4096, E = 8, k = 2, f = 14336;
  const auto graph = phaze::model::build_layer_graph(m, phaze::model::Shape{T, 1, t}, Precision{}, "test");
  const auto& ops = graph.transformer.forward;
  for (const char* id : {"F14r", "F14t", "F14l", "F14p", "F15g", "F15u", "F15s", "F16", "F16c"})
    EXPECT_GE(ops.find(id), 0) << id;
  const auto& gate = ops.ops[static_cast<size_t>(ops.find("F15g"))];
  ASSERT_TRUE(gate.gemm.has_value());
  EXPECT_EQ(gate.gemm->m, T * k / E);
  EXPECT_EQ(gate.gemm->n, f / t);
  EXPECT_EQ(gate.gemm->k, h);
  EXPECT_EQ(gate.gemm->batch, E);
  // Forward GEMM FLOPs of the layer: attention projections and scores as a dense layer's, the router 2·T·h·E,
  // and the experts 3 GEMMs of 2·(T·k)·h·f/t.
  const int64_t q = 32 * 128, kv = 8 * 128;
  const int64_t projections = 2 * T * h * (q + 2 * kv) / t + 2 * T * q * h / t;
  const int64_t scores = 2 * 2 * T * T * 128 * (32 / t);
  const int64_t router = 2 * T * h * E, experts = 3 * 2 * (T * k) * h * (f / t);
  EXPECT_EQ(ops.gemm_flops(), projections + scores + router + experts);
  // The FP8 roles of the dense MLP hold for the experts' GEMMs, and none of the new operators is taken for
  // the attention core.
  EXPECT_TRUE(phaze::model::runs_in_fp8("F15g") && phaze::model::runs_in_fp8("F16"));
  for (const char* id : {"F14r", "F14t", "F14p", "F16c", "F16m"}) EXPECT_FALSE(phaze::model::in_attention_core(id));
}

TEST(MixtureOfExperts, ExpertParallelismSplitsTheExpertsAndExchangesTheTokens) {
  // Mixtral 8x7B, 4,096 tokens, t = 2, ep = 4: each rank holds 8/4 experts of 14,336/2 columns that see 4 ×
  // 1,024 rows; each of the 2 ranks of a group dispatches half of the group's 8,192 token copies of 4,096
  // values by all-to-all over the 4 groups, and the group gathers them (k copies of each token) around the
  // experts.
  const ModelSpec m = phaze_test::preset("mixtral-8x7b");
  const int64_t T = 4096, t = 2, ep = 4, h = 4096, f = 14336;
  const auto graph = phaze::model::build_layer_graph(m, phaze::model::Shape{T, 1, t, ep}, Precision{}, "test");
  const auto& ops = graph.transformer.forward;
  const auto op = [&](const char* id) { return ops.ops[static_cast<size_t>(ops.find(id))]; };
  const auto gate = *op("F15g").gemm;
  EXPECT_EQ(gate.m, T * 2 / 8 * ep);
  EXPECT_EQ(gate.n, f / t);
  EXPECT_EQ(gate.batch, 8 / ep);
  for (const char* id : {"F14d", "F16d"}) {
    ASSERT_TRUE(op(id).collective.has_value()) << id;
    EXPECT_EQ(op(id).collective->kind, phaze::model::Collective::Kind::AllToAll);
    EXPECT_EQ(op(id).collective->ranks, ep);
    EXPECT_EQ(op(id).collective->bytes, T * 2 * h / t * 2) << id;
  }
  EXPECT_EQ(op("F17").collective->bytes, T * 2 * h * 2);  // the experts' outputs, k copies of each token
  // The rank holds 2 of the 8 experts: a quarter of the routed weights of ep = 1.
  const auto whole = phaze::model::build_layer_graph(m, phaze::model::Shape{T, 1, t, 1}, Precision{}, "test");
  EXPECT_EQ(graph.transformer.routed_expert_parameters * ep, whole.transformer.routed_expert_parameters);
  EXPECT_EQ(graph.transformer.routed_expert_parameters, 2 * 3 * h * (f / t));
  // The layer's GEMM FLOPs per rank do not change: the same rows, split differently.
  EXPECT_EQ(graph.transformer.forward.gemm_flops(), whole.transformer.forward.gemm_flops());
  // An expert-parallel width must divide the experts, and a dense model has none.
  EXPECT_THROW(phaze::model::build_layer_graph(m, phaze::model::Shape{T, 1, t, 3}, Precision{}, "ep3"), InputError);
  EXPECT_THROW(phaze::model::build_layer_graph(phaze_test::preset("llama2-7b"), phaze::model::Shape{T, 1, 1, 2},
                                               Precision{}, "dense"),
               InputError);
}

TEST(MixtureOfExperts, ParallelFoldingRoutesTheRanksOwnTokens) {
  // Mixtral 8x7B, 4,096 tokens, t = 2 with the experts' layout folded as etp 1 × ep 4: each rank routes its
  // 2,048 tokens, sends all their 4,096 copies by all-to-all, and its 2 whole experts (14,336 columns) see
  // 4 × 512 rows; no tensor-parallel collective in the expert block.
  const ModelSpec m = phaze_test::preset("mixtral-8x7b");
  const int64_t T = 4096, t = 2, ep = 4, h = 4096, f = 14336;
  const auto graph = phaze::model::build_layer_graph(m, phaze::model::Shape{T, 1, t, ep, 1}, Precision{}, "test");
  const auto& ops = graph.transformer.forward;
  const auto op = [&](const char* id) { return ops.ops[static_cast<size_t>(ops.find(id))]; };
  EXPECT_EQ(op("F14r").gemm->m, T / t);
  const auto gate = *op("F15g").gemm;
  EXPECT_EQ(gate.m, T / t * 2 / 8 * ep);
  EXPECT_EQ(gate.n, f);
  EXPECT_EQ(gate.batch, 8 / ep);
  EXPECT_EQ(op("F14d").collective->bytes, T / t * 2 * h * 2);
  EXPECT_LT(ops.find("F14"), 0);
  EXPECT_LT(ops.find("F17"), 0);
  // The experts' FLOPs per rank: the rank's share of the routed work, T·k/t rows through whole experts.
  const auto whole = phaze::model::build_layer_graph(m, phaze::model::Shape{T, 1, t, 1}, Precision{}, "test");
  const auto expert_flops = [](const phaze::model::OperatorGraph& g) {
    int64_t sum = 0;
    for (const char* id : {"F15g", "F15u", "F16"}) sum += g.ops[static_cast<size_t>(g.find(id))].gemm_flops();
    return sum;
  };
  EXPECT_EQ(expert_flops(ops), expert_flops(whole.transformer.forward));
}

TEST(MixtureOfExperts, CapacityIsMegatronCoresCeilingOfTheBalancedShareTimesTheFactor) {
  // Megatron-Core's get_capacity: ⌈(T·k / E) · c⌉ in double precision. Mixtral 8x7B (k 2 of E 8) routing
  // T = 200 tokens: a balanced share of 50 copies per expert; at c = 1.1 the product is 55.00000000000001 in
  // binary floating point, so the capacity is 56 as Megatron-Core computes it, not 55; at c = 0.5, 25. With
  // ep = 4 a rank's 2 experts take that many copies from each of the 4 ranks.
  const ModelSpec m = phaze_test::preset("mixtral-8x7b");
  const int64_t T = 200, ep = 4, h = 4096;
  struct Case {
    double load;
    bool padded;
    int64_t rows, permuted_rows;
  };
  for (const Case c : {Case{1.0, false, 50, 50}, Case{1.1, true, 56, 56}, Case{1.1, false, 56, 50},
                       Case{0.5, false, 25, 25}, Case{0.5, true, 25, 25}}) {
    SCOPED_TRACE(c.load);
    phaze::model::Shape shape{T, 1, 1, ep};
    shape.expert_load = c.load;
    shape.expert_padded = c.padded;
    const auto graph = phaze::model::build_layer_graph(m, shape, Precision{}, "test");
    const auto& ops = graph.transformer.forward;
    const auto op = [&](const char* id) { return ops.ops[static_cast<size_t>(ops.find(id))]; };
    EXPECT_EQ(op("F15g").gemm->m, c.rows * ep);
    EXPECT_EQ(op("F16").gemm->m, c.rows * ep);
    // The busiest rank receives its experts' full capacity; it permutes only the copies it keeps (all of
    // them, padding included, when every expert is padded).
    EXPECT_EQ(op("F14d").collective->bytes, c.rows * 8 * h * 2);
    EXPECT_EQ(op("F14p").passes.front().elements, c.permuted_rows * 8 * h);
    // The router and the unpermutation see the rank's own 400 copies whatever the capacity.
    EXPECT_EQ(op("F14r").gemm->m, T);
    EXPECT_EQ(op("F16c").passes.front().elements, T * 2 * h);
  }
  // Where E does not divide T·k (Qwen3-30B-A3B, 1,000 tokens, 8 of 128 experts), the permutation gathers the
  // experts' ⌈T·k/E⌉ = 63 rows each, and its backward pass scatters back the T·k = 8,000 copies themselves.
  const auto qwen = phaze::model::build_layer_graph(phaze_test::preset("qwen3-30b-a3b"),
                                                    phaze::model::Shape{1000, 1, 1}, Precision{}, "qwen")
                        .transformer;
  EXPECT_EQ(qwen.forward.ops[static_cast<size_t>(qwen.forward.find("F14p"))].passes.front().elements, 63 * 128 * 2048);
  for (const auto& pass : qwen.backward.ops[static_cast<size_t>(qwen.backward.find("B14p"))].passes)
    if (pass.kind == phaze::model::VectorKind::ScatterAdd) {
      EXPECT_EQ(pass.elements, 8000 * 2048);
    }
  // The load lies in (0, E/k]: no expert takes more than all T tokens.
  for (double load : {0.0, -1.0, 4.0001}) {
    phaze::model::Shape shape{T, 1, 1, ep};
    shape.expert_load = load;
    EXPECT_THROW(phaze::model::build_layer_graph(m, shape, Precision{}, "load"), InputError) << load;
  }
  phaze::model::Shape whole{T, 1, 1, ep};
  whole.expert_load = 4;  // every expert takes every token
  const auto all = phaze::model::build_layer_graph(m, whole, Precision{}, "all").transformer.forward;
  EXPECT_EQ(all.ops[static_cast<size_t>(all.find("F15g"))].gemm->m, T * ep);
}

TEST(MixtureOfExperts, TheSharedExpertRunsOnEveryTokenWhateverTheExpertsLayout) {
  // Qwen2-57B-A14B at 4,096 tokens, t = 2: folded (etp 1 × ep 4) the rank routes its 2,048 tokens, but its
  // shared expert, a dense MLP split over the 2 ranks, still takes all 4,096 rows of 20,480 / 2 columns.
  const ModelSpec m = phaze_test::preset("qwen2-57b-a14b");
  for (int64_t etp : {0, 1}) {
    const auto graph = phaze::model::build_layer_graph(m, phaze::model::Shape{4096, 1, 2, 4, etp}, Precision{}, "t");
    const auto& ops = graph.transformer.forward;
    const auto gemm = [&](const char* id) { return *ops.ops[static_cast<size_t>(ops.find(id))].gemm; };
    EXPECT_EQ(gemm("F15xg").m, 4096) << etp;
    EXPECT_EQ(gemm("F15xg").n, 20480 / 2) << etp;
    EXPECT_EQ(gemm("F16xg").m, 4096) << etp;
    EXPECT_EQ(gemm("F14r").m, etp == 1 ? 2048 : 4096) << etp;
  }
}

TEST(MixtureOfExperts, QwenTwoSharedExpertIsGatedAndAddedToTheRoutedOnes) {
  const auto graph = phaze::model::build_layer_graph(phaze_test::preset("qwen2-57b-a14b"),
                                                     phaze::model::Shape{1024, 1, 1}, Precision{}, "test");
  for (const char* id : {"F15xg", "F15xu", "F16x", "F16xg", "F16xm", "F16m"})
    EXPECT_GE(graph.transformer.forward.find(id), 0) << id;
}

TEST(HeadSize, QueryProjectionIsHeadsTimesHeadSize) {
  // Qwen3-30B-A3B: 32 heads of 128 on a 2,048-wide model: the query projection is 2,048 → 4,096 and the
  // output projection 4,096 → 2,048; each head's query and key pass an RMSNorm of 128.
  const auto graph = phaze::model::build_layer_graph(phaze_test::preset("qwen3-30b-a3b"),
                                                     phaze::model::Shape{256, 1, 1}, Precision{}, "test");
  const auto& ops = graph.transformer.forward;
  const auto gemm = [&](const char* id) { return *ops.ops[static_cast<size_t>(ops.find(id))].gemm; };
  EXPECT_EQ(gemm("F3q").n, 4096);
  EXPECT_EQ(gemm("F3q").k, 2048);
  EXPECT_EQ(gemm("F10").n, 2048);
  EXPECT_EQ(gemm("F10").k, 4096);
  EXPECT_GE(ops.find("F4qn"), 0);
  EXPECT_GE(ops.find("F4kn"), 0);
}

TEST(MixtureOfExpertsErrors, ConfigsPhazeCannotModelNameTheKey) {
  const std::string base = R"("model_type": "qwen2_moe", "num_hidden_layers": 2, "hidden_size": 64,
      "num_attention_heads": 4, "num_key_value_heads": 4, "intermediate_size": 128, "vocab_size": 100,
      "max_position_embeddings": 128, "moe_intermediate_size": 32, "shared_expert_intermediate_size": 64,
      "num_experts": 4)";
  const std::pair<std::string, std::string> cases[] = {
      {base + R"(, "num_experts_per_tok": 2, "decoder_sparse_step": 2)", "decoder_sparse_step"},
      {base + R"(, "num_experts_per_tok": 2, "mlp_only_layers": [0])", "mlp_only_layers"},
      {base + R"(, "num_experts_per_tok": 5)", "num_experts_per_tok"},
      {base + R"(, "num_experts_per_tok": 2, "mlp_only_layers": 3)", "mlp_only_layers"}};
  for (const auto& [keys, field] : cases) {
    try {
      phaze::model::parse_hf_config("{" + keys + "}", "moe.json");
      FAIL() << keys;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  }
  // Experts' columns must split over the tensor-parallel ranks.
  ModelSpec m = phaze_test::preset("qwen3-30b-a3b");
  m.expert_ffn = 769;
  try {
    phaze::model::build_layer_graph(m, phaze::model::Shape{256, 1, 2}, Precision{}, "t2");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("moe_intermediate_size"), std::string::npos) << e.what();
  }
}

}  // namespace
