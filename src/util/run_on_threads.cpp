#include "util/run_on_threads.h"

#include <fmt/format.h>

#include <exception>
#include <future>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace phaze {

void run_on_threads(int threads, const std::function<void()>& work) {
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto guarded = [&] {
    try {
      work();
    } catch (...) {
      std::lock_guard lock(failure_mutex);
      if (!failure) failure = std::current_exception();
    }
  };
  // The helpers wait until every one of them has started, so that a refused thread stops the run before any
  // work is done rather than after the started threads have done all of it.
  std::promise<bool> start;
  const std::shared_future<bool> go = start.get_future().share();
  std::vector<std::thread> pool;
  pool.reserve(threads > 1 ? static_cast<size_t>(threads - 1) : 0);
  for (int k = 1; k < threads; ++k) {
    try {
      pool.emplace_back([&guarded, go] {
        if (go.get()) guarded();
      });
    } catch (const std::system_error& e) {
      // A process or memory limit. Join what started (a joinable std::thread destroyed would terminate the
      // process), then report.
      start.set_value(false);
      for (std::thread& t : pool) t.join();
      throw ThreadStartError(fmt::format("cannot start thread {} of {} ({})", k + 1, threads, e.code().message()));
    }
  }
  start.set_value(true);
  guarded();
  for (std::thread& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace phaze
