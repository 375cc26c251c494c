#pragma once

// PHAZE's execution with PHAZE's planner (placement::CorrectedPlanner): per point and model the best plan of
// one width and one data-parallel degree over the model's widths, each width's layers scheduled exactly only
// while its bound could still win (docs/method.md 7).

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>
#include <vector>

#include "placement/corrected_planner.h"
#include "search/chain_points.h"
#include "search/plan_cache.h"
#include "search/pricer.h"

namespace phaze::search {

class UniformPricer : public ChainPricer {
 public:
  void find_fitting(Workload& workload) override;
  bool bounds_points() const override { return true; }
  std::vector<PointOutcome> price_points(const Workload& workload, Scheduling& scheduling, const hw::Design& design,
                                         const std::function<bool(const std::string&)>& wanted,
                                         const LeaveOutTest& leave_out, std::vector<LeftOutPoint>* left_out) override;

 private:
  /// One model's best plans at the points of one micro-batch (clusters) over its widths, and the schedules
  /// of the widths that were scheduled.
  struct ModelPlans {
    bool any_width = false;                                ///< some width has finite estimates
    std::vector<std::optional<LayerSchedules>> schedules;  ///< per width; nothing: not needed
    std::vector<placement::Plan> plans;                    ///< per point; infeasible when no width fits
    std::vector<size_t> width_of;                          ///< per point, the width index of its plan
  };
  /// How far a bound in ModelBounds has got: the floor that needs no placement, the placement at a roomier
  /// point (memory decides only which plans fit, so a plan there is no slower than the best here), or the
  /// placement of this point (or one at a roomier point whose plan fits here, which is as good).
  enum class BoundLevel : char { kPlaced, kFloor, kRoomier };
  /// One model's layer problems per width on a design, and per width and point (cluster) the time per batch
  /// of the plan placed on the layers' root bounds: a lower bound of the time of any plan of that width
  /// there (infinity: none fits). A point's bound may at first be a weaker one that needs no placement
  /// (`level`, bound_model); refine() raises it a level.
  struct ModelBounds {
    std::vector<std::vector<schedule::Problem>> problems;  ///< per width
    std::vector<char> usable;                              ///< per width: every operator has a finite estimate
    std::vector<std::vector<double>> time_s;               ///< [width][point]
    std::vector<std::vector<BoundLevel>> level;            ///< [width][point]
    /// [width][point]: the stages of the plan placed, once the level is kPlaced (none when no plan fits)
    std::vector<std::vector<std::vector<placement::Stage>>> stages;
    std::vector<LayerSchedules> stand_ins;  ///< per usable width: its layers at their root bounds
    std::vector<placement::Chain> chains;   ///< per usable width: the chain of those
    /// The points, those with more memory per device first: a placement at a roomier point bounds, and
    /// sometimes settles, those at the others (refine, plan_model).
    std::vector<size_t> roomiest_first;
    /// [point]: the points that differ from it only in having more memory per device.
    std::vector<std::vector<size_t>> roomier;
    bool any_width() const;
    /// The usable width with the least finite bound at point k (the first of equals); nothing when every
    /// bound there is infinite (no width has a plan).
    std::optional<size_t> least_width(size_t k) const;
  };
  /// A micro-batch's points with each model's bounds and plans.
  struct MicroBatch {
    ChainPoints points;
    std::vector<ModelBounds> bounds;  ///< per model
    std::vector<ModelPlans> plans;    ///< per model
  };

  /// Every point's bound at its floor (refine raises it when a decision needs it).
  ModelBounds bound_model(const std::vector<model::LayerGraph>& graphs, const hw::Architecture& design,
                          const std::vector<placement::Cluster>& clusters, Scheduling& scheduling);
  /// The points of `mb` that `leave_out` accepts on their bounds: a model's samples/s at a point is at most
  /// the global batch over its least time-per-batch bound, and it has a plan there exactly when some width's
  /// bound plan fits. Bounds are refined only as far as the decision needs.
  void leave_out_on_bounds(const Workload& workload, MicroBatch& mb, const LeaveOutTest& leave_out,
                           std::vector<LeftOutPoint>* left_out);
  /// The planner's plan of `chain` on `cluster`, through the plan cache (one thread at a time).
  placement::Plan place(const model::LayerGraph& graph, const LayerSchedules& schedules, const placement::Chain& chain,
                        const placement::Cluster& cluster);
  /// Raises the bound of width `wi` at point `k` a level: a weak bound takes that of a placed roomier point
  /// when there is one, else the point is placed on the width's root bounds.
  void refine(ModelBounds& bounds, const std::vector<model::LayerGraph>& graphs,
              const std::vector<placement::Cluster>& clusters, size_t wi, size_t k);
  /// One model's best plans at the points (clusters) that `needed` marks, scheduling the fewest widths that
  /// the bounds allow; the plans of other points are those the scheduled widths give.
  ModelPlans plan_model(const std::vector<model::LayerGraph>& graphs, ModelBounds& bounds,
                        const std::vector<placement::Cluster>& clusters, const std::function<bool(size_t)>& needed,
                        Scheduling& scheduling);

  /// Whether some plan of width `wi` fits at point `k` (its placed bound is finite), placing it on this design
  /// the first time the run asks. Memory decides it and does not depend on the design, so it is kept per layer
  /// graph and the cluster's memory figures for the rest of the run.
  bool width_fits(ModelBounds& bounds, const std::vector<model::LayerGraph>& graphs,
                  const std::vector<placement::Cluster>& clusters, size_t wi, size_t k);

  // The planner and its cache serve the micro-batches of a design planned on several threads (price_points).
  std::mutex placing_;
  placement::CorrectedPlanner planner_;
  PlanCache plans_;
  /// width_fits' answers by layer graph, devices, memory per device, micro-batches, recomputation and
  /// optimizer (guarded by placing_).
  std::map<std::tuple<const model::LayerGraph*, int64_t, double, int64_t, bool, placement::Optimizer>, bool> fits_;
};

}  // namespace phaze::search
