#pragma once

// The co-search's one pricing seam (docs/execution-models.md): how the points of a design become training
// plans with a time per batch. One implementation per execution model and planner, chosen once from the
// question by make_pricer; nothing else in the search asks which execution or planner the question names.
//
//   UniformPricer    PHAZE's execution, PHAZE's planner (placement::CorrectedPlanner): one width and one
//                    data-parallel degree, whole-stage recomputation; bounds every point first
//   StagewisePricer  PHAZE's execution, the stagewise planner (placement::StagewisePlanner); bounds every point by
//                    its layers' work first (placement/stagewise_bound.h)
//   MegatronPricer   Megatron-LM's execution (megatron::predict_step on the design's layer schedules)

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hw/enumerate.h"
#include "model/layer_graph.h"
#include "placement/plan_check.h"
#include "search/evaluate.h"
#include "search/layer_scheduling.h"
#include "search/point.h"
#include "search/question.h"

namespace phaze::search {

/// A plan's time per batch at one point, or why it has none.
struct PlanPrice {
  bool feasible = false;
  std::string reason;  ///< when infeasible
  double time_per_batch_s = 0;
  placement::BatchTimeParts parts;  ///< seconds
};

/// Prices the points of designs on one thread; keeps its planners and their caches across designs.
class Pricer {
 public:
  virtual ~Pricer() = default;

  /// Fills `workload.fits` (and what else the pricer needs of the workload before any design): whether a plan
  /// of each model fits in memory at each micro-batch, HBM size and recomputation setting. Memory does not
  /// depend on the design.
  virtual void find_fitting(Workload& workload) = 0;

  /// Whether price_points can leave points out on bounds (LeaveOutTest): only a pricer whose plans are
  /// bounded before their layers are scheduled.
  virtual bool bounds_points() const { return false; }

  /// Evaluator::evaluate's contract, on the thread's `scheduling`.
  virtual std::vector<PointOutcome> price_points(const Workload& workload, Scheduling& scheduling,
                                                 const hw::Design& design,
                                                 const std::function<bool(const std::string&)>& wanted,
                                                 const LeaveOutTest& leave_out,
                                                 std::vector<LeftOutPoint>* left_out) = 0;

  /// A hand-set plan of `model` at one point: `graph` its layer graph at the plan's width and the point's
  /// micro-batch, `stages` its stages (placement::hand_set_stages, none empty, within the devices and the
  /// micro-batches), `design` the whole architecture with the point's HBM size.
  virtual PlanPrice price_hand_set(const SearchQuestion& question, const ModelCase& model,
                                   const model::LayerGraph& graph, const placement::HandSetPlan& plan,
                                   const std::vector<placement::Stage>& stages, const hw::Architecture& design,
                                   bool recompute, Scheduling& scheduling) = 0;

  /// What the answer says of how its points are priced: fields added to its JSON "settings" (none from
  /// PHAZE's planner, whose answers keep their form) and lines of its text, each ending in a newline.
  virtual void describe(const SearchQuestion&, nlohmann::ordered_json&) const {}
  virtual std::string description(const SearchQuestion&) const { return {}; }
  /// How a hand-set plan is laid out and run, for the text report's list of them.
  virtual std::string hand_set_rule() const = 0;

  /// Layer passes whose schedule is the best found within the node budget, not proven optimal, so far.
  int64_t unproven_passes() const { return unproven_.load(); }

 protected:
  std::atomic<int64_t> unproven_{0};  ///< added to by the threads that help a design's pricing
};

/// The pricer of the question's execution and planner: the one place that choice is read.
std::unique_ptr<Pricer> make_pricer(const SearchQuestion& question);

// ---- What every pricer shares ----

/// A point of `design` with HBM size `hbm_bytes`, micro-batch b and recomputation setting rc, no model yet.
PointOutcome empty_point(const hw::Design& design, int64_t hbm_bytes, int64_t b, bool rc);

/// A point is feasible when every model has a plan; its score is then their mean throughput.
void score_point(PointOutcome& point);

/// Why a model has no plan at a point where none fits in memory.
std::string no_plan_fits_reason(int64_t hbm_bytes, int64_t devices);
/// Why a model has no plan on a design where some operator has no finite estimate at every width.
std::string no_estimate_reason();
/// Why a plan of width `t` has no time on a design where some operator has no finite estimate at that width.
std::string no_estimate_at_width_reason(int64_t t);

}  // namespace phaze::search
