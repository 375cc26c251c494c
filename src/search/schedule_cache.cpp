#include "search/schedule_cache.h"

#include <bit>

#include "util/hash_mix.h"

namespace phaze::search {

namespace {

uint64_t bits(double x) {
  return std::bit_cast<uint64_t>(x);
}

bool same_task(const schedule::Task& a, const schedule::Task& b) {
  return a.kind == b.kind && bits(a.single_s) == bits(b.single_s) && bits(a.parallel_s) == bits(b.parallel_s);
}

/// The energy of a schedule that ran the tasks marked in `all_cores` on all cores of their kind: layout
/// tasks cost nothing, the others their single- or all-cores energy, summed in task order (as a solve's
/// summary sums them).
double energy_of(const schedule::Problem& problem, const std::vector<char>& all_cores) {
  double energy = 0;
  for (size_t i = 0; i < problem.tasks.size() && i < all_cores.size(); ++i) {
    const schedule::Task& t = problem.tasks[i];
    if (t.kind == schedule::TaskKind::None) continue;
    energy += all_cores[i] ? t.parallel_energy_j : t.single_energy_j;
  }
  return energy;
}

/// solve_pass, with which tasks were charged their all-cores energy.
PassSummary solve_pass(const schedule::Problem& problem, schedule::Solver& solver, std::vector<char>& all_cores) {
  PassSummary out;
  all_cores.clear();
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
  for (size_t i = 0; i < problem.tasks.size() && i < s.tasks.size(); ++i) {
    const schedule::TaskKind kind = problem.tasks[i].kind;
    const bool compute = kind != schedule::TaskKind::Comm && kind != schedule::TaskKind::None;
    all_cores.push_back(s.tasks[i].parallel && compute ? 1 : 0);
  }
  return out;
}

}  // namespace

uint64_t problem_hash(const schedule::Problem& p) {
  uint64_t h = hash_mix(0, static_cast<uint64_t>(p.tensor_cores));
  h = hash_mix(h, static_cast<uint64_t>(p.vector_cores));
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

bool same_problem(const schedule::Problem& a, const schedule::Problem& b) {
  if (a.tensor_cores != b.tensor_cores || a.vector_cores != b.vector_cores || a.comm_as_vector != b.comm_as_vector ||
      a.overlap_across_types != b.overlap_across_types || a.tasks.size() != b.tasks.size() || a.edges != b.edges)
    return false;
  for (size_t i = 0; i < a.tasks.size(); ++i)
    if (!same_task(a.tasks[i], b.tasks[i])) return false;
  return true;
}

PassSummary solve_pass(const schedule::Problem& problem, schedule::Solver& solver) {
  std::vector<char> all_cores;
  return solve_pass(problem, solver, all_cores);
}

PassSummary ScheduleCache::solve(const schedule::Problem& problem, schedule::Solver& solver) {
  const uint64_t h = problem_hash(problem);
  {
    std::lock_guard lock(mutex_);
    const auto it = buckets_.find(h);
    if (it != buckets_.end())
      for (const Entry& e : it->second)
        if (same_problem(e.key, problem)) {
          hits_.fetch_add(1, std::memory_order_relaxed);
          PassSummary summary = e.summary;
          if (summary.feasible) summary.energy_j = energy_of(problem, e.all_cores);
          return summary;
        }
  }
  misses_.fetch_add(1, std::memory_order_relaxed);
  Entry entry;
  entry.summary = solve_pass(problem, solver, entry.all_cores);
  const PassSummary summary = entry.summary;
  entry.key = problem;
  for (schedule::Task& t : entry.key.tasks) {  // what does not decide the schedule is not kept
    t.id.clear();
    t.single_energy_j = t.parallel_energy_j = 0;
  }
  std::lock_guard lock(mutex_);
  if (size_ >= capacity_) {
    buckets_.clear();
    size_ = 0;
  }
  auto& bucket = buckets_[h];
  for (const Entry& e : bucket)
    if (same_problem(e.key, entry.key)) return summary;
  bucket.push_back(std::move(entry));
  ++size_;
  return summary;
}

}  // namespace phaze::search
