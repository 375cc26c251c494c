#pragma once

#include <nlohmann/json.hpp>

#include "model/layer_graph.h"

namespace phaze::io {

nlohmann::json to_json(const model::OperatorGraph& graph);

/// The `phaze model show --json` document: totals, the layer chain per rank and, with `with_operators`,
/// the forward and backward operator graphs of the three distinct layers.
nlohmann::json model_report_json(const model::LayerGraph& graph, const model::ModelTotals& totals, bool with_operators);

}  // namespace phaze::io
