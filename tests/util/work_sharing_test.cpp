#include "util/work_sharing.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

namespace {

using phaze::WorkSharing;

/// `helpers` threads in help_until(stop) beside the test, each seen waiting once before the test goes on.
class Helpers {
 public:
  Helpers(WorkSharing& sharing, int helpers) : sharing_(sharing) {
    for (int k = 0; k < helpers; ++k)
      threads_.emplace_back([this] {
        bool counted = false;
        sharing_.help_until([&] {
          if (!counted) {
            counted = true;
            ++waiting_;
          }
          return stop_.load();
        });
      });
    while (waiting_.load() < helpers) std::this_thread::yield();
  }
  ~Helpers() {
    stop_ = true;
    sharing_.wake();
    for (std::thread& t : threads_) t.join();
  }

 private:
  WorkSharing& sharing_;
  std::vector<std::thread> threads_;
  std::atomic<int> waiting_{0};
  std::atomic<bool> stop_{false};
};

std::vector<std::function<void()>> counting_tasks(std::vector<std::atomic<int>>& runs, std::mutex& mutex,
                                                  std::set<std::thread::id>& threads) {
  std::vector<std::function<void()>> tasks;
  for (size_t k = 0; k < runs.size(); ++k)
    tasks.emplace_back([&, k] {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      ++runs[k];
      std::lock_guard lock(mutex);
      threads.insert(std::this_thread::get_id());
    });
  return tasks;
}

TEST(WorkSharing, EveryTaskRunsOnceWithoutHelpers) {
  WorkSharing sharing;
  std::vector<std::atomic<int>> runs(7);
  std::mutex mutex;
  std::set<std::thread::id> threads;
  sharing.run(counting_tasks(runs, mutex, threads));
  for (const std::atomic<int>& r : runs) EXPECT_EQ(r.load(), 1);
  EXPECT_EQ(threads, std::set<std::thread::id>{std::this_thread::get_id()});
  EXPECT_FALSE(sharing.has_work());
  EXPECT_FALSE(sharing.help());
}

TEST(WorkSharing, IdleThreadsTakeTasksAndRunReturnsOnceAllHaveRun) {
  WorkSharing sharing;
  Helpers helpers(sharing, 3);
  std::vector<std::atomic<int>> runs(40);
  std::mutex mutex;
  std::set<std::thread::id> threads;
  sharing.run(counting_tasks(runs, mutex, threads));
  // Every task has run, once, by the time run returns (the helpers' last ones included).
  for (const std::atomic<int>& r : runs) EXPECT_EQ(r.load(), 1);
  EXPECT_GT(threads.size(), 1u);
  EXPECT_FALSE(sharing.has_work());
}

TEST(WorkSharing, HelpersWakeOnPostAndTheHookIsCalled) {
  WorkSharing sharing;
  std::atomic<int> posts{0};
  sharing.set_on_post([&] { ++posts; });
  Helpers helpers(sharing, 1);
  std::vector<std::atomic<int>> runs(2);
  std::mutex mutex;
  std::set<std::thread::id> threads;
  sharing.run(counting_tasks(runs, mutex, threads));
  EXPECT_EQ(posts.load(), 1);
  // A single task runs on the calling thread without being posted.
  std::vector<std::function<void()>> one{[] {}};
  sharing.run(std::move(one));
  EXPECT_EQ(posts.load(), 1);
}

TEST(WorkSharing, TasksMayShareTheirOwnTasks) {
  // A task that posts tasks of its own (a design's micro-batches, each with its layer passes) does not wait
  // for a thread that waits for it.
  WorkSharing sharing;
  Helpers helpers(sharing, 2);
  std::atomic<int> inner{0};
  std::vector<std::function<void()>> outer;
  for (int k = 0; k < 6; ++k)
    outer.emplace_back([&] {
      std::vector<std::function<void()>> tasks;
      for (int j = 0; j < 5; ++j)
        tasks.emplace_back([&] {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
          ++inner;
        });
      sharing.run(std::move(tasks));
    });
  sharing.run(std::move(outer));
  EXPECT_EQ(inner.load(), 30);
}

TEST(WorkSharing, ThePosterTakesTheLastTaskAndHelpersTheFirst) {
  // The costliest task, listed last, runs on the posting thread: a helper would reach it only after the
  // two before it, which take 20 ms each.
  WorkSharing sharing;
  Helpers helpers(sharing, 1);
  std::vector<std::thread::id> ran(3);
  std::vector<std::function<void()>> tasks;
  for (size_t k = 0; k < ran.size(); ++k)
    tasks.emplace_back([&, k] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      ran[k] = std::this_thread::get_id();
    });
  sharing.run(std::move(tasks));
  EXPECT_EQ(ran[2], std::this_thread::get_id());
  EXPECT_NE(ran[0], std::this_thread::get_id());
}

TEST(WorkSharing, AWaitingPosterHelpsWithTheTasksItsHelpersPost) {
  // The helper takes the first task, which posts four of its own; the poster, its own task done, takes
  // some of them rather than wait for the helper to run all four.
  WorkSharing sharing;
  Helpers helpers(sharing, 1);
  std::mutex mutex;
  std::set<std::thread::id> inner_threads;
  std::vector<std::function<void()>> tasks;
  tasks.emplace_back([&] {
    std::vector<std::function<void()>> inner;
    for (int k = 0; k < 4; ++k)
      inner.emplace_back([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        std::lock_guard lock(mutex);
        inner_threads.insert(std::this_thread::get_id());
      });
    sharing.run(std::move(inner));
  });
  tasks.emplace_back([] {});
  sharing.run(std::move(tasks));
  EXPECT_TRUE(inner_threads.contains(std::this_thread::get_id()));
  EXPECT_EQ(inner_threads.size(), 2u);
}

TEST(WorkSharing, AFailureIsRethrownAfterEveryTaskRan) {
  WorkSharing sharing;
  Helpers helpers(sharing, 2);
  std::atomic<int> finished{0};
  std::vector<std::function<void()>> tasks;
  for (int k = 0; k < 10; ++k)
    tasks.emplace_back([&, k] {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      if (k % 4 == 1) throw std::runtime_error("task failed");
      ++finished;
    });
  EXPECT_THROW(sharing.run(std::move(tasks)), std::runtime_error);
  EXPECT_EQ(finished.load(), 7);
  EXPECT_FALSE(sharing.has_work());
}

}  // namespace
