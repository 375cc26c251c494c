#pragma once

#include <functional>

namespace phaze {

/// Runs `work` once on each of `threads` threads (at least one; the calling thread is one of them) and
/// returns when all have returned. The first exception that any of them threw is rethrown then; the others
/// still run to their end. `work` hands out its own tasks (e.g. from an atomic counter) and keeps per-thread
/// state in its locals.
void run_on_threads(int threads, const std::function<void()>& work);

}  // namespace phaze
