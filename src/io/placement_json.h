#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "placement/planner.h"

namespace phaze::io {

/// A placement question in the PHAZE placement format (placement.md), validated.
struct PlacementInput {
  placement::Cluster cluster;
  std::vector<placement::Chain> chains;  ///< one per width, ascending, nodes in topological order
  std::vector<int64_t> node_ids;         ///< the file's node ids in topological order
  std::optional<placement::HandSetPlan> hand_set;
};

/// Parses and validates; throws InputError naming `source` and the offending item.
PlacementInput parse_placement_input(const std::string& text, const std::string& source);

/// Writes a question in the PHAZE placement format (the inverse of parse_placement_input).
nlohmann::ordered_json placement_input_json(const PlacementInput& input);

/// The documented output: stages with the original node ids, degrees, the time per batch (null when no
/// plan fits) and the hand-set strategy's time (null with a reason when it is infeasible).
nlohmann::ordered_json placement_output_json(const PlacementInput& input, const placement::Plan& plan,
                                             const placement::PlanCheck& hand_set);

}  // namespace phaze::io
