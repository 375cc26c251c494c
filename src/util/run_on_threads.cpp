#include "util/run_on_threads.h"

#include <exception>
#include <mutex>
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
  std::vector<std::thread> pool;
  for (int k = 1; k < threads; ++k) pool.emplace_back(guarded);
  guarded();
  for (std::thread& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace phaze
