#pragma once

// The search driver: visits the designs of the space on N threads in the order of the area-bucket search
// (every design under the exact stop rule; by area bucket under --stop-rule buckets, search/buckets.h), stores each
// evaluated point in the results file, resumes a killed run, and builds the answer from the stored points.

#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "search/answer.h"
#include "search/baselines.h"
#include "search/question.h"
#include "util/mpi_job.h"
#include "util/progress.h"

namespace phaze::search {

/// How a search runs; nothing here changes the answer.
struct RunSettings {
  int threads = 1;
  std::string db_path;    ///< results file, locked for the run (one search per file); empty: in memory only
  int64_t top = 5;        ///< designs listed in the answer's top list
  bool keep_all = false;  ///< return every point (for a CSV of all points)
  bool pareto = false;    ///< find the Pareto frontiers (SearchAnswer::pareto; the exact rule only)
  /// A search under the exact rule that lists only its best points (no keep_all; PHAZE's execution, either
  /// planner) leaves out the points whose bounds show they cannot enter its answer (answer_thresholds.h); a
  /// results file then holds the points evaluated.
  /// False: every point is evaluated. The answer is the same either way.
  bool leave_out_by_bound = true;
  ProgressOutput progress;  ///< where the progress line goes (default: nowhere)
  /// The MPI job this process is rank 0 of: its other ranks evaluate designs too (search/rank_evaluation.h).
  /// Nothing, or a job of one rank: this process alone.
  MpiJob* job = nullptr;
  /// Set (by another thread) to stop the run: no design is taken after it, and run_search throws
  /// SearchCancelled once the designs under way are done. A results file keeps what was evaluated.
  const std::atomic<bool>* cancel = nullptr;
};

/// What run_search throws when RunSettings::cancel was set.
struct SearchCancelled : std::runtime_error {
  SearchCancelled() : std::runtime_error("search cancelled") {}
};

/// What a run did (not part of the answer: a resumed run differs here, never in the answer).
struct RunStats {
  int64_t points_resumed = 0;    ///< taken from the results file instead of being evaluated
  int64_t points_evaluated = 0;  ///< evaluated by this run
  /// Left out on their bounds (RunSettings::leave_out_by_bound) instead of being evaluated. How many depends
  /// on the order the threads finish designs in (the thresholds rise sooner or later), never the answer.
  int64_t points_left_out = 0;
  int64_t points_left_out_remote = 0;  ///< of those, by the other ranks of an MPI job
  /// Of those, points of designs their combination did not visit in the end: handed out while the
  /// combination was running, finished after its stop rule fired. Stored, not part of the answer.
  int64_t points_past_stop = 0;
  int64_t schedule_hits = 0;    ///< layer passes answered by the schedule cache
  int64_t schedule_misses = 0;  ///< layer passes scheduled
  int64_t unproven_passes = 0;  ///< passes whose schedule is the best found within the node budget
  int64_t remote_threads = 0;   ///< threads of the other ranks of the MPI job that evaluated designs
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

/// The TPUv4-like chip as the search's enumeration would build it (the question's HBM bandwidth and clock;
/// per-core SRAMs derived), with its area.
hw::Design tpuv4_design(const SearchQuestion& question);

}  // namespace phaze::search
