// GEMM FLOPs of layers and whole models against models.md 3.1, 3.2 and 5.2.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "model/layer_graph.h"
#include "model/model_spec.h"
#include "model_test_util.h"

namespace {

using phaze::model::model_totals;
using phaze::model::Precision;
using phaze_test::admissible_tp;
using phaze_test::build;
using phaze_test::preset;
using phaze_test::preset_refs;
using phaze_test::within_relative;

/// Forward MACs of one transformer layer at t = 1 (models.md 3.1): T (4h^2 + 2hf) + 2 b s^2 h, with 3hf for
/// a gated FFN.
int64_t layer_forward_macs(int64_t b, int64_t s, int64_t h, int64_t f, bool gated) {
  const int64_t T = b * s;
  return T * (4 * h * h + (gated ? 3 : 2) * h * f) + 2 * b * s * s * h;
}

TEST(LayerFlops, ForwardMacsMatchTable52) {
  struct Case {
    const char* name;
    int64_t projections;  // projections + FFN
    int64_t attention;    // Q K^T + P V
    int64_t total;
  };
  const Case cases[] = {
      {"bert-large", 6442450944, 536870912, 6979321856},
      {"megatron-bert", 6442450944, 536870912, 6979321856},
      {"gpt2-xl", 31457280000, 3355443200, 34812723200},
      {"opt-350m", 25769803776, 8589934592, 34359738368},
      {"llama2-7b", 828928688128, 137438953472, 966367641600},
      {"megatron-gpt2-xl", 12884901888, 2147483648, 15032385536},
      {"megatron-gpt2-54", 45298483200, 4026531840, 49325015040},
      {"megatron-gpt2-72", 115964116992, 6442450944, 122406567936},
      {"gpt3-175b", 3710851743744, 103079215104, 3813930958848},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const auto spec = preset(c.name);
    const int64_t s = spec.default_seq, h = spec.hidden, f = spec.ffn;
    const bool gated = std::string(c.name) == "llama2-7b";
    // the table is the closed form
    EXPECT_EQ(c.projections + c.attention, c.total);
    EXPECT_EQ(s * (4 * h * h + (gated ? 3 : 2) * h * f), c.projections);
    EXPECT_EQ(2 * s * s * h, c.attention);
    EXPECT_EQ(layer_forward_macs(1, s, h, f, gated), c.total);

    const auto graph = build(spec, s, 1, 1);
    EXPECT_EQ(graph.transformer.forward_flops(), 2 * c.total);
  }
}

TEST(LayerFlops, BackwardIsTwiceForwardForEveryTransformerLayer) {
  for (const auto& ref : preset_refs()) {
    const auto spec = preset(ref.name);
    for (int64_t t : admissible_tp(spec)) {
      for (int64_t b : {1, 2}) {
        SCOPED_TRACE(std::string(ref.name) + " t=" + std::to_string(t) + " b=" + std::to_string(b));
        const auto graph = build(spec, spec.default_seq, b, t);
        EXPECT_GT(graph.transformer.forward_flops(), 0);
        EXPECT_EQ(graph.transformer.backward_flops(), 2 * graph.transformer.forward_flops());
      }
    }
  }
}

TEST(LayerFlops, SumOverTensorParallelRanksEqualsUnsplitLayer) {
  for (const auto& ref : preset_refs()) {
    const auto spec = preset(ref.name);
    for (int64_t b : {1, 2}) {
      const auto base = build(spec, spec.default_seq, b, 1);
      const int64_t s = spec.default_seq;
      // forward MACs at t = 1 are linear in b (models.md 3.1)
      const bool gated = spec.activation == phaze::model::Activation::SwiGlu;
      EXPECT_EQ(base.transformer.forward_flops(), 2 * layer_forward_macs(b, s, spec.hidden, spec.ffn, gated))
          << ref.name << " b=" << b;
      for (int64_t t : admissible_tp(spec)) {
        SCOPED_TRACE(std::string(ref.name) + " t=" + std::to_string(t) + " b=" + std::to_string(b));
        const auto split = build(spec, s, b, t);
        EXPECT_EQ(t * split.transformer.forward_flops(), base.transformer.forward_flops());
        EXPECT_EQ(t * split.transformer.backward_flops(), base.transformer.backward_flops());
      }
    }
  }
}

TEST(LayerFlops, AdmissibleWidthsOfTable13) {
  // models.md 1.3: GPT-2 XL only t = 1 (25 heads); Megatron GPT-2 54 layers 1, 2, 4 (20 heads).
  EXPECT_EQ(admissible_tp(preset("gpt2-xl")), (std::vector<int64_t>{1}));
  EXPECT_EQ(admissible_tp(preset("megatron-gpt2-54")), (std::vector<int64_t>{1, 2, 4}));
  EXPECT_EQ(admissible_tp(preset("llama2-7b")), (std::vector<int64_t>{1, 2, 4, 8}));
  EXPECT_EQ(admissible_tp(preset("gpt3-175b")), (std::vector<int64_t>{1, 2, 4, 8}));
}

// ---------------------------------------------------------------------------------------------------
// Whole model: training FLOPs per sample (t = 1, no recomputation, GEMMs only)

TEST(ModelFlops, Gpt3WithinClosedForm) {
  const long double s = 2048, L = 96, h = 12288, V = 50257;
  // models.md 5.2, without recomputation, B = 1
  const long double per_sample = 72 * s * L * h * h * (1 + s / (6 * h) + V / (12 * L * h));
  const auto totals = model_totals(preset("gpt3-175b"), 2048, Precision{});
  EXPECT_TRUE(within_relative(totals.training_flops_per_sample, per_sample, 0.01));
  // table value for B = 4096
  EXPECT_TRUE(within_relative(4096.0L * totals.training_flops_per_sample, 9.029275e18L, 0.01));
}

TEST(ModelFlops, PublishedIterationValuesForBatch4096) {
  struct Case {
    const char* name;
    long double flops;  // models.md 5.2, without recompute, B = 4096
  };
  for (const Case& c : {Case{"gpt2-xl", 4.309037e16L}, Case{"llama2-7b", 7.731766e17L},
                        Case{"megatron-gpt2-54", 6.788776e16L}, Case{"megatron-gpt2-72", 2.204803e17L}}) {
    SCOPED_TRACE(c.name);
    const auto spec = preset(c.name);
    const auto totals = model_totals(spec, spec.default_seq, Precision{});
    EXPECT_TRUE(within_relative(4096.0L * totals.training_flops_per_sample, c.flops, 0.01));
  }
}

TEST(ModelFlops, Gpt2XlClosedForm) {
  const long double s = 1024, L = 48, h = 1600, V = 50257;
  const long double per_sample = 72 * s * L * h * h * (1 + s / (6 * h) + V / (12 * L * h));
  EXPECT_TRUE(within_relative(4096 * per_sample, 4.309037e16L, 1e-6));
  const auto totals = model_totals(preset("gpt2-xl"), 1024, Precision{});
  EXPECT_TRUE(within_relative(totals.training_flops_per_sample, per_sample, 0.01));
}

// Exact GEMM accounting of models.md 3.1, 4.1 and 4.2 at b = 1, t = 1: L transformer layers plus the head
// GEMMs (and OPT's project_in); training = 3 x forward (backward = data + weight gradient).
TEST(ModelFlops, ExactGemmAccountingWithHeads) {
  struct Case {
    const char* name;
    int64_t extra_macs;  // non-layer GEMM MACs of one sequence
  };
  const auto layer = [](const char* name) {
    const auto spec = preset(name);
    const bool gated = spec.activation == phaze::model::Activation::SwiGlu;
    return spec.num_layers * layer_forward_macs(1, spec.default_seq, spec.hidden, spec.ffn, gated);
  };
  // T = s (b = 1)
  const Case cases[] = {
      // tied LM logits (T, V, h), GPT-2 XL keeps V = 50257 at t = 1
      {"gpt2-xl", 1024LL * 50257 * 1600},
      // Megatron pads to V_p = 50304 at t = 1
      {"megatron-gpt2-xl", 1024LL * 50304 * 1024},
      {"megatron-gpt2-54", 1024LL * 50304 * 1920},
      {"megatron-gpt2-72", 1024LL * 50304 * 3072},
      {"gpt3-175b", 2048LL * 50304 * 12288},
      // untied head (T, 32000, 4096)
      {"llama2-7b", 4096LL * 32000 * 4096},
      // project_in (T, 1024, 512), project_out (T, 512, 1024), logits (T, 50272, 512)
      {"opt-350m", 2048LL * 1024 * 512 + 2048LL * 512 * 1024 + 2048LL * 50272 * 512},
      // MLM dense (T, h, h), logits (T, V, h), pooler (b, h, h), NSP classifier (b, 2, h)
      {"bert-large", 512LL * 1024 * 1024 + 512LL * 30522 * 1024 + 1024LL * 1024 + 2LL * 1024},
      {"megatron-bert", 512LL * 1024 * 1024 + 512LL * 30592 * 1024 + 1024LL * 1024 + 2LL * 1024},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const auto spec = preset(c.name);
    const int64_t forward = 2 * (layer(c.name) + c.extra_macs);
    const auto totals = model_totals(spec, spec.default_seq, Precision{});
    EXPECT_EQ(totals.forward_flops_per_sample, forward);
    EXPECT_EQ(totals.training_flops_per_sample, 3 * forward);

    // the layer graph at b = 1, t = 1 sums to the same
    const auto graph = build(spec, spec.default_seq, 1, 1);
    EXPECT_EQ(graph.forward_flops(), forward);
    EXPECT_EQ(graph.forward_flops() + graph.backward_flops(), totals.training_flops_per_sample);
  }
}

TEST(ModelFlops, LayerGraphSumsItsNodes) {
  for (const char* name : {"gpt3-175b", "bert-large", "llama2-7b"}) {
    SCOPED_TRACE(name);
    const auto spec = preset(name);
    const auto graph = build(spec, spec.default_seq, 2, 2);
    EXPECT_EQ(graph.forward_flops(), graph.embedding.forward_flops() +
                                         spec.num_layers * graph.transformer.forward_flops() +
                                         graph.head.forward_flops());
    EXPECT_EQ(graph.backward_flops(), graph.embedding.backward_flops() +
                                          spec.num_layers * graph.transformer.backward_flops() +
                                          graph.head.backward_flops());
  }
}

TEST(HeadLayer, LogitsGemmUsesPaddedVocabularySlice) {
  // models.md 4.2: LM logits (T, V_p/t, h, 1), column-parallel over the vocabulary
  {
    const auto graph = build(preset("gpt3-175b"), 2048, 1, 8);
    const phaze::model::Gemm logits{2048, 51200 / 8, 12288, 1};
    bool found = false;
    for (const auto& op : graph.head.forward.ops) found |= op.gemm && *op.gemm == logits;
    EXPECT_TRUE(found);
  }
  {
    const auto graph = build(preset("llama2-7b"), 4096, 1, 4);
    const phaze::model::Gemm logits{4096, 32256 / 4, 4096, 1};
    bool found = false;
    for (const auto& op : graph.head.forward.ops) found |= op.gemm && *op.gemm == logits;
    EXPECT_TRUE(found);
  }
  {
    const auto graph = build(preset("opt-350m"), 2048, 1, 1);
    const phaze::model::Gemm logits{2048, 50272, 512, 1};
    bool found = false;
    for (const auto& op : graph.head.forward.ops) found |= op.gemm && *op.gemm == logits;
    EXPECT_TRUE(found);
  }
}

}  // namespace
