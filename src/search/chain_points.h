#pragma once

// The points of a design as PHAZE's execution prices them (UniformPricer, StagewisePricer): per micro-batch
// the points to do, and per model the placement cluster of each point where a plan fits in memory; then
// the points assembled from each model's outcome.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hw/enumerate.h"
#include "placement/chain.h"
#include "search/evaluate.h"
#include "search/point.h"
#include "search/pricer.h"

namespace phaze::search {

/// The points of one micro-batch of a design.
struct ChainPoints {
  size_t index = 0;                            ///< of the micro-batch in the question
  std::vector<std::pair<int64_t, bool>> todo;  ///< HBM size and recomputation of each point
  std::vector<std::string> keys;               ///< the key of each point
  /// [model][k]: the cluster of point todo[fitting[model][k]], a point where some plan fits in memory
  std::vector<std::vector<placement::Cluster>> clusters;
  std::vector<std::vector<size_t>> fitting;
  std::vector<char> left_out;  ///< per point: left out on its bounds
  std::vector<char> dropped;   ///< per point: no longer wanted before a width was scheduled for it
  /// The index k of point j among model `model`'s fitting points; nothing when no plan fits there.
  std::optional<size_t> fitting_index(size_t model, size_t j) const;
};

/// The points of `design` at the question's micro-batch `index` that `wanted` accepts (HBM sizes, then
/// recomputation settings, in the question's order); nothing when it accepts none.
std::optional<ChainPoints> chain_points(const Workload& workload, const hw::Design& design, size_t index,
                                        const std::function<bool(const std::string&)>& wanted);

/// The outcome of model `model` at its fitting point k of the `batch`-th entry of assemble_points' points,
/// with `design` the point's architecture (its HBM size set).
using ModelOutcomeOf =
    std::function<ModelOutcome(size_t batch, size_t model, size_t k, const hw::Architecture& design)>;

/// The points of `points` neither left out, dropped nor unwanted, each with every model's outcome (none where
/// no plan fits in memory), scored, in canonical order.
std::vector<PointOutcome> assemble_points(const Workload& workload, const hw::Design& design,
                                          const std::vector<const ChainPoints*>& points,
                                          const std::function<bool(const std::string&)>& wanted,
                                          const ModelOutcomeOf& outcome);

/// The outcome of a model at its fitting point k of `points`: why it has none when no width has finite
/// estimates (`any_width` false) or no plan fits (`planned` false), else `outcome()`.
ModelOutcome chain_outcome(const ChainPoints& points, size_t model, size_t k, int64_t devices, bool any_width,
                           bool planned, const std::function<ModelOutcome()>& outcome);

/// Fills workload.fits for PHAZE's execution: whether `any_plan_fits` on the chains of every width of each
/// model and micro-batch, at each HBM size and recomputation setting. The chains have one-second layers:
/// feasibility is the existence of a plan within the memory limit and the devices, whatever the latencies,
/// so any finite latencies give the answer of every design.
void find_chain_fitting(
    Workload& workload,
    const std::function<bool(const std::vector<placement::Chain>&, const placement::Cluster&)>& any_plan_fits);

/// What the two pricers of PHAZE's execution (UniformPricer, StagewisePricer) share beyond their points: a
/// hand-set plan is priced the same way under either planner.
class ChainPricer : public Pricer {
 public:
  /// The plan's layers scheduled exactly on the design, its stages priced by placement::check_plan on the
  /// point's cluster (make_cluster).
  PlanPrice price_hand_set(const SearchQuestion& question, const ModelCase& model, const model::LayerGraph& graph,
                           const placement::HandSetPlan& plan, const std::vector<placement::Stage>& stages,
                           const hw::Architecture& design, bool recompute, Scheduling& scheduling) override;
  /// placement::hand_set_stages in words.
  std::string hand_set_rule() const override;
};

}  // namespace phaze::search
