#include "search/schedule_cache.h"

#include <bit>
#include <optional>
#include <utility>

#include "schedule/usable_cores.h"
#include "util/hash_mix.h"

namespace phaze::search {

namespace {

uint64_t bits(double x) {
  return std::bit_cast<uint64_t>(x);
}

bool same_task(const schedule::Task& a, const schedule::Task& b) {
  return a.kind == b.kind && bits(a.single_s) == bits(b.single_s) && bits(a.parallel_s) == bits(b.parallel_s);
}

/// problem_hash with these core counts in place of the problem's own.
uint64_t hash_with_cores(const schedule::Problem& p, const schedule::CoreCounts& cores) {
  uint64_t h = hash_mix(0, static_cast<uint64_t>(cores.tensor_cores));
  h = hash_mix(h, static_cast<uint64_t>(cores.vector_cores));
  h = hash_mix(h, (p.comm_as_vector ? 1u : 0u) | (p.overlap_across_types ? 2u : 0u));
  h = hash_mix(h, p.tasks.size());
  for (const schedule::Task& t : p.tasks) {
    h = hash_mix(h, static_cast<uint64_t>(t.kind));
    h = hash_mix(h, bits(t.single_s));
    h = hash_mix(h, bits(t.parallel_s));
  }
  for (const auto& [from, to] : p.edges)
    h = hash_mix(h, (static_cast<uint64_t>(from) << 32) | static_cast<uint32_t>(to));
  return h;
}

/// same_problem but for the core counts.
bool same_content(const schedule::Problem& a, const schedule::Problem& b) {
  if (a.comm_as_vector != b.comm_as_vector || a.overlap_across_types != b.overlap_across_types ||
      a.tasks.size() != b.tasks.size() || a.edges != b.edges)
    return false;
  for (size_t i = 0; i < a.tasks.size(); ++i)
    if (!same_task(a.tasks[i], b.tasks[i])) return false;
  return true;
}

/// The entry of `buckets` (hash → entries with a `key` problem) under hash `h` whose key has the `usable`
/// counts and the content of `problem`; nullptr when none.
template <typename Buckets>
const typename Buckets::mapped_type::value_type* find_entry(const Buckets& buckets, uint64_t h,
                                                            const schedule::CoreCounts& usable,
                                                            const schedule::Problem& problem) {
  const auto it = buckets.find(h);
  if (it == buckets.end()) return nullptr;
  for (const auto& e : it->second)
    if (e.key.tensor_cores == usable.tensor_cores && e.key.vector_cores == usable.vector_cores &&
        same_content(e.key, problem))
      return &e;
  return nullptr;
}

/// Stores `entry` (whose key is `problem` on the `usable` counts) under hash `h` unless an equal key is
/// there already (another thread stored it first); forgets every entry first when `size` reached `capacity`.
template <typename Buckets, typename Entry>
void store_entry(Buckets& buckets, size_t& size, size_t capacity, uint64_t h, const schedule::CoreCounts& usable,
                 const schedule::Problem& problem, Entry entry) {
  if (size >= capacity) {
    buckets.clear();
    size = 0;
  }
  if (find_entry(buckets, h, usable, problem)) return;
  buckets[h].push_back(std::move(entry));
  ++size;
}

/// The key of `problem`: its content without what decides no schedule (ids, energies), on the usable cores.
schedule::Problem key_of(const schedule::Problem& problem, const schedule::CoreCounts& usable) {
  schedule::Problem key = problem;
  for (schedule::Task& t : key.tasks) {
    t.id.clear();
    t.single_energy_j = t.parallel_energy_j = 0;
  }
  key.tensor_cores = usable.tensor_cores;
  key.vector_cores = usable.vector_cores;
  return key;
}

/// The figures of a summarised feasible schedule.
PassSummary figures_of(const schedule::Schedule& s) {
  return {true,           s.makespan_s, s.energy_j, s.tensor_utilisation, s.vector_utilisation, s.proven_optimal,
          s.lower_bound_s};
}

/// The summary on `problem` of a kept schedule (kept_of: each task's mode, and a slot from 0 to its duration,
/// which is all that utilisation and energy read).
PassSummary summary_of(const schedule::Problem& problem, schedule::Schedule kept) {
  schedule::summarize(problem, kept);
  return figures_of(kept);
}

/// What a cache entry keeps of a solved schedule: its figures and, per task, its mode and duration.
schedule::Schedule kept_of(const schedule::Schedule& s) {
  schedule::Schedule kept;
  kept.feasible = s.feasible;
  kept.makespan_s = s.makespan_s;
  kept.proven_optimal = s.proven_optimal;
  kept.lower_bound_s = s.lower_bound_s;
  kept.tasks.reserve(s.tasks.size());
  for (const schedule::TaskSlot& slot : s.tasks)
    kept.tasks.push_back({0, slot.finish_s - slot.start_s, slot.parallel, -1, -1});
  return kept;
}

/// solve_pass, with the schedule kept (infeasible when a latency is not finite).
PassSummary solve_pass(const schedule::Problem& problem, schedule::Solver& solver, schedule::Schedule& kept) {
  kept = schedule::Schedule{};
  if (!schedule::has_finite_latencies(problem)) return {};
  const schedule::Schedule s = solver.solve(problem);
  if (!s.feasible) return {};
  kept = kept_of(s);
  return figures_of(s);
}

}  // namespace

uint64_t problem_hash(const schedule::Problem& p) {
  return hash_with_cores(p, {p.tensor_cores, p.vector_cores});
}

bool same_problem(const schedule::Problem& a, const schedule::Problem& b) {
  return a.tensor_cores == b.tensor_cores && a.vector_cores == b.vector_cores && same_content(a, b);
}

PassSummary solve_pass(const schedule::Problem& problem, schedule::Solver& solver) {
  schedule::Schedule kept;
  return solve_pass(problem, solver, kept);
}

PassSummary ScheduleCache::solve(const schedule::Problem& problem, schedule::Solver& solver) {
  // Keyed by the cores the schedules can use: problems that differ only in idle cores share one entry. A
  // lookup compares the asking problem with those counts; only a miss copies it into a key.
  const schedule::CoreCounts usable = schedule::usable_cores(problem);
  const uint64_t h = hash_with_cores(problem, usable);
  std::optional<schedule::Schedule> kept;  // copied under the lock, summarised outside it
  {
    std::lock_guard lock(mutex_);
    if (const Entry* e = find_entry(buckets_, h, usable, problem)) kept = e->schedule;
  }
  if (kept) {
    hits_.fetch_add(1, std::memory_order_relaxed);
    return kept->feasible ? summary_of(problem, std::move(*kept)) : PassSummary{};
  }
  misses_.fetch_add(1, std::memory_order_relaxed);
  Entry entry;
  const PassSummary summary = solve_pass(problem, solver, entry.schedule);
  entry.key = key_of(problem, usable);
  std::lock_guard lock(mutex_);
  store_entry(buckets_, size_, capacity_, h, usable, problem, std::move(entry));
  return summary;
}

double ScheduleCache::root_bound(const schedule::Problem& problem) {
  const schedule::CoreCounts usable = schedule::usable_cores(problem);
  const uint64_t h = hash_with_cores(problem, usable);
  {
    std::lock_guard lock(mutex_);
    if (const BoundEntry* e = find_entry(bounds_, h, usable, problem)) return e->bound_s;
  }
  const double bound = schedule::exact_lower_bound(problem);
  BoundEntry entry{key_of(problem, usable), bound};
  std::lock_guard lock(mutex_);
  store_entry(bounds_, bounds_size_, capacity_, h, usable, problem, std::move(entry));
  return bound;
}

}  // namespace phaze::search
