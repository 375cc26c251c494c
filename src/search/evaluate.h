#pragma once

// Evaluation of search points: layer schedules on a design, the placement chain, the training plan and
// the figures reported for it.

#include <array>
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "cost/operator_cost.h"
#include "hw/enumerate.h"
#include "megatron/training_plan.h"
#include "model/layer_graph.h"
#include "placement/chain.h"
#include "placement/stagewise_plan.h"
#include "schedule/problem.h"
#include "search/layer_scheduling.h"
#include "search/model_bound.h"
#include "search/point.h"
#include "search/question.h"
#include "search/schedule_cache.h"

namespace phaze::search {

/// Designs an estimator serves before its GEMM estimates are forgotten (at the next change of tensor cores):
/// they grow with every core configuration, and neighbouring designs share most of theirs.
inline constexpr int64_t kDesignsPerEstimator = 64;

/// The layer graphs of the workload, built once: per model, per micro-batch size (the question's order) and
/// per (t, e) layout (ModelCase::layout_index; the width's own index where the model has no expert widths).
struct Workload {
  const SearchQuestion* question = nullptr;
  std::vector<std::vector<std::vector<model::LayerGraph>>> graphs;  ///< [model][micro-batch][layout]
  /// Whether a training plan of some width fits in memory: [model][micro-batch][HBM size, in the order of
  /// fits_hbm_bytes][recomputation off, on]. The memory of a plan does not depend on the design, so a model
  /// that fits nowhere at a point has no plan on any design, and its schedules are not needed there. An HBM
  /// size outside the table counts as fitting: the planner decides.
  std::vector<std::vector<std::vector<std::array<bool, 2>>>> fits;
  std::vector<int64_t> fits_hbm_bytes;  ///< the HBM sizes of the table (the question's when prepared)
  /// Under Megatron-LM execution, the configurations that fit: [model][micro-batch][HBM size][recomputation
  /// off, on] (megatron_execution.h); `fits` says whether each list is non-empty.
  std::vector<std::vector<std::vector<std::array<std::vector<megatron::TrainingPlan>, 2>>>> megatron_fitting;
  bool fits_in_memory(size_t model, size_t micro_batch_index, int64_t hbm_bytes, bool recompute) const;
};
Workload prepare_workload(const SearchQuestion& question);

/// The placement chain of one width: per position the schedules' makespans of its distinct layer, the layer's parameter
/// and activation bytes; an edge per consecutive pair with the boundary tensor's bytes.
placement::Chain make_chain(const model::LayerGraph& graph, const LayerSchedules& schedules);

/// Seconds of the optimizer step per byte of parameters on one device: the HBM bytes the update moves per
/// parameter byte over the HBM bandwidth. SGD reads weights and gradients and writes weights (3 bytes per
/// parameter byte); Adam also reads and writes its state, which the memory model sizes as one more copy of
/// the parameters (5). The element-wise update is bandwidth-bound on every design of the template.
double optimizer_seconds_per_byte(placement::Optimizer optimizer, double hbm_bandwidth);

/// The cluster of one point: K devices with the HBM size as memory limit, the links of the question's network
/// (placement::use_network), N = global batch / micro-batch, and our corrected terms (ring all-reduce of the
/// largest stage, optimizer step).
placement::Cluster make_cluster(const SearchQuestion& question, const hw::Architecture& design, int64_t micro_batch,
                                int64_t hbm_bytes, bool recompute);

/// Joules per batch of a plan of PHAZE's planner: each of its N micro-batches runs, on each of the t ranks of
/// `graph`'s width, every layer's forward and backward pass in `schedules`, and again the forward pass of the
/// layers before chain position `recompute_before` (recomputation's re-forward; 0: none).
double uniform_batch_energy_j(const model::LayerGraph& graph, const LayerSchedules& schedules, int64_t micro_batches,
                              int64_t recompute_before);

/// At most the joules per batch of every stagewise plan of N micro-batches over `graphs` (one per width, of equal
/// length) with layer schedules `schedules` (nothing: the width is not usable): each position's passes at the
/// width where t · (forward + backward) is least, lowered by a part in 10^9 against rounding.
double stagewise_batch_energy_bound_j(const std::vector<model::LayerGraph>& graphs,
                                      const std::vector<std::optional<LayerSchedules>>& schedules,
                                      int64_t micro_batches);

/// The figures of one model's plan at one point (`graph` and `schedules` of the plan's width).
ModelOutcome model_outcome(const model::LayerGraph& graph, const LayerSchedules& schedules, const placement::Plan& plan,
                           const placement::Cluster& cluster, const hw::Architecture& design, int64_t global_batch);

/// The figures of one model's stagewise plan at one point. `schedules` per width of the model (nothing: not
/// scheduled), `chain_width` maps the plan's chain indices to those widths.
ModelOutcome stagewise_outcome(const std::vector<model::LayerGraph>& graphs,
                               const std::vector<std::optional<LayerSchedules>>& schedules,
                               const std::vector<size_t>& chain_width, const placement::StagewisePlan& plan,
                               const placement::Cluster& cluster, const hw::Architecture& design, int64_t global_batch);

/// Whether a point may be left out of an evaluation, given its key and per model its bounds there (nothing:
/// the model has no plan there, on any schedules).
using LeaveOutTest = std::function<bool(const std::string& key, const std::vector<std::optional<ModelBound>>& bounds)>;

/// A point an evaluation left out, with what the bounds tell of it.
struct LeftOutPoint {
  std::string key;
  bool feasible = false;  ///< every model has a plan (exact: memory and estimates decide it, not latencies)
};

class Pricer;

/// Evaluates designs on one thread: keeps its scheduling (estimator, solver) and the question's pricer
/// (pricer.h) with its planners across designs.
class Evaluator {
 public:
  Evaluator(const Workload& workload, ScheduleCache& cache);
  ~Evaluator();
  /// Offers the planning of each micro-batch of a design, and the layer passes of each width scheduled, to
  /// idle threads through `sharing` (answers unchanged).
  void share_work(WorkSharing& sharing) { scheduling_.sharing = &sharing; }

  /// The points of `design` that `wanted` accepts (by point key), in canonical order. Layer schedules are
  /// computed once per (micro-batch, model, width) and shared by every HBM size and recomputation setting.
  /// `wanted` is asked again before each width is scheduled for a point and before the point is returned: a
  /// point it no longer accepts is dropped (not returned; no more widths are scheduled for it), and the
  /// other points are those it would give had the point never been asked for.
  /// Where the pricer bounds its points (Pricer::bounds_points: PHAZE's execution, either planner), a point
  /// `leave_out` accepts on its bounds (each model's samples/s with its layers at their schedules' root
  /// bounds: PHAZE's planner's placement or the stagewise planner's work bound) is not evaluated: it is added to
  /// `left_out` instead, and no layer is scheduled for it alone.
  std::vector<PointOutcome> evaluate(const hw::Design& design, const std::function<bool(const std::string&)>& wanted,
                                     const LeaveOutTest& leave_out = {}, std::vector<LeftOutPoint>* left_out = nullptr);

  int64_t unproven_passes() const;

 private:
  const Workload& workload_;
  Scheduling scheduling_;
  std::unique_ptr<Pricer> pricer_;
  int64_t designs_since_reset_ = 0;
  std::tuple<int64_t, int64_t, int64_t> last_array_;  ///< width, depth and count of the last design's tensor cores
};

}  // namespace phaze::search
