#pragma once

// PHAZE's execution with the stagewise planner (placement::StagewisePlanner, docs/piper.md 5): every usable
// width of a model scheduled exactly, and one plan per point over all of them, each stage with its own
// width, data-parallel degree and recomputed layers. A point is first bounded by the work of its layers at
// their schedules' root bounds spread over every device (placement/stagewise_bound.h), so that a search under the
// exact rule leaves out the points that bound rules out without scheduling anything for them.

#include <functional>
#include <optional>
#include <vector>

#include "placement/stagewise_planner.h"
#include "search/chain_points.h"
#include "search/pricer.h"

namespace phaze::search {

class StagewisePricer : public ChainPricer {
 public:
  void find_fitting(Workload& workload) override;
  bool bounds_points() const override { return true; }
  std::vector<PointOutcome> price_points(const Workload& workload, Scheduling& scheduling, const hw::Design& design,
                                         const std::function<bool(const std::string&)>& wanted,
                                         const LeaveOutTest& leave_out, std::vector<LeftOutPoint>* left_out) override;
  void describe(const SearchQuestion& question, nlohmann::ordered_json& settings) const override;
  std::string description(const SearchQuestion& question) const override;

 private:
  /// One model's widths at one micro-batch on a design before any is scheduled: their layer problems, the
  /// usable ones (finite estimates) and, `with_chains`, the chains of their layers at the root bounds.
  struct ModelBounds {
    std::vector<std::vector<schedule::Problem>> problems;  ///< per width
    std::vector<placement::Chain> chains;                  ///< per usable width, when asked for
    /// Per width: its layers at their root bounds and least energies, when asked for and usable.
    std::vector<std::optional<LayerSchedules>> stand_ins;
    std::vector<size_t> chain_width;  ///< the width index of each chain
  };
  ModelBounds bound_model(const std::vector<model::LayerGraph>& graphs, const hw::Architecture& design,
                          Scheduling& scheduling, bool with_chains) const;
  /// Leaves out the points of `points` that `leave_out` accepts on the work bounds of their models.
  void leave_out_on_bounds(const Workload& workload, ChainPoints& points, const std::vector<ModelBounds>& bounds,
                           const LeaveOutTest& leave_out, std::vector<LeftOutPoint>* left_out);

  /// One model's plans at the points of one micro-batch, over the chains of `chain_width` (width indices).
  struct ModelPlans {
    bool any_width = false;                                ///< some width has finite estimates
    std::vector<std::optional<LayerSchedules>> schedules;  ///< per width; nothing: not usable
    std::vector<placement::StagewisePlan> plans;           ///< per point; infeasible where not `needed`
    std::vector<size_t> chain_width;
  };
  /// Schedules the usable widths and plans the points `needed` accepts (by index into `clusters`); nothing
  /// is scheduled when it accepts none.
  ModelPlans plan_model(const std::vector<model::LayerGraph>& graphs, const ModelBounds& bounds,
                        const std::vector<placement::Cluster>& clusters, const std::function<bool(size_t)>& needed,
                        Scheduling& scheduling);

  placement::StagewisePlanner planner_;
};

}  // namespace phaze::search
