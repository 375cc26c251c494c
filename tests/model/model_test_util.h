#pragma once

// Shared helpers of the model tests. Reference hyper-parameters come from models.md section 1 (tables 1.1
// and 1.3); never from running the program.

#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/layer_graph.h"
#include "model/model_spec.h"
#include "model/presets.h"

namespace phaze_test {

using phaze::model::ModelSpec;

/// Hyper-parameters of a seed model as published (models.md 1.1) and its sequence length (models.md 1.3).
struct PresetRef {
  const char* name;
  int64_t layers;
  int64_t hidden;
  int64_t heads;
  int64_t kv_heads;
  int64_t ffn;
  int64_t vocab;  ///< unpadded, as published
  int64_t seq;
};

inline const std::vector<PresetRef>& preset_refs() {
  static const std::vector<PresetRef> refs = {
      {"bert-large", 24, 1024, 16, 16, 4096, 30522, 512},
      {"gpt2-xl", 48, 1600, 25, 25, 6400, 50257, 1024},
      {"opt-350m", 24, 1024, 16, 16, 4096, 50272, 2048},
      {"llama2-7b", 32, 4096, 32, 32, 11008, 32000, 4096},
      {"megatron-bert", 24, 1024, 16, 16, 4096, 30522, 512},
      {"megatron-gpt2-xl", 40, 1024, 16, 16, 4096, 50257, 1024},
      {"megatron-gpt2-54", 54, 1920, 20, 20, 7680, 50257, 1024},
      {"megatron-gpt2-72", 72, 3072, 24, 24, 12288, 50257, 1024},
      {"gpt3-175b", 96, 12288, 96, 96, 49152, 50257, 2048},
  };
  return refs;
}

/// The preset of that name; throws (so the test fails with the name) when it is missing.
inline ModelSpec preset(const std::string& name) {
  auto spec = phaze::model::find_preset(name);
  if (!spec) throw std::runtime_error("preset not found: " + name);
  return *spec;
}

inline phaze::model::LayerGraph build(const ModelSpec& spec, int64_t seq, int64_t mbs, int64_t tp) {
  return phaze::model::build_layer_graph(spec, phaze::model::Shape{seq, mbs, tp}, phaze::model::Precision{}, "test");
}

/// TP widths in {1, 2, 4, 8} that divide the heads, the key/value heads and the FFN size (models.md 1.3).
inline std::vector<int64_t> admissible_tp(const ModelSpec& spec) {
  std::vector<int64_t> widths;
  for (int64_t t : {1, 2, 4, 8}) {
    if (spec.heads % t == 0 && spec.kv_heads % t == 0 && spec.ffn % t == 0) widths.push_back(t);
  }
  return widths;
}

/// Megatron vocabulary padding rule of models.md 2: V_p = ceil(V / (128 t)) * 128 t.
inline int64_t megatron_padding(int64_t vocab, int64_t tp) {
  const int64_t unit = 128 * tp;
  return (vocab + unit - 1) / unit * unit;
}

/// |actual - expected| <= rel * |expected|, in long double.
inline ::testing::AssertionResult within_relative(long double actual, long double expected, long double rel) {
  const long double diff = actual > expected ? actual - expected : expected - actual;
  const long double bound = rel * (expected < 0 ? -expected : expected);
  if (diff <= bound) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "actual " << static_cast<double>(actual) << " differs from expected "
                                       << static_cast<double>(expected) << " by "
                                       << static_cast<double>(diff / (expected == 0 ? 1 : expected))
                                       << " (relative), more than " << static_cast<double>(rel);
}

}  // namespace phaze_test
