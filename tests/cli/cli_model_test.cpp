// End-to-end tests of the `phaze model` commands: run the binary, check exit status, stdout and stderr.
// Expected numbers come from models.md (sections 1, 5.1, 5.2, 5.3).

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "support/run_phaze.h"

namespace {

using phaze_test::chomp;
using phaze_test::expect_input_error;
using phaze_test::expect_one_line;
using phaze_test::quoted;
using phaze_test::run_phaze;
using phaze_test::RunResult;

std::string data_path(const std::string& relative) {
  return std::string(PHAZE_TEST_DATA) + "/" + relative;
}

using phaze_test::parse_json;

/// Digits only, thousands separators dropped: "1,557,611,200" and "1557611200" both match.
std::string without_separators(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c != ',' && c != '_' && c != '\'') out.push_back(c);
  }
  return out;
}

const std::vector<std::string> kPresets = {"bert-large",       "gpt2-xl",          "opt-350m",
                                           "llama2-7b",        "megatron-bert",    "megatron-gpt2-xl",
                                           "megatron-gpt2-54", "megatron-gpt2-72", "gpt3-175b"};

TEST(CliModel, ListNamesEveryPreset) {
  const auto r = run_phaze("model list");
  ASSERT_EQ(r.status, 0) << r.err;
  for (const auto& name : kPresets) EXPECT_NE(r.out.find(name), std::string::npos) << name;
}

TEST(CliModel, HelpExitsZero) {
  const auto top = run_phaze("--help");
  EXPECT_EQ(top.status, 0) << top.err;
  EXPECT_FALSE(top.out.empty() && top.err.empty());
  const auto show = run_phaze("model show --help");
  EXPECT_EQ(show.status, 0) << show.err;
  EXPECT_FALSE(show.out.empty() && show.err.empty());
}

TEST(CliModel, ShowGpt3Json) {
  const auto r = run_phaze("model show gpt3-175b --json --attention-backend unfused");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = parse_json(r);
  ASSERT_TRUE(j.is_object());

  ASSERT_TRUE(j.contains("parameters"));
  EXPECT_TRUE(j.at("parameters").is_number_integer());
  // models.md 5.1: 12 L h^2 (1 + 13/(12h) + (V + s)/(12 L h)), within 0.1%
  const long double L = 96, h = 12288, V = 50257, s = 2048;
  const long double params = 12 * L * h * h * (1 + 13 / (12 * h) + (V + s) / (12 * L * h));
  const long double got_params = j.at("parameters").get<double>();
  EXPECT_LT(std::abs(static_cast<double>(got_params - params)), 1e-3 * static_cast<double>(params));

  ASSERT_TRUE(j.contains("training_flops_per_sample"));
  ASSERT_TRUE(j.at("training_flops_per_sample").is_number());
  // models.md 5.2: 72 s L h^2 (1 + s/(6h) + V/(12 L h)) per sequence, within 1%
  const long double flops = 72 * s * L * h * h * (1 + s / (6 * h) + V / (12 * L * h));
  const long double got_flops = j.at("training_flops_per_sample").get<double>();
  EXPECT_LT(std::abs(static_cast<double>(got_flops - flops)), 1e-2 * static_cast<double>(flops));

  ASSERT_TRUE(j.contains("layers"));
  ASSERT_TRUE(j.at("layers").is_array());
  ASSERT_EQ(j.at("layers").size(), 98u);  // embedding + 96 layers + head
  for (const auto& layer : j.at("layers")) {
    for (const char* key : {"name", "parameters", "activation_bytes", "fwd_flops", "bwd_flops"}) {
      EXPECT_TRUE(layer.contains(key)) << key << " missing in " << layer.dump();
    }
  }
  // transformer layers at t = 1, b = 1, s = 2048: s b h (34 + 5 a s / h) = 2,868,903,936 bytes (models.md 5.3);
  // forward MACs 3,813,930,958,848 (models.md 5.2)
  for (size_t i = 1; i <= 96; ++i) {
    const auto& layer = j.at("layers").at(i);
    EXPECT_EQ(layer.at("activation_bytes").get<int64_t>(), 2868903936) << i;
    EXPECT_EQ(layer.at("fwd_flops").get<int64_t>(), 2 * 3813930958848) << i;
    EXPECT_EQ(layer.at("bwd_flops").get<int64_t>(), 4 * 3813930958848) << i;
    EXPECT_EQ(layer.at("parameters").get<int64_t>(), 12 * 12288LL * 12288 + 13 * 12288LL) << i;
  }
}

TEST(CliModel, ShowGpt3JsonTensorParallel8) {
  const auto r = run_phaze("model show gpt3-175b --json --tp 8 --attention-backend unfused");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = parse_json(r);
  ASSERT_TRUE(j.contains("layers"));
  ASSERT_EQ(j.at("layers").size(), 98u);
  const int64_t h = 12288;
  for (size_t i = 1; i <= 96; ++i) {
    const auto& layer = j.at("layers").at(i);
    // s b h (10 + 24/t + 5 a s / (h t)) at t = 8 (models.md 5.3)
    EXPECT_EQ(layer.at("activation_bytes").get<int64_t>(), 578813952) << i;
    EXPECT_EQ(layer.at("fwd_flops").get<int64_t>(), 2 * 3813930958848 / 8) << i;
    EXPECT_EQ(layer.at("parameters").get<int64_t>(), 12 * h * h / 8 + 7 * h / 8 + 6 * h) << i;
  }
}

TEST(CliModel, ShowMicroBatchAndSequenceOptions) {
  const auto r = run_phaze("model show megatron-gpt2-54 --json --mbs 2 --seq 512 --attention-backend unfused");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = parse_json(r);
  ASSERT_TRUE(j.contains("layers"));
  ASSERT_EQ(j.at("layers").size(), 56u);
  const int64_t s = 512, b = 2, h = 1920, a = 20;
  EXPECT_EQ(j.at("layers").at(1).at("activation_bytes").get<int64_t>(), 34 * s * b * h + 5 * a * s * s * b);
}

TEST(CliModel, ShowConfigFile) {
  const auto r = run_phaze("model show " + quoted(data_path("hf/gpt2-xl/config.json")) + " --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = parse_json(r);
  ASSERT_TRUE(j.contains("parameters"));
  EXPECT_EQ(j.at("parameters").get<int64_t>(), 1557611200);
  ASSERT_TRUE(j.contains("layers"));
  EXPECT_EQ(j.at("layers").size(), 50u);

  const auto mistral =
      run_phaze("model show " + quoted(data_path("hf/mistral-7b-v0.1/config.json")) + " --json --seq 4096");
  ASSERT_EQ(mistral.status, 0) << mistral.err;
  const auto m = parse_json(mistral);
  ASSERT_TRUE(m.contains("parameters"));
  EXPECT_EQ(m.at("parameters").get<int64_t>(), 7241732096);
}

TEST(CliModel, ShowTextContainsParameterCount) {
  const auto r = run_phaze("model show gpt2-xl");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(r.out.empty());
  EXPECT_NE(without_separators(r.out).find("1557611200"), std::string::npos) << r.out;

  const auto llama = run_phaze("model show llama2-7b");
  ASSERT_EQ(llama.status, 0) << llama.err;
  EXPECT_NE(without_separators(llama.out).find("6738415616"), std::string::npos) << llama.out;
}

TEST(CliModelErrors, UnknownPreset) {
  expect_input_error(run_phaze("model show no-such-model"), "no-such-model");
}

TEST(CliModelErrors, MalformedJsonFile) {
  expect_input_error(run_phaze("model show " + quoted(data_path("bad/malformed.json"))), "malformed.json");
}

TEST(CliModelErrors, NegativeSizeInConfig) {
  expect_input_error(run_phaze("model show " + quoted(data_path("bad/negative_hidden_size.json"))), "hidden_size");
}

TEST(CliModelErrors, UnknownModelTypeInConfig) {
  expect_input_error(run_phaze("model show " + quoted(data_path("bad/unknown_model_type.json"))), "t5");
}

TEST(CliModelErrors, TensorParallelWidthNotAdmissible) {
  expect_input_error(run_phaze("model show gpt3-175b --tp 5"));  // 5 does not divide 96 heads
  expect_input_error(run_phaze("model show gpt2-xl --tp 2"));
  expect_input_error(run_phaze("model show gpt3-175b --tp 0"));
}

TEST(CliModelErrors, BadMicroBatch) {
  expect_input_error(run_phaze("model show gpt3-175b --mbs -1"));
}

TEST(CliModelErrors, BadSequence) {
  expect_input_error(run_phaze("model show gpt3-175b --seq 0"));
  expect_input_error(run_phaze("model show gpt2-xl --seq 2048"));  // beyond 1024 learned positions
}

TEST(CliModelErrors, JsonModeErrorsStillGoToStderr) {
  const auto r = run_phaze("model show no-such-model --json");
  expect_input_error(r, "no-such-model");
}

}  // namespace
