#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "schedule/problem.h"

namespace phaze::search {

/// What the search keeps of a layer pass's schedule: its makespan and the figures reported with it.
struct PassSummary {
  bool feasible = false;  ///< false when an operator has no finite estimate on the design
  double makespan_s = 0;
  double energy_j = 0;
  double tensor_utilisation = 0;  ///< busy tensor-core time / (n_TC · makespan)
  double vector_utilisation = 0;
  bool proven_optimal = false;
  double lower_bound_s = 0;
  bool operator==(const PassSummary&) const = default;
};

/// Schedules layer passes once per distinct scheduling problem. The key is what decides the schedule: the
/// cores its schedules can use (schedule::usable_cores), scheduling rules, every task's kind and latencies
/// (bit for bit), and the edges. Task ids and energies do not count: no solver reads them. The exact and list
/// solvers solve a problem with its usable cores only, so problems that differ only in idle cores or in
/// energies have the same schedule; a hit summarises the stored one (each task's mode and duration) on the
/// asking problem, its energies and core counts, as a fresh solve summarises it. Equal problems arise for the
/// L identical transformer layers, for models that share a layer shape, and for designs whose differences do
/// not reach a layer's latencies (e.g. a GLB larger than any tile, vector cores that change only energies, or
/// more vector cores than the layer's vector operators can use at once). A hash selects a bucket, a full
/// comparison decides.
///
/// Any number of threads may call solve() at once: the solver runs outside the lock, so two threads may
/// solve the same problem at the same time; both get the same answer (the solvers are deterministic), the
/// first stored stays. The cache holds at most `capacity` problems and forgets all of them when full, which
/// bounds its memory without changing any answer.
class ScheduleCache {
 public:
  explicit ScheduleCache(size_t capacity = 8192) : capacity_(capacity) {}

  /// The summary of the optimal (or best found) schedule of `problem`, solved by `solver` when not cached.
  PassSummary solve(const schedule::Problem& problem, schedule::Solver& solver);
  /// schedule::exact_lower_bound of `problem` (seconds; finite latencies), computed when not cached. The
  /// bound is the exact solver's at its root on the usable cores, so it too follows from the key.
  double root_bound(const schedule::Problem& problem);

  int64_t hits() const { return hits_.load(std::memory_order_relaxed); }
  int64_t misses() const { return misses_.load(std::memory_order_relaxed); }

 private:
  size_t capacity_;
  size_t size_ = 0;
  std::mutex mutex_;
  /// A solved schedule: its figures and each task's mode and duration (kept_of in the .cpp), from which the
  /// summary on any problem of that key follows.
  struct Entry {
    schedule::Problem key;
    schedule::Schedule schedule;
  };
  std::unordered_map<uint64_t, std::vector<Entry>> buckets_;
  /// A root bound with its key; held to the same capacity, apart from the schedules.
  struct BoundEntry {
    schedule::Problem key;
    double bound_s = 0;
  };
  std::unordered_map<uint64_t, std::vector<BoundEntry>> bounds_;
  size_t bounds_size_ = 0;
  std::atomic<int64_t> hits_{0}, misses_{0};
};

/// Hash of what decides a problem's schedule (everything ScheduleCache compares).
uint64_t problem_hash(const schedule::Problem& problem);
/// Whether two problems have the same schedule: the same content but ids and energies (latencies compared
/// bit for bit).
bool same_problem(const schedule::Problem& a, const schedule::Problem& b);
/// Schedules one problem: infeasible when a latency is not finite, else the solver's schedule, summarised.
PassSummary solve_pass(const schedule::Problem& problem, schedule::Solver& solver);

}  // namespace phaze::search
