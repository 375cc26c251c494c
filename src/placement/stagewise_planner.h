#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "placement/batch_time.h"
#include "placement/chain.h"
#include "placement/corrected_planner.h"
#include "placement/recompute_frontier.h"
#include "placement/stagewise_plan.h"

namespace phaze::placement {

/// Exact placement with Piper's generality under phaze's time per batch (stagewise_plan.h): each stage of
/// the pipeline has its own width t_k (one chain per width), its own data-parallel degree d_k (Σ devices ≤ K)
/// and its own set of recomputed layers (recompute_frontier.h; none when Cluster::recompute is off), under
/// the per-device memory limit with the micro-batches 1F1B keeps in flight.
///
/// The time per batch is A + S with A = max_k (⌈N/d_k⌉ + p − 1)·L_k and S = max_k sync_k. For a stage count
/// p and a threshold θ on A, every stage takes the least degree that keeps its term within θ (more replicas
/// only cost devices and synchronisation), and a dynamic program over (suffix, stages) keeps the Pareto
/// pairs (devices, S): g(θ) is the least S within K devices. The least feasible θ* is found by a bisection
/// that jumps (an infeasible θ stays infeasible up to the next threshold at which some stage's least degree
/// falls; a feasible plan moves the upper end to its own A, a value the time model produces), and θ above it
/// is tried only while θ + g(θ) could still win: on [lo, hi] the time is at least lo + g(hi). No tolerance enters;
/// every answer is re-evaluated by evaluate_stagewise. PHAZE's own plan (CorrectedPlanner: one width, one degree,
/// whole-stage recomputation) is the first incumbent, so the answer is never slower, and a stage count that cannot
/// reach A below the incumbent is skipped at the cost of one dynamic program.
class StagewisePlanner {
 public:
  /// `chains`: one per width, pure chains (edges only between consecutive positions) of equal length;
  /// `cluster` with the corrected terms on. Throws std::invalid_argument otherwise. `hints`: plans of other
  /// questions on the same chains (e.g. with less memory); those that fit here start the search as
  /// incumbents, which only saves work: the answer is the same without them.
  StagewisePlan solve(const std::vector<Chain>& chains, const Cluster& cluster,
                      const std::vector<StagewisePlan>& hints = {});
  /// Whether any plan fits (memory and devices), which does not depend on the latencies: solve(...).feasible
  /// at the cost of one dynamic program per stage count.
  bool feasible(const std::vector<Chain>& chains, const Cluster& cluster);

  /// Dynamic programs run by the last solve (a measure of its work).
  int64_t programs_run() const { return programs_; }

 private:
  struct Label {
    int64_t devices = 0;
    double sync = 0;  // largest stage sync (all-reduce + optimizer step) of the partial plan
    int next = 0;     // end of the first stage
    int chain = 0;    // its chain
    int child = -1;   // label of the rest at (next, stages − 1)
  };
  /// No label: more devices than any cluster, and an infinite sync.
  static constexpr Label kNoLabel{std::numeric_limits<int64_t>::max() / 4, std::numeric_limits<double>::infinity(), 0,
                                  0, -1};
  void prepare(const std::vector<Chain>& chains, const Cluster& cluster);
  /// `hint`'s stages, chains and degrees with this cluster's recomputation; infeasible when they do not fit.
  StagewisePlan replay(const StagewisePlan& hint, const std::vector<Chain>& chains, const Cluster& cluster);
  void build_tables(const std::vector<Chain>& chains, const Cluster& cluster);
  /// Index of stage [i, j) among the distinct stages: stages with the same layers and boundary bytes in
  /// every chain (the runs of identical transformer layers) share their figures.
  size_t kind(int i, int j) const {
    return kind_[static_cast<size_t>(i) * (static_cast<size_t>(n_) + 1) + static_cast<size_t>(j)];
  }
  /// Index of stage [i, j) at chain w in the per-chain tables.
  size_t at(size_t w, int i, int j) const { return w * kinds_ + kind(i, j); }
  double load(size_t w, int64_t in_flight, int i, int j) const {
    return loads_[(w * static_cast<size_t>(max_stages_) + static_cast<size_t>(in_flight - 1)) * kinds_ + kind(i, j)];
  }
  /// Runs the dynamic program for p stages at threshold θ; returns the index of the best label of the whole
  /// chain within the devices (least S), or -1. `pareto` false keeps one label per cell, the fewest devices
  /// (then least S): enough to decide feasibility. A Pareto run drops stages whose S is at least `sync_cap`.
  /// Either way next_change_ becomes the least threshold above θ at which some stage's least degree changes:
  /// up to it the program's outcome stays the same.
  /// Empties the cells of a run of p stages, but for the empty suffix.
  void reset_cells(int64_t p, bool pareto);
  /// The corrected terms' once-per-iteration seconds of stage cell `cell` at degree d.
  double stage_sync_s(size_t cell, int64_t d) const;
  int run(int64_t p, double theta, bool pareto, double sync_cap);
  /// The least-load recomputation set of stage [i, j) of `chain` that fits with `in_flight` micro-batches.
  std::vector<int> recomputed_layers(const Chain& chain, int i, int j, int64_t in_flight, double params,
                                     const Cluster& cluster);
  /// Stage [i, j) at chain w with `degree` replicas, its table figures and least-load recomputation set.
  StagewiseStage make_stage(const std::vector<Chain>& chains, size_t w, int i, int j, int64_t in_flight, int64_t degree,
                            const Cluster& cluster);
  /// The plan of label `label` of the last run.
  StagewisePlan plan_of(int64_t p, double theta, int label, const std::vector<Chain>& chains, const Cluster& cluster);
  /// The most micro-batches q ≤ N per replica with (q + p − 1)·L ≤ θ; 0 when none.
  int64_t slots(double theta, double load, int64_t p) const;
  /// ⌈N/q⌉, the least degree that gives a replica at most q micro-batches; 0 for q = 0.
  int64_t degree_of(int64_t q) const;
  /// The least degree d with (⌈N/d⌉ + p − 1)·L ≤ θ; 0 when none.
  int64_t least_degree(double theta, double load, int64_t p) const;
  /// The least threshold above θ at which a stage of `load` with `q` = slots(θ, load, p) gets a smaller
  /// degree; +inf at degree 1.
  double degree_change(int64_t q, double load, int64_t p) const;
  /// Adds `l` to a Pareto front of (devices, S), dropping what it dominates.
  static void insert_pareto(std::vector<Label>& front, const Label& l);
  /// Label k of cell (s stages, from position i) of the last run.
  const Label& label(int64_t s, int i, int k) const;

  int n_ = 0;
  int64_t max_stages_ = 0, devices_ = 0, micro_batches_ = 0;
  std::optional<StageSyncModel> sync_;     // of the last call's cluster
  Cluster cluster_;                        // the last call's: its data-parallel network prices the rings
  size_t kinds_ = 0;                       // distinct stages
  std::vector<uint32_t> kind_;             // [i][j]
  std::vector<double> loads_;              // [chain][in flight − 1][kind]; +inf: does not fit
  std::vector<double> params_;             // [chain][kind]
  std::vector<double> work_;               // [chain][v]: forward + backward time of position v
  std::vector<int64_t> stage_devices_;     // [chain][kind]
  std::vector<std::vector<Label>> cells_;  // [stages][i], Pareto runs
  std::vector<Label> single_;              // [stages][i], one label per cell (feasibility runs)
  bool last_pareto_ = false;
  std::vector<Label> scratch_;
  CorrectedPlanner uniform_;
  RecomputeFrontier frontier_;
  int64_t programs_ = 0;
  double next_change_ = 0;
};

}  // namespace phaze::placement
