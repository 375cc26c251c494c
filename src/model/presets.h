#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/model_spec.h"

namespace phaze::model {

/// A GPT model as Megatron-LM builds it: pre-LN, GELU, biases, learned positions (as many as `seq`), FFN of
/// 4h, dropout 0.1, the GPT-2 vocabulary of 50,257 tokens padded to a multiple of 128·t.
ModelSpec megatron_gpt(std::string name, std::string description, int64_t layers, int64_t hidden, int64_t heads,
                       int64_t seq);

/// Names of the built-in model presets, in a stable order.
const std::vector<std::string>& preset_names();
/// The preset of that name, or nothing.
std::optional<ModelSpec> find_preset(const std::string& name);

}  // namespace phaze::model
