#pragma once

// The walk over the designs of a search on N threads: threads take designs in visiting order, in work units;
// a bucket counts as finished once all its designs are, and buckets are finished in visiting order only, so a
// combination stops where a single thread would stop it; threads run ahead of the first unfinished bucket by
// a few designs at most (the look-ahead), which bounds the work past a stop.

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "hw/enumerate.h"
#include "search/buckets.h"
#include "util/work_sharing.h"

namespace phaze::search {

/// Designs a thread may be handed beyond the start of the first unfinished bucket (besides the rest of that
/// bucket): enough that one slow design rarely leaves the other threads idle, few enough that the work done
/// past a stop stays small.
inline constexpr size_t kLookAheadPerThread = 4;

/// What the walk over the designs knows of one point.
struct Slot {
  bool known = false;
  bool evaluated = false;  ///< by this run; otherwise found in the results file
  std::optional<double> score;
};

/// The positions (in visiting order) a thread takes at once, in the order they are handed out. The bucket
/// search hands out one design at a time in visiting order, as its stop rule needs. The exact search,
/// whose answer does not depend on the order, hands out all designs with the same tensor cores (count and
/// systolic array) together, one GLB size after another per vector-core configuration: their GEMM estimates
/// are shared by one estimator, and designs that differ only in a GLB larger than every tile meet the same
/// layer schedules while the schedule cache still holds them. The groups come by tensor cores descending
/// (systolic array, then count): the largest reach the highest throughputs, so the answer's thresholds rise
/// early and the bounds leave out more of the rest (Llama-2-7B: 3,133 points evaluated instead of 16,897).
std::vector<std::vector<size_t>> work_units(const std::vector<hw::Design>& designs, const BucketOrder& order,
                                            bool exact);

/// The designs in visiting order, handed out to threads in work units, and the buckets finished so far.
/// Every member is guarded by `mutex`.
struct Walk {
  const BucketOrder& order;
  std::vector<std::vector<size_t>> units;
  size_t combinations;
  std::optional<int64_t> window;  ///< nothing: the exact rule, which never stops
  size_t look_ahead;              ///< designs beyond the start of the first unfinished bucket
  std::mutex mutex;
  std::condition_variable changed;
  size_t next = 0;                       ///< the next work unit to hand out
  size_t busy = 0;                       ///< threads in a work unit
  size_t frontier = 0;                   ///< the first bucket not finished
  std::vector<size_t> finished_designs;  ///< per bucket
  std::vector<Slot> slots;               ///< [position · combinations + combination]
  std::vector<CombinationState> states;  ///< per combination, updated as buckets finish in visiting order
  std::exception_ptr failure;

  Walk(const BucketOrder& o, std::vector<std::vector<size_t>> u, size_t c, std::optional<int64_t> w, size_t ahead)
      : order(o),
        units(std::move(u)),
        combinations(c),
        window(w),
        look_ahead(ahead),
        finished_designs(o.buckets(), 0),
        slots(o.designs.size() * c),
        states(c) {}

  bool any_running() const {
    return std::any_of(states.begin(), states.end(), [&](const CombinationState& s) { return running(s, order); });
  }
  bool more() const { return !failure && next < units.size() && any_running(); }
  /// Whether the next unit may be handed out now: its positions lie in the first unfinished bucket or the
  /// look-ahead after its start.
  bool next_allowed() const {
    if (!window || frontier >= order.buckets()) return true;
    const size_t limit = std::max(order.start[frontier + 1], order.start[frontier] + look_ahead);
    return std::all_of(units[next].begin(), units[next].end(), [&](size_t p) { return p < limit; });
  }
  Slot& slot(size_t position, size_t combination) { return slots[position * combinations + combination]; }
  const Slot& slot(size_t position, size_t combination) const { return slots[position * combinations + combination]; }
  /// Counts the design at `position` as finished and finishes the buckets that are now complete, in visiting
  /// order. Returns how many buckets it finished.
  int64_t finish_design(size_t position);

  /// Hands work units to the calling thread until the walk is over (no unit left, no combination running, or
  /// a thread failed), waiting while the next unit lies beyond the look-ahead. Calls `visit(position)` for
  /// each position of a unit in turn; `lock` holds `mutex`, and `visit` is called and returns with it held.
  /// With `sharing`, the thread runs tasks posted there (by threads evaluating designs) while it has no unit
  /// to take, and stays until no thread is in a unit any more; posting must notify `changed`.
  template <typename Visit>
  void take_designs(std::unique_lock<std::mutex>& lock, Visit&& visit, WorkSharing* sharing = nullptr) {
    while (true) {
      changed.wait(lock, [&] {
        // A failed thread left its unit without counting it finished: nothing is left to wait for (the
        // tasks it posted had all run before its exception left them).
        if (failure) return true;
        if (more()) return next_allowed() || (sharing && sharing->has_work());
        return !sharing || busy == 0 || sharing->has_work();
      });
      if (failure) break;
      if (more() && next_allowed()) {
        ++busy;
        for (const size_t position : units[next++]) visit(position);
        --busy;
        continue;
      }
      if (sharing && sharing->has_work()) {
        lock.unlock();
        sharing->help();
        lock.lock();
        continue;
      }
      break;
    }
  }
  /// Keeps a thread's failure (the first one) and wakes the waiting threads; takes `mutex`.
  void fail(std::exception_ptr e);
};

/// Runs `work` once on each of `threads` threads (run_on_threads), each taking designs with take_designs. A
/// thread's exception is kept in the walk (Walk::fail), to wake the waiting threads, and the first one is
/// rethrown once every thread has ended.
void run_walk(Walk& walk, int threads, const std::function<void()>& work);

}  // namespace phaze::search
