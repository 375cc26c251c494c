#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/model_spec.h"

namespace phaze::model {

/// Names of the built-in model presets, in a stable order.
const std::vector<std::string>& preset_names();
/// The preset of that name, or nothing.
std::optional<ModelSpec> find_preset(const std::string& name);

}  // namespace phaze::model
