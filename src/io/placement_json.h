#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "placement/plan_check.h"

namespace phaze::io {

/// Largest accepted sizes of a placement file (docs/limits.md): they bound the planner's work and memory
/// (its tables grow with nodes² · stages) and keep every product of counts far inside int64_t.
namespace placement_limits {
inline constexpr int64_t kDevices = 10000;  ///< maxDevices, and each of fixedPP, fixedTMPC, fixedDP
inline constexpr int64_t kWidths = 16;      ///< tensor-parallel widths (keys of `nodes`)
inline constexpr int64_t kNodes = 256;      ///< nodes per width (the planner's tables: about 0.4 GB at 256)
inline constexpr int64_t kEdges = 32768;    ///< edges per width (a DAG of 256 nodes has at most 32640)
inline constexpr int64_t kMicroBatches = int64_t{1} << 24;  ///< mbsInBatch
inline constexpr int64_t kTransformerLayers = 16384;        ///< numTransformerLayers
}  // namespace placement_limits

/// A placement question in the PHAZE placement format (placement.md), validated.
struct PlacementInput {
  placement::Cluster cluster;
  std::vector<placement::Chain> chains;            ///< one per width, ascending, nodes in topological order
  std::vector<int64_t> node_ids;                   ///< the file's node ids in topological order
  std::optional<placement::HandSetPlan> hand_set;  ///< fixedPP, fixedTMPC, fixedDP
  int64_t hand_set_layers = 0;                     ///< numTransformerLayers: L of the hand-set stage rule
};

/// Parses and validates; throws InputError naming `source` and the offending item. Sizes beyond
/// placement_limits are refused, and so are times that could add up beyond the range of a double (a plan's
/// time per batch must stay finite: "times are not finite").
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
