#include "util/run_on_threads.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>

namespace {

TEST(RunOnThreads, EveryThreadRunsTheWorkOnce) {
  for (int threads : {0, 1, 3}) {
    std::atomic<int> runs{0};
    phaze::run_on_threads(threads, [&] { ++runs; });
    EXPECT_EQ(runs, threads < 1 ? 1 : threads);
  }
}

TEST(RunOnThreads, AFailureIsRethrownAfterEveryThreadEnded) {
  std::atomic<int> started{0}, finished{0};
  EXPECT_THROW(phaze::run_on_threads(4,
                                     [&] {
                                       if (started++ == 0) throw std::runtime_error("first");
                                       ++finished;
                                     }),
               std::runtime_error);
  EXPECT_EQ(started, 4);
  EXPECT_EQ(finished, 3);
}

}  // namespace
