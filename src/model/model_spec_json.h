#pragma once

#include <nlohmann/json.hpp>

#include "model/model_spec.h"

namespace phaze::model {

/// A model's hyperparameters as JSON: part of `phaze model show --json` and of a search run's identity, so
/// a change here changes both (and makes earlier results files refuse to resume).
nlohmann::json hyperparameters_json(const ModelSpec& spec);

}  // namespace phaze::model
