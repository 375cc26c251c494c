// The walk that hands designs to threads: a thread that fails inside a work unit ends the walk for the
// others too, and its exception reaches the caller.

#include "search/design_walk.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "util/work_sharing.h"

namespace {

using phaze::search::BucketOrder;
using phaze::search::Walk;

// One bucket of four designs, one per unit, exhaustive. The thread that takes position 0 throws; the
// other thread runs the rest and then waits for threads still in a unit, with posted tasks to help with
// (as a search with work sharing does). Before the fix it waited for the failed thread forever.
TEST(DesignWalk, AFailedThreadEndsTheWalkForTheOthers) {
  BucketOrder order;
  order.designs = {0, 1, 2, 3};
  order.start = {0, 4};
  Walk walk(order, {{0}, {1}, {2}, {3}}, 1, std::nullopt, 4);
  phaze::WorkSharing sharing;
  std::atomic<int> visited{0};
  auto run = std::async(std::launch::async, [&] {
    phaze::search::run_walk(walk, 2, [&] {
      std::unique_lock lock(walk.mutex);
      walk.take_designs(
          lock,
          [&](size_t position) {
            if (position == 0) {
              // Let the other thread reach its wait first, as a slow design would.
              lock.unlock();
              std::this_thread::sleep_for(std::chrono::milliseconds(50));
              lock.lock();
              throw std::runtime_error("design 0 failed");
            }
            ++visited;
          },
          &sharing);
    });
  });
  ASSERT_EQ(run.wait_for(std::chrono::seconds(20)), std::future_status::ready) << "the walk hangs";
  EXPECT_THROW(run.get(), std::runtime_error);
  EXPECT_LE(visited.load(), 3);
}

}  // namespace
