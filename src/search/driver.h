#pragma once

// The search driver: visits the designs of the space on N threads in the order of the area-bucket search
// (search/buckets.h; every design with --exhaustive), stores each evaluated point in the results file,
// resumes a killed run, and builds the answer from the stored points.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "search/baselines.h"
#include "search/buckets.h"
#include "search/point.h"
#include "search/question.h"
#include "util/progress.h"

namespace phaze::search {

/// How a search runs; nothing here changes the answer.
struct RunSettings {
  int threads = 1;
  std::string db_path;      ///< results file, locked for the run (one search per file); empty: in memory only
  int64_t top = 5;          ///< designs listed in the answer's top list
  bool keep_all = false;    ///< return every point (for a CSV of all points)
  ProgressOutput progress;  ///< where the progress line goes (default: nowhere)
};

/// The architecture search of one outer combination (method.md 7) and its best point.
struct CombinationResult {
  Combination combination;
  int64_t buckets_visited = 0;  ///< area buckets visited, those without a feasible design included
  int64_t designs_visited = 0;
  bool stop_fired = false;           ///< the stop rule ended the visit before the last bucket
  std::optional<PointOutcome> best;  ///< nothing when no visited point of it is feasible
};

/// The answer: the best point, the top list, each model's best point, over the explored points (those of the
/// designs each combination visited).
struct SearchAnswer {
  int64_t designs = 0;           ///< designs in the space
  int64_t points = 0;            ///< points in the space (designs × HBM sizes × micro-batches × recomputation)
  int64_t buckets = 0;           ///< area buckets of the space
  int64_t designs_explored = 0;  ///< designs visited by at least one combination
  int64_t points_explored = 0;   ///< the answer's points: per combination the designs it visited, summed
  int64_t feasible_points = 0;   ///< explored points where every model has a plan
  std::vector<CombinationResult> combinations;  ///< in the order of combinations()
  std::optional<PointOutcome> best;             ///< nothing when no point is feasible
  std::vector<PointOutcome> top;                ///< the best point of each of the `top` best designs, best first
  std::vector<std::optional<PointOutcome>> best_per_model;  ///< per model: the point of its highest throughput
  std::vector<PointOutcome> all;                            ///< with keep_all: every explored point in canonical order
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
  int64_t points_resumed = 0;    ///< taken from the results file instead of being evaluated
  int64_t points_evaluated = 0;  ///< evaluated by this run
  /// Of those, points of designs their combination did not visit in the end: handed out while the
  /// combination was running, finished after its stop rule fired. Stored, not part of the answer.
  int64_t points_past_stop = 0;
  int64_t schedule_hits = 0;    ///< layer passes answered by the schedule cache
  int64_t schedule_misses = 0;  ///< layer passes scheduled
  int64_t unproven_passes = 0;  ///< passes whose schedule is the best found within the node budget
  BaselineTimes baseline_times;
  double elapsed_s = 0;
};

/// Runs the search (the question is validated first). Threads take designs in visiting order, each with the
/// points of the combinations still running when it is handed out; each design's points are committed to the
/// results file as one batch. A bucket counts as finished once all its designs are, and buckets are finished
/// in visiting order only, so a combination stops where a single thread would stop it; threads run ahead of
/// the first unfinished bucket by a few designs at most, which bounds the work past a stop. The answer is
/// built from the results file's points (or the ones kept in memory) by replaying the stop rule over their
/// scores, so it does not depend on the thread count, nor on whether the run was resumed.
SearchAnswer run_search(const SearchQuestion& question, const RunSettings& settings, RunStats* stats = nullptr);

/// Adds one point to an answer under construction (best, top `top`, per-model bests, counts). The top
/// list holds one point per design (chip and HBM size); the result does not depend on the order of calls.
void accumulate(SearchAnswer& answer, const PointOutcome& point, int64_t top);

/// The TPUv4-like chip as the search's enumeration would build it (the question's HBM bandwidth and clock;
/// per-core SRAMs derived), with its area.
hw::Design tpuv4_design(const SearchQuestion& question);

}  // namespace phaze::search
