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
///
/// Beyond placement.md, an optional object `correctedTerms` switches on the corrected time per batch of
/// method.md D22 and D3 (placement::CorrectedTerms); absent or null keeps the reference semantics. Its
/// fields, all optional, in the file's time unit (seconds in our pipeline) and bytes:
///   `ringLatency`            α, seconds per step of the ring all-reduce (default 0);
///   `dataParallelBandwidth`  bytes per second of the data-parallel links (default: `bandwidth`);
///   `optimizerTimePerByte`   seconds of the optimizer update per parameter byte of a device (default 0).
/// Each must be a finite number, not negative (`dataParallelBandwidth` positive); other keys are rejected
/// so that a misspelt field is not silently ignored.
PlacementInput parse_placement_input(const std::string& text, const std::string& source);

/// Writes a question in the PHAZE placement format (the inverse of parse_placement_input).
nlohmann::ordered_json placement_input_json(const PlacementInput& input);

/// The documented output: stages with the original node ids, degrees, the time per batch (null when no
/// plan fits) and the hand-set strategy's time (null with a reason when it is infeasible). With corrected
/// terms on, also `timePerBatchParts` and `fixedStrategyTimePerBatchParts` (null when infeasible):
/// `pipelineSteadyState`, `pipelineFillDrain`, `dataParallelSync`, `optimizerStep`; without them the
/// output is exactly placement.md's.
nlohmann::ordered_json placement_output_json(const PlacementInput& input, const placement::Plan& plan,
                                             const placement::PlanCheck& hand_set);

}  // namespace phaze::io
