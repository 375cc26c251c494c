#include "search/schedule_cache.h"

#include <bit>

namespace phaze::search {

namespace {

uint64_t mix(uint64_t h, uint64_t v) {
  // splitmix64 finaliser over the running value: cheap and well spread for bit patterns of doubles.
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  return h ^ (h >> 31);
}

uint64_t bits(double x) {
  return std::bit_cast<uint64_t>(x);
}

bool same_task(const schedule::Task& a, const schedule::Task& b) {
  return a.kind == b.kind && bits(a.single_s) == bits(b.single_s) && bits(a.parallel_s) == bits(b.parallel_s) &&
         bits(a.single_energy_j) == bits(b.single_energy_j) && bits(a.parallel_energy_j) == bits(b.parallel_energy_j);
}

}  // namespace

uint64_t problem_hash(const schedule::Problem& p) {
  uint64_t h = mix(0, static_cast<uint64_t>(p.tensor_cores));
  h = mix(h, static_cast<uint64_t>(p.vector_cores));
  h = mix(h, (p.comm_as_vector ? 1u : 0u) | (p.overlap_across_types ? 2u : 0u));
  h = mix(h, p.tasks.size());
  for (const schedule::Task& t : p.tasks) {
    h = mix(h, static_cast<uint64_t>(t.kind));
    h = mix(h, bits(t.single_s));
    h = mix(h, bits(t.parallel_s));
    h = mix(h, bits(t.single_energy_j));
    h = mix(h, bits(t.parallel_energy_j));
  }
  for (const auto& [from, to] : p.edges) h = mix(h, (static_cast<uint64_t>(from) << 32) | static_cast<uint32_t>(to));
  return h;
}

bool same_problem(const schedule::Problem& a, const schedule::Problem& b) {
  if (a.tensor_cores != b.tensor_cores || a.vector_cores != b.vector_cores || a.comm_as_vector != b.comm_as_vector ||
      a.overlap_across_types != b.overlap_across_types || a.tasks.size() != b.tasks.size() || a.edges != b.edges)
    return false;
  for (size_t i = 0; i < a.tasks.size(); ++i)
    if (!same_task(a.tasks[i], b.tasks[i])) return false;
  return true;
}

PassSummary solve_pass(const schedule::Problem& problem, schedule::Solver& solver) {
  PassSummary out;
  if (!schedule::has_finite_latencies(problem)) return out;
  const schedule::Schedule s = solver.solve(problem);
  if (!s.feasible) return out;
  out.feasible = true;
  out.makespan_s = s.makespan_s;
  out.energy_j = s.energy_j;
  out.tensor_utilisation = s.tensor_utilisation;
  out.vector_utilisation = s.vector_utilisation;
  out.proven_optimal = s.proven_optimal;
  out.lower_bound_s = s.lower_bound_s;
  return out;
}

PassSummary ScheduleCache::solve(const schedule::Problem& problem, schedule::Solver& solver) {
  const uint64_t h = problem_hash(problem);
  {
    std::lock_guard lock(mutex_);
    const auto it = buckets_.find(h);
    if (it != buckets_.end())
      for (const auto& [stored, summary] : it->second)
        if (same_problem(stored, problem)) {
          hits_.fetch_add(1, std::memory_order_relaxed);
          return summary;
        }
  }
  misses_.fetch_add(1, std::memory_order_relaxed);
  const PassSummary summary = solve_pass(problem, solver);
  schedule::Problem key = problem;
  for (schedule::Task& t : key.tasks) t.id.clear();  // ids are not part of the content
  std::lock_guard lock(mutex_);
  if (size_ >= capacity_) {
    buckets_.clear();
    size_ = 0;
  }
  auto& bucket = buckets_[h];
  for (const auto& entry : bucket)
    if (same_problem(entry.first, key)) return summary;
  bucket.emplace_back(std::move(key), summary);
  ++size_;
  return summary;
}

}  // namespace phaze::search
