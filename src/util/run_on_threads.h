#pragma once

#include <functional>
#include <stdexcept>

namespace phaze {

/// The system refused to start one of the threads asked for.
class ThreadStartError : public std::runtime_error {
 public:
  explicit ThreadStartError(const std::string& message) : std::runtime_error(message) {}
};

/// Runs `work` once on each of `threads` threads (at least one; the calling thread is one of them) and
/// returns when all have returned. The first exception that any of them threw is rethrown then; the others
/// still run to their end. `work` hands out its own tasks (e.g. from an atomic counter) and keeps per-thread
/// state in its locals. When the system refuses a thread, the threads already started are joined without
/// running `work` and ThreadStartError is thrown: nothing was done.
void run_on_threads(int threads, const std::function<void()>& work);

}  // namespace phaze
