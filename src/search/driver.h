#pragma once

// The search driver: evaluates every point of the space on N threads, stores each point in the results
// file, resumes a killed run, and builds the answer from the stored points.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "search/baselines.h"
#include "search/point.h"
#include "search/question.h"
#include "util/progress.h"

namespace phaze::search {

/// How a search runs; nothing here changes the answer.
struct RunSettings {
  int threads = 1;
  std::string db_path;      ///< results file; empty: keep results in memory only
  int64_t top = 5;          ///< designs listed in the answer's top list
  bool keep_all = false;    ///< return every point (for a CSV of all points)
  ProgressOutput progress;  ///< where the progress line goes (default: nowhere)
};

/// The answer: the best point, the top list, each model's best point.
struct SearchAnswer {
  int64_t designs = 0;               ///< designs in the space
  int64_t points = 0;                ///< points in the space (designs × HBM sizes × micro-batches × recomputation)
  int64_t feasible_points = 0;       ///< points where every model has a plan
  std::optional<PointOutcome> best;  ///< nothing when no point is feasible
  std::vector<PointOutcome> top;     ///< the best point of each of the `top` best designs, best first
  std::vector<std::optional<PointOutcome>> best_per_model;  ///< per model: the point of its highest throughput
  std::vector<PointOutcome> all;                            ///< with keep_all: every point in canonical order
  /// Baseline: the TPUv4-like chip (accelerator.md) with its best point over the same HBM sizes, micro-batch
  /// sizes and recomputation settings, whether or not it lies in the searched space; nothing when no point
  /// of it is feasible.
  std::optional<PointOutcome> tpuv4_baseline;
  /// The other baselines (baselines.h): the strict 32 GiB TPUv4-like point, the hand-set Megatron-style
  /// plans, the Spotlight-style design.
  Baselines baselines;
};

/// What a run did (not part of the answer: a resumed run differs here, never in the answer).
struct RunStats {
  int64_t points_resumed = 0;    ///< found in the results file
  int64_t points_evaluated = 0;  ///< evaluated by this run
  int64_t schedule_hits = 0;     ///< layer passes answered by the schedule cache
  int64_t schedule_misses = 0;   ///< layer passes scheduled
  int64_t unproven_passes = 0;   ///< passes whose schedule is the best found within the node budget
  BaselineTimes baseline_times;
  double elapsed_s = 0;
};

/// Runs the search (the question is validated first). Designs are split statically over the threads
/// (design i to thread i mod N); each design's points are committed to the results file as one batch. The
/// answer is built from the results file's points (or the ones kept in memory), so it does not depend on the
/// thread count, nor on whether the run was resumed.
SearchAnswer run_search(const SearchQuestion& question, const RunSettings& settings, RunStats* stats = nullptr);

/// Adds one point to an answer under construction (best, top `top`, per-model bests, counts). The top
/// list holds one point per design (chip and HBM size); the result does not depend on the order of calls.
void accumulate(SearchAnswer& answer, const PointOutcome& point, int64_t top);

/// The TPUv4-like chip as the search's enumeration would build it (the question's HBM bandwidth, clock and
/// link; per-core SRAMs derived), with its area.
hw::Design tpuv4_design(const SearchQuestion& question);

/// The same design: tensor and vector cores, buffer and HBM size (micro-batch and recomputation aside).
bool same_design(const hw::Architecture& a, const hw::Architecture& b);

}  // namespace phaze::search
