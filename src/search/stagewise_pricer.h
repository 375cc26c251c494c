#pragma once

// PHAZE's execution with the stagewise planner (placement::StagewisePlanner, docs/piper.md 5): every usable
// width of a model scheduled exactly, and one plan per point over all of them, each stage with its own
// width, data-parallel degree and recomputed layers.

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
  std::vector<PointOutcome> price_points(const Workload& workload, Scheduling& scheduling, const hw::Design& design,
                                         const std::function<bool(const std::string&)>& wanted,
                                         const LeaveOutTest& leave_out, std::vector<LeftOutPoint>* left_out) override;
  void describe(const SearchQuestion& question, nlohmann::ordered_json& settings) const override;
  std::string description(const SearchQuestion& question) const override;

 private:
  /// One model's plans at the points of one micro-batch, over the chains of `chain_width` (width indices).
  struct ModelPlans {
    bool any_width = false;                                ///< some width has finite estimates
    std::vector<std::optional<LayerSchedules>> schedules;  ///< per width; nothing: not usable
    std::vector<placement::StagewisePlan> plans;           ///< per point
    std::vector<size_t> chain_width;
  };
  ModelPlans plan_model(const std::vector<model::LayerGraph>& graphs, const hw::Architecture& design,
                        const std::vector<placement::Cluster>& clusters, Scheduling& scheduling);

  placement::StagewisePlanner planner_;
};

}  // namespace phaze::search
