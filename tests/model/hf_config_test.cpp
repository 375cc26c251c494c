// Hugging Face config.json reading: the published configs of the seed models give the presets back, Mistral-7B
// gives its published parameter count, and bad configs throw a one-line InputError.

#include "model/hf_config.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "model/layer_graph.h"
#include "model/model_spec.h"
#include "model_test_util.h"
#include "util/input_error.h"

namespace {

using phaze::InputError;
using phaze::model::ModelSpec;
using phaze::model::parse_hf_config;
using phaze::model::Precision;
using phaze::model::read_hf_config;
using phaze_test::preset;

std::string data_path(const std::string& relative) {
  return fmt::format("{}/{}", PHAZE_TEST_DATA, relative);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open fixture " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

nlohmann::json fixture_json(const std::string& relative) {
  return nlohmann::json::parse(read_text(data_path(relative)));
}

void expect_same_spec(const ModelSpec& actual, const ModelSpec& expected) {
  EXPECT_EQ(actual.num_layers, expected.num_layers);
  EXPECT_EQ(actual.hidden, expected.hidden);
  EXPECT_EQ(actual.heads, expected.heads);
  EXPECT_EQ(actual.kv_heads, expected.kv_heads);
  EXPECT_EQ(actual.ffn, expected.ffn);
  EXPECT_EQ(actual.vocab, expected.vocab);
  EXPECT_EQ(actual.word_embedding_dim, expected.word_embedding_dim);
  EXPECT_EQ(actual.max_positions, expected.max_positions);
  EXPECT_EQ(actual.position_offset, expected.position_offset);
  EXPECT_EQ(actual.token_types, expected.token_types);
  EXPECT_EQ(actual.default_seq, expected.default_seq);
  EXPECT_EQ(actual.norm, expected.norm);
  EXPECT_EQ(actual.pre_norm, expected.pre_norm);
  EXPECT_EQ(actual.final_norm, expected.final_norm);
  EXPECT_EQ(actual.embedding_norm, expected.embedding_norm);
  EXPECT_EQ(actual.activation, expected.activation);
  EXPECT_EQ(actual.mask, expected.mask);
  EXPECT_EQ(actual.biases, expected.biases);
  EXPECT_EQ(actual.fused_qkv, expected.fused_qkv);
  EXPECT_EQ(actual.rotary, expected.rotary);
  EXPECT_EQ(actual.scale_query, expected.scale_query);
  EXPECT_EQ(actual.hidden_dropout, expected.hidden_dropout);
  EXPECT_EQ(actual.attention_dropout, expected.attention_dropout);
  EXPECT_EQ(actual.embedding_dropout, expected.embedding_dropout);
  EXPECT_EQ(actual.head, expected.head);
  EXPECT_EQ(actual.tied_head, expected.tied_head);
  EXPECT_EQ(actual.pad_vocab_always, expected.pad_vocab_always);
  EXPECT_EQ(actual.norm_epsilon, expected.norm_epsilon);
  EXPECT_TRUE(actual == expected);
}

TEST(HfConfig, SeedConfigsReproduceThePresets) {
  struct Case {
    const char* file;
    const char* preset;
  };
  for (const Case& c :
       {Case{"hf/bert-large-uncased/config.json", "bert-large"}, Case{"hf/gpt2-xl/config.json", "gpt2-xl"},
        Case{"hf/opt-350m/config.json", "opt-350m"}, Case{"hf/llama-2-7b-hf/config.json", "llama2-7b"}}) {
    SCOPED_TRACE(c.file);
    ModelSpec spec = read_hf_config(data_path(c.file));
    const ModelSpec expected = preset(c.preset);
    spec.name = expected.name;
    spec.description = expected.description;
    expect_same_spec(spec, expected);
  }
}

TEST(HfConfig, ParseFromTextEqualsReadFromFile) {
  const std::string path = data_path("hf/gpt2-xl/config.json");
  ModelSpec from_text = parse_hf_config(read_text(path), "gpt2-xl text");
  ModelSpec from_file = read_hf_config(path);
  from_text.name = from_file.name;
  from_text.description = from_file.description;
  EXPECT_TRUE(from_text == from_file);
}

TEST(HfConfig, PublishedParameterCountsThroughConfigs) {
  EXPECT_EQ(phaze::model::model_totals(read_hf_config(data_path("hf/bert-large-uncased/config.json")), 512, Precision{})
                .parameters,
            335141888);
  EXPECT_EQ(
      phaze::model::model_totals(read_hf_config(data_path("hf/gpt2-xl/config.json")), 1024, Precision{}).parameters,
      1557611200);
  EXPECT_EQ(
      phaze::model::model_totals(read_hf_config(data_path("hf/opt-350m/config.json")), 2048, Precision{}).parameters,
      331196416);
  EXPECT_EQ(phaze::model::model_totals(read_hf_config(data_path("hf/llama-2-7b-hf/config.json")), 4096, Precision{})
                .parameters,
            6738415616);
}

// ---------------------------------------------------------------------------------------------------
// Mistral-7B-v0.1: Llama layer with grouped-query attention (8 key/value heads)

class Mistral : public ::testing::Test {
 protected:
  static constexpr int64_t L = 32, h = 4096, a = 32, kv = 8, f = 14336, V = 32000;
  static constexpr int64_t dh = h / a, hkv = kv * dh;  // 1024
  static ModelSpec spec() { return read_hf_config(data_path("hf/mistral-7b-v0.1/config.json")); }
};

TEST_F(Mistral, HyperParameters) {
  const auto s = spec();
  EXPECT_EQ(s.num_layers, L);
  EXPECT_EQ(s.hidden, h);
  EXPECT_EQ(s.heads, a);
  EXPECT_EQ(s.kv_heads, kv);
  EXPECT_EQ(s.ffn, f);
  EXPECT_EQ(s.vocab, V);
  EXPECT_TRUE(s.rotary);
  EXPECT_FALSE(s.biases);
  EXPECT_FALSE(s.tied_head);
  EXPECT_EQ(s.norm, phaze::model::NormKind::RmsNorm);
  EXPECT_EQ(s.activation, phaze::model::Activation::SwiGlu);
  EXPECT_EQ(s.mask, phaze::model::MaskKind::Causal);
}

TEST_F(Mistral, PublishedParameterCount) {
  // q, o: h*h each; k, v: h*hkv each; gate, up, down: 3hf; two RMSNorms 2h
  const int64_t per_layer = 2 * h * h + 2 * h * hkv + 3 * h * f + 2 * h;
  const int64_t total = 2 * V * h + L * per_layer + h;  // untied embedding + head, final RMSNorm
  EXPECT_EQ(total, 7241732096);                         // published: 7,241,732,096
  EXPECT_EQ(phaze::model::model_totals(spec(), 4096, Precision{}).parameters, 7241732096);
  EXPECT_EQ(phaze_test::build(spec(), 4096, 1, 1).transformer.parameters, per_layer);
}

TEST_F(Mistral, LayerFlopsWithGroupedQueryAttention) {
  const int64_t s = 4096;
  const int64_t macs = s * (2 * h * h + 2 * h * hkv + 3 * h * f) + 2 * s * s * h;
  const auto base = phaze_test::build(spec(), s, 1, 1);
  EXPECT_EQ(base.transformer.forward_flops(), 2 * macs);
  EXPECT_EQ(base.transformer.backward_flops(), 4 * macs);
  for (int64_t t : {2, 4, 8}) {
    SCOPED_TRACE(t);
    const auto split = phaze_test::build(spec(), s, 1, t);
    EXPECT_EQ(t * split.transformer.forward_flops(), base.transformer.forward_flops());
    EXPECT_EQ(t * split.transformer.backward_flops(), base.transformer.backward_flops());
    EXPECT_EQ(split.transformer.parameters, (2 * h * h + 2 * h * hkv + 3 * h * f) / t + 2 * h);
  }
}

// ---------------------------------------------------------------------------------------------------
// Bad configs

void expect_one_line(const InputError& e) {
  const std::string message = e.what();
  EXPECT_FALSE(message.empty());
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

/// parse_hf_config(text) must throw InputError with a one-line message containing every needle.
void expect_bad(const std::string& text, std::initializer_list<std::string> needles) {
  try {
    parse_hf_config(text, "bad-config.json");
    ADD_FAILURE() << "no InputError for: " << text;
  } catch (const InputError& e) {
    expect_one_line(e);
    const std::string message = e.what();
    EXPECT_NE(message.find("bad-config.json"), std::string::npos) << "message does not name the source: " << message;
    for (const auto& needle : needles) {
      EXPECT_NE(message.find(needle), std::string::npos) << "message lacks '" << needle << "': " << message;
    }
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
  }
}

std::string llama_with(const std::string& key, const nlohmann::json& value) {
  auto j = fixture_json("hf/llama-2-7b-hf/config.json");
  j[key] = value;
  return j.dump(2);
}

std::string llama_without(const std::string& key) {
  auto j = fixture_json("hf/llama-2-7b-hf/config.json");
  j.erase(key);
  return j.dump(2);
}

// Llama 3.1 reaches 131,072 positions by scaling the rotary embedding of its 8,192 (rope_scaling's
// original_max_position_embeddings): it was pre-trained at 8,192, and that is its default sequence.
TEST(HfConfig, RopeScalingKeepsThePretrainingLength) {
  const ModelSpec scaled = read_hf_config(data_path("hf/llama-3.1-8b/config.json"));
  EXPECT_EQ(scaled.max_positions, 131072);
  EXPECT_EQ(scaled.default_seq, 8192);
  const ModelSpec plain = read_hf_config(data_path("hf/llama-3-8b/config.json"));
  EXPECT_EQ(plain.default_seq, 8192);
  expect_bad(llama_with("rope_scaling", 8), {"rope_scaling"});
}

TEST(HfConfigErrors, MalformedJson) {
  expect_bad("{ \"model_type\": \"gpt2\", \"n_embd\": ", {});
  expect_bad("", {});
  expect_bad("not json at all", {});
}

TEST(HfConfigErrors, NotAnObject) {
  expect_bad("[1, 2, 3]", {});
}

TEST(HfConfigErrors, MissingRequiredKeyIsNamed) {
  expect_bad(llama_without("hidden_size"), {"hidden_size"});
  expect_bad(llama_without("num_hidden_layers"), {"num_hidden_layers"});
  expect_bad(llama_without("vocab_size"), {"vocab_size"});
  auto bert = fixture_json("hf/bert-large-uncased/config.json");
  bert.erase("num_attention_heads");
  expect_bad(bert.dump(), {"num_attention_heads"});
  auto gpt2 = fixture_json("hf/gpt2-xl/config.json");
  gpt2.erase("n_embd");
  expect_bad(gpt2.dump(), {"n_embd"});
}

TEST(HfConfigErrors, MissingModelType) {
  expect_bad(llama_without("model_type"), {"model_type"});
}

TEST(HfConfigErrors, NegativeOrZeroSizes) {
  expect_bad(llama_with("hidden_size", -4096), {"hidden_size", "-4096"});
  expect_bad(llama_with("num_hidden_layers", 0), {"num_hidden_layers"});
  expect_bad(llama_with("num_attention_heads", -32), {"num_attention_heads", "-32"});
  expect_bad(llama_with("vocab_size", 0), {"vocab_size"});
  expect_bad(llama_with("intermediate_size", -1), {"intermediate_size"});
}

TEST(HfConfigErrors, InconsistentSizes) {
  expect_bad(llama_with("hidden_size", 4000), {});       // 4000 not divisible by 32 heads
  expect_bad(llama_with("num_key_value_heads", 5), {});  // 32 heads not divisible by 5 kv heads
}

TEST(HfConfigErrors, ProbabilityOutOfRange) {
  auto bert = fixture_json("hf/bert-large-uncased/config.json");
  bert["hidden_dropout_prob"] = 1.5;
  expect_bad(bert.dump(), {"hidden_dropout_prob"});
}

TEST(HfConfigErrors, UnknownModelType) {
  auto j = fixture_json("hf/llama-2-7b-hf/config.json");
  j["model_type"] = "t5";
  expect_bad(j.dump(), {"t5"});
}

TEST(HfConfigErrors, WrongType) {
  expect_bad(llama_with("num_hidden_layers", "32"), {"num_hidden_layers"});
  expect_bad(llama_with("hidden_size", 4096.5), {"hidden_size"});
  expect_bad(llama_with("model_type", 7), {"model_type"});
}

TEST(HfConfigErrors, BadFixtureFiles) {
  for (const char* file : {"bad/malformed.json", "bad/negative_hidden_size.json", "bad/unknown_model_type.json",
                           "bad/does_not_exist.json"}) {
    SCOPED_TRACE(file);
    try {
      read_hf_config(data_path(file));
      ADD_FAILURE() << "no InputError";
    } catch (const InputError& e) {
      expect_one_line(e);
    }
  }
}

TEST(LoadModel, PresetNameOrConfigPath) {
  EXPECT_TRUE(phaze::model::load_model("gpt3-175b") == preset("gpt3-175b"));
  const std::string path = data_path("hf/opt-350m/config.json");
  EXPECT_TRUE(phaze::model::load_model(path) == read_hf_config(path));
  EXPECT_THROW(phaze::model::load_model("no-such-model"), InputError);
  EXPECT_THROW(phaze::model::load_model(data_path("bad/malformed.json")), InputError);
}

}  // namespace
