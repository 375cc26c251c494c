#pragma once

// Tasks that idle threads may share. A thread with several independent tasks posts them and runs them
// itself, while threads that have nothing else to do take some of them; it returns once all have run. A
// search gives its threads one design each, and one design's layer schedules can take seconds each: the
// other threads, once they run out of designs, schedule some of that design's layers rather than wait.

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace phaze {

class WorkSharing {
 public:
  /// Runs every task, on this thread and on the threads that help meanwhile, and returns once all have run.
  /// Tasks must not depend on which thread runs them or on their order. The first exception a task threw
  /// is rethrown here, once the others have run.
  ///
  /// This thread takes the tasks from the last one back, helpers from the first one on: a caller lists the
  /// costliest last, so that helpers take the quick ones and go back to their own work, rather than leave
  /// this thread waiting for a long task they took. Once no task of its own is left, this thread helps with
  /// the other batches posted (those of the tasks that its helpers run, for one) until its own have run.
  void run(std::vector<std::function<void()>> tasks);

  /// Runs one posted task that no thread has taken yet; false when there is none.
  bool help();
  /// Whether a posted task waits for a thread.
  bool has_work() const { return waiting_.load() > 0; }
  /// Helps until `finished()` holds, sleeping while there is nothing to take. `finished` is asked before each
  /// task and after each wake(), with this object's lock held: it must not call into it.
  void help_until(const std::function<bool()>& finished);
  /// Wakes the threads in help_until to ask their condition again.
  void wake();
  /// Called whenever tasks are posted, to wake threads that wait for them elsewhere than in help_until (it
  /// runs on the posting thread; empty: none).
  void set_on_post(std::function<void()> hook);

 private:
  struct Batch {
    std::vector<std::function<void()>> tasks;
    size_t next = 0;  ///< the first task no thread has taken
    size_t end = 0;   ///< one past the last task no thread has taken
    size_t done = 0;
    std::exception_ptr failure;
  };
  /// Takes the next task of the first open batch (mutex_ held); nullptr when none.
  std::function<void()>* take(std::shared_ptr<Batch>& from);
  /// Takes the first (or, `last`, the last) task not taken yet of `batch`, which has one (mutex_ held), closing
  /// the batch when it was the only one left.
  std::function<void()>* take_next(const std::shared_ptr<Batch>& batch, bool last = false);
  void execute(Batch& batch, std::function<void()>& task);
  /// help_until with `lock` (on mutex_) held.
  void help_while(std::unique_lock<std::mutex>& lock, const std::function<bool()>& finished);

  std::mutex mutex_;
  std::condition_variable posted_;           ///< tasks posted, or a batch's last task done
  std::deque<std::shared_ptr<Batch>> open_;  ///< batches with tasks not taken yet, oldest first
  std::atomic<size_t> waiting_{0};           ///< tasks not taken yet
  std::function<void()> on_post_;
};

/// Runs the tasks through `sharing`, or in order on this thread when it is null.
void run_tasks(WorkSharing* sharing, std::vector<std::function<void()>> tasks);

}  // namespace phaze
