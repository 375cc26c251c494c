// DeepSeek-V3's structure: multi-head latent attention, the first dense layers and group-limited routing.
// Parameter counts against a closed form written out from the published config.json and against the totals
// DeepSeek publishes; the layer's GEMM FLOPs against the closed form of its projections; the config against
// the preset; and the shapes that must be refused.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "model/hf_config.h"
#include "model/layer_graph.h"
#include "model/model_spec.h"
#include "model/presets.h"
#include "model_test_util.h"
#include "util/input_error.h"
#include "util/read_file.h"

namespace {

using phaze::InputError;
using phaze::model::ModelSpec;
using phaze::model::Precision;
using phaze::model::Shape;

std::string data_path(const std::string& relative) {
  return std::string(PHAZE_TEST_DATA) + "/" + relative;
}

// deepseek-ai/DeepSeek-V3 config.json.
constexpr int64_t kLayers = 61, kDense = 3, kHidden = 7168, kHeads = 128, kNope = 128, kRope = 64, kValue = 128,
                  kQRank = 1536, kKvRank = 512, kFfn = 18432, kExperts = 256, kTopK = 8, kExpertFfn = 2048, kShared = 1,
                  kVocab = 129280;

/// One layer's attention: the query down projection and its RMSNorm, the query up projection to every
/// head's 128 + 64 elements, the key/value down projection (latent and the shared RoPE key part), its
/// RMSNorm, the up projection to every head's key (128) and value (128), the output projection; and the
/// layer's two RMSNorms.
int64_t attention_parameters() {
  return kHidden * kQRank + kQRank + kQRank * kHeads * (kNope + kRope) + kHidden * (kKvRank + kRope) + kKvRank +
         kKvRank * kHeads * (kNope + kValue) + kHeads * kValue * kHidden + 2 * kHidden;
}

TEST(LatentAttention, DeepSeekV3ParametersAsPublished) {
  const int64_t gated = 3 * kHidden;  // gate, up and down projections of one FFN column
  const int64_t dense_layer = attention_parameters() + gated * kFfn;
  // 256 routed experts, the shared one, the router's weights.
  const int64_t moe_layer = attention_parameters() + (kExperts + kShared) * gated * kExpertFfn + kExperts * kHidden;
  const int64_t embedding = kVocab * kHidden;
  const int64_t total = kDense * dense_layer + (kLayers - kDense) * moe_layer + 2 * embedding + kHidden;
  const int64_t active = total - (kLayers - kDense) * (kExperts - kTopK) * gated * kExpertFfn;

  const auto totals = phaze::model::model_totals(phaze_test::preset("deepseek-v3"), 4096, Precision{});
  EXPECT_EQ(totals.parameters, total);
  EXPECT_EQ(totals.active_parameters, active);
  // The report (arXiv 2412.19437): 671B total, 37B activated for each token. DeepSeek's weight notes give the
  // activated count without the input embedding table, which no token multiplies: 36.6B.
  EXPECT_EQ(std::lround(static_cast<double>(totals.parameters) / 1e9), 671);
  EXPECT_EQ(std::floor(static_cast<double>(totals.active_parameters) / 1e9), 37);
  EXPECT_EQ(std::lround(static_cast<double>(totals.active_parameters - embedding) / 1e8), 366);
}

TEST(LatentAttention, ConfigReproducesThePreset) {
  ModelSpec spec = phaze::model::read_hf_config(data_path("hf/deepseek-v3/config.json"));
  const ModelSpec expected = phaze_test::preset("deepseek-v3");
  spec.name = expected.name;
  spec.description = expected.description;
  EXPECT_TRUE(spec == expected);
  EXPECT_EQ(spec.qk_head_dim(), kNope + kRope);
  EXPECT_EQ(spec.v_head_dim(), kValue);
  EXPECT_EQ(spec.default_seq, 4096);  // yarn's original length
}

TEST(LatentAttention, ProjectionsAndScoresAsTheClosedForm) {
  // One 4,096-token sequence at t = 1 and t = 2: the down projections run whole on every rank, the up and
  // output projections and the heads split; the scores Q·Kᵀ over 192 elements a head, the context over 128.
  const ModelSpec m = phaze_test::preset("deepseek-v3");
  const int64_t T = 4096;
  for (int64_t t : {1, 2}) {
    SCOPED_TRACE(t);
    const auto graph = phaze::model::build_layer_graph(m, Shape{T, 1, t}, Precision{}, "test");
    const auto& dense = graph.dense_transformer.forward;
    const int64_t a = kHeads / t;
    const int64_t projections = 2 * T *
                                (kHidden * kQRank + kQRank * a * (kNope + kRope) + kHidden * (kKvRank + kRope) +
                                 kKvRank * a * (kNope + kValue) + a * kValue * kHidden);
    const int64_t core = 2 * T * T * a * (kNope + kRope) + 2 * T * T * a * kValue;
    const int64_t mlp = 3 * 2 * T * kHidden * (kFfn / t);
    EXPECT_EQ(dense.gemm_flops(), projections + core + mlp);
    for (const char* id : {"F3qa", "F4qa", "F3qb", "F3kva", "F4kva", "F3kvb", "F4q", "F4k"})
      EXPECT_GE(dense.find(id), 0) << id;
    EXPECT_LT(dense.find("F14r"), 0);  // a dense layer has no router
    EXPECT_GE(graph.transformer.forward.find("F14r"), 0);
  }
  EXPECT_EQ(m.attention_head_dim(), 160);  // (192 + 128) / 2: a fused kernel's products and bytes exactly
}

TEST(LatentAttention, TheFirstLayersAreDense) {
  const ModelSpec m = phaze_test::preset("deepseek-v3");
  const auto graph = phaze::model::build_layer_graph(m, Shape{4096, 1, 1}, Precision{}, "test");
  ASSERT_EQ(graph.distinct_layers().size(), 4u);
  for (int64_t node = 1; node <= kLayers; ++node) {
    const auto& layer = graph.node(node);
    EXPECT_EQ(&layer, node <= kDense ? &graph.dense_transformer : &graph.transformer) << node;
    EXPECT_EQ(graph.distinct_layers()[graph.distinct_index(node)].layer, &layer) << node;
  }
  EXPECT_EQ(graph.dense_transformer.routed_expert_parameters, 0);
  EXPECT_EQ(graph.distinct_layers()[1].nodes + graph.distinct_layers()[2].nodes, kLayers);
  EXPECT_EQ(phaze::model::distinct_layer_kinds(m).size(), 4u);
}

TEST(LatentAttention, RefusedShapes) {
  const ModelSpec base = phaze_test::preset("deepseek-v3");
  auto refused = [&](auto change) {
    ModelSpec m = base;
    change(m);
    EXPECT_THROW(phaze::model::validate(m, "test"), InputError);
  };
  refused([](ModelSpec& m) { m.kv_heads = 8; });                  // one key and value per head
  refused([](ModelSpec& m) { m.rope_head_size = 63; });           // RoPE on pairs
  refused([](ModelSpec& m) { m.expert_groups_per_token = 9; });   // more groups than there are
  refused([](ModelSpec& m) { m.expert_groups = 7; });             // groups that do not divide the experts
  refused([](ModelSpec& m) { m.expert_groups_per_token = 0; });   // groups but none chosen
  refused([](ModelSpec& m) { m.first_dense_layers = kLayers; });  // no expert layer left
  refused([](ModelSpec& m) {
    m.expert_groups_per_token = 1;
    m.experts_per_token = 33;  // more than the 32 experts of one group
  });
  refused([](ModelSpec& m) {
    m.kv_lora_rank = 0;  // a query latent without latent attention
  });
  // A dense model has no dense first layers.
  ModelSpec dense = phaze_test::preset("llama2-7b");
  dense.first_dense_layers = 1;
  EXPECT_THROW(phaze::model::validate(dense, "test"), InputError);
  // t must divide the dense layers' FFN too.
  EXPECT_NO_THROW(phaze::model::validate(base, Shape{4096, 1, 8}, "test"));
  ModelSpec odd = base;
  odd.ffn = 18436;
  EXPECT_THROW(phaze::model::validate(odd, Shape{4096, 1, 8}, "test"), InputError);
}

TEST(LatentAttention, ConfigKeysThatAreRefused) {
  const std::string text = phaze::read_text_file(data_path("hf/deepseek-v3/config.json"));
  auto edit = [](std::string t, const std::string& key, const std::string& value) {
    const size_t at = t.find("\"" + key + "\"");
    const size_t colon = t.find(':', at), end = t.find_first_of(",\n}", colon + 2);
    t.replace(colon + 1, end - colon - 1, " " + value);
    return t;
  };
  auto with = [&](const std::string& key, const std::string& value) { return edit(text, key, value); };
  EXPECT_NO_THROW(phaze::model::parse_hf_config(text, "deepseek"));
  EXPECT_THROW(phaze::model::parse_hf_config(with("moe_layer_freq", "2"), "deepseek"), InputError);
  EXPECT_THROW(phaze::model::parse_hf_config(with("scoring_func", "\"sparsemax\""), "deepseek"), InputError);
  EXPECT_THROW(phaze::model::parse_hf_config(with("first_k_dense_replace", "-1"), "deepseek"), InputError);
  EXPECT_THROW(phaze::model::parse_hf_config(with("topk_group", "9"), "deepseek"), InputError);
  // DeepSeek-V2-Lite has no query latent (q_lora_rank null) and routes greedily, without groups.
  ModelSpec lite =
      phaze::model::parse_hf_config(edit(with("q_lora_rank", "null"), "topk_method", "\"greedy\""), "lite");
  EXPECT_EQ(lite.q_lora_rank, 0);
  EXPECT_EQ(lite.expert_groups, 0);
  const auto graph = phaze::model::build_layer_graph(lite, Shape{1024, 1, 1}, Precision{}, "lite");
  EXPECT_GE(graph.transformer.forward.find("F3q"), 0);
  EXPECT_LT(graph.transformer.forward.find("F3qa"), 0);
}

}  // namespace
