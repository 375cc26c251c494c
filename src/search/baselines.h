#pragma once

// The baselines a search answer is compared with (method.md 8), computed after the search from its answer
// with the search's own cost model: the TPUv4-like chip with its real 32 GiB of HBM, the hand-set
// Megatron-style plans of method.md 8.2 (our stage rule, D26), and the Spotlight-style design chosen for
// single-chip latency alone (method.md 8.3). None of them changes the search's answer (D25).

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cost/operator_cost.h"
#include "hw/enumerate.h"
#include "megatron/training_step.h"
#include "placement/chain.h"
#include "placement/plan_check.h"
#include "schedule/problem.h"
#include "search/evaluate.h"
#include "search/layer_scheduling.h"
#include "search/point.h"
#include "search/question.h"
#include "search/schedule_cache.h"

namespace phaze::search {

/// TPUv4's real HBM capacity, bytes: the HBM size of the strict TPUv4-like point.
inline constexpr int64_t kTpuv4HbmBytes = 32ll << 30;

/// The whole architecture of a point's design: the question's HBM bandwidth and clock (as the
/// enumeration sets them) with the point's cores, buffer and HBM size. A point's record keeps only the latter.
hw::Architecture point_architecture(const SearchQuestion& question, const hw::Architecture& design);

// ---- Hand-set Megatron-style plans (method.md 8.2) ------------------------------------------------------

/// The plan of method.md 8.2's table for a model preset name (opt-350m, bert-large, gpt2-xl, megatron-bert,
/// megatron-gpt2-xl, megatron-gpt2-54, megatron-gpt2-72, gpt3-175b, llama2-7b); nothing for any other name.
std::optional<placement::HandSetPlan> megatron_table_plan(const std::string& preset);

/// A model's hand-set plan evaluated at one point.
struct HandSetOutcome {
  bool has_plan = false;  ///< the model is in the table
  placement::HandSetPlan plan;
  std::vector<placement::Stage> stages;
  bool feasible = false;
  std::string reason;  ///< why the model has no plan, or why its plan is infeasible at this point
  double time_per_batch_s = 0;
  placement::BatchTimeParts parts;    ///< seconds
  double samples_per_s = 0;           ///< global batch / time per batch
  double searched_samples_per_s = 0;  ///< the searched plan's throughput at the same point (0: none given)
};

/// Evaluates `plan` for model `model` of the question on `design` (whole architecture, its HBM size the
/// memory limit) at micro-batch `micro_batch`, with the search's cost model: the width-t layer graph's
/// passes through the exact solver (whether or not t is among the widths searched), `make_chain`,
/// `make_cluster` with the corrected terms, and `placement::check_plan` on the plan's stages
/// (placement::hand_set_stages). Infeasible,
/// with the reason, when a stage is empty, the plan needs more devices than the cluster has or more
/// replicas than micro-batches, an operator has no estimate, or a stage does not fit in memory.
HandSetOutcome evaluate_hand_set_plan(const SearchQuestion& question, size_t model, const placement::HandSetPlan& plan,
                                      const hw::Architecture& design, int64_t micro_batch, bool recompute,
                                      Scheduling& scheduling);

/// The table plan of every model at one point (`searched`: the point's searched outcome, for the ratio).
std::vector<HandSetOutcome> hand_set_at(const SearchQuestion& question, const PointOutcome& searched,
                                        Scheduling& scheduling);

// ---- Spotlight-style design (method.md 8.3) -------------------------------------------------------------

/// Search nodes within which the Spotlight-style argmin takes a pass's exact schedule outright.
inline constexpr int64_t kSpotlightQuickNodes = 20'000;

/// The Spotlight-style choice at one micro-batch size b: the design of minimum single-chip training latency
/// per sample, Σ over chain positions of forward + backward layer makespans at t = 1 for micro-batch b,
/// divided by b, averaged over the models (ties: the smaller area, then canonical order).
struct SpotlightChoice {
  int64_t micro_batch = 0;
  bool found = false;  ///< some design has a finite single-chip latency
  hw::Design design;
  double seconds_per_sample = 0;
  std::optional<PointOutcome> best;  ///< its best point at b over the HBM sizes and recomputation settings
  // How much work the exact argmin took (not part of the answer).
  int64_t designs_estimated = 0;  ///< designs whose operators were estimated for a tighter bound
  int64_t designs_scheduled = 0;  ///< designs with some layer pass scheduled exactly
};

/// The exact argmin over `designs` (canonical order) at micro-batch b. Designs are visited best-first by a
/// lower bound of their objective and the visit stops when the bound exceeds the best objective found:
/// first a bound without estimates (the tensor-core work Σ MACs over the design's peak MAC rate), then the
/// exact solver's root bounds on the estimated passes, then the exact schedules, one pass at a time (forward
/// passes first), a design going back to wait with its raised bound once another one is ahead of it.
/// A design that leads refines its next pass: a pass the exact solver proves within `quick_nodes` nodes is
/// scheduled exactly; for any other, the solver is first asked to show that no schedule is shorter than a
/// target that would put the design behind the next one waiting (or for good behind the best found), and the
/// pass is scheduled exactly only when it is faster than any such target (0: every pass is asked first;
/// negative: none is, every pass is scheduled exactly).
/// `best` is not filled.
SpotlightChoice spotlight_choice(const SearchQuestion& question, const std::vector<hw::Design>& designs,
                                 int64_t micro_batch, Scheduling& scheduling,
                                 int64_t quick_nodes = kSpotlightQuickNodes);

/// The Spotlight-style argmins of every micro-batch size of a question, computed by whichever threads call
/// work(): they need nothing from the search, so the search's threads take them beside its designs. Each
/// argmin is deterministic, so the choices are the same whatever thread takes which.
class SpotlightArgmins {
 public:
  /// `designs` (search_designs of the question) and `cache` must outlive the object.
  SpotlightArgmins(const SearchQuestion& question, const std::vector<hw::Design>& designs, ScheduleCache& cache);
  /// Takes the micro-batch sizes not yet taken, one at a time, until none is left.
  void work();
  /// The choices in the question's order, once every call of work() has returned (and every size was taken).
  std::vector<SpotlightChoice> take();
  /// Seconds spent in work(), summed over the threads that called it (read while no call of work() runs).
  double seconds() const { return seconds_; }

 private:
  const SearchQuestion& question_;
  const std::vector<hw::Design>& designs_;
  ScheduleCache& cache_;
  std::vector<SpotlightChoice> choices_;
  std::atomic<size_t> next_{0};
  std::mutex mutex_;  // guards seconds_
  double seconds_ = 0;
};

/// The Spotlight-style baseline: the choice at every micro-batch size of the question; the baseline point
/// is the best (search order) of their best points.
struct SpotlightBaseline {
  std::vector<SpotlightChoice> per_micro_batch;  ///< in the question's order
  std::optional<size_t> chosen;                  ///< index of the baseline's micro-batch; nothing: no feasible point
};

// ---- All of them ------------------------------------------------------------------------------------------

/// A GPU cluster beside the designs (SearchQuestion::gpu_baselines): each model's fastest Megatron-LM
/// configuration that fits on the question's devices, global batch and sequence (`phaze plan`'s exhaustive search,
/// megatron/plan_search.h), priced by the GPU's kernel model, in BF16 (the template's chips compute in 16 bits).
struct GpuBaseline {
  std::string system;                                          ///< the system's name
  std::string gpu;                                             ///< its GPU's name
  double peak_flop_per_s = 0;                                  ///< the GPU's dense 16-bit tensor peak
  std::vector<std::optional<megatron::StepPrediction>> plans;  ///< per model; nothing when none fits
  /// Global batch / iteration time averaged over the models, as a point's score; 0 when a model has no plan.
  double average_samples_per_s = 0;
};
/// The baseline of one GPU system under the question.
GpuBaseline gpu_baseline(const SearchQuestion& question, const hw::System& system);

struct Baselines {
  /// The TPUv4-like chip with exactly 32 GiB of HBM, best over micro-batches and recomputation; nothing
  /// when no such point is feasible.
  std::optional<PointOutcome> tpuv4_32gib;
  std::vector<HandSetOutcome> hand_set_on_best;   ///< per model; empty when there is no best point
  std::vector<HandSetOutcome> hand_set_on_tpuv4;  ///< per model; empty when the TPUv4-like chip has no point
  SpotlightBaseline spotlight;
  std::vector<GpuBaseline> gpu;  ///< one per SearchQuestion::gpu_baselines, in its order
};

/// Seconds each baseline took (not part of the answer).
struct BaselineTimes {
  double total_s = 0;  ///< everything, including the layer graphs they share and the argmins taken during the search
  double tpuv4_32gib_s = 0;
  double hand_set_s = 0;
  double spotlight_s = 0;           ///< the argmins (summed over the threads that took them), then their best points
  double gpu_s = 0;                 ///< the GPU clusters' plan searches
  int64_t spotlight_estimated = 0;  ///< designs estimated, summed over micro-batches
  int64_t spotlight_scheduled = 0;  ///< designs with some pass scheduled exactly, summed over micro-batches
};

/// Computes every baseline for the question, given the search's best point and the TPUv4-like baseline
/// point (either may be missing), and the search's workload of `question`. Deterministic whatever the number
/// of `threads` (the Spotlight-style argmins of the micro-batch sizes run on them, unless `argmins` took
/// them already: those are finished here); `cache` may be the search's.
Baselines compute_baselines(const SearchQuestion& question, const std::optional<PointOutcome>& best,
                            const std::optional<PointOutcome>& tpuv4_best, const Workload& workload,
                            ScheduleCache& cache, int threads = 1, BaselineTimes* times = nullptr,
                            SpotlightArgmins* argmins = nullptr);

}  // namespace phaze::search
