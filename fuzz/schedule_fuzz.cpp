// A layer-scheduling question (phaze schedule FILE): parse and validate; when it is small, solve it with
// the exact branch and bound and with list scheduling, check both schedules, and check that the proven
// optimum is no longer than the heuristic's and no shorter than the lower bound.
#include <cmath>
#include <cstdlib>
#include <memory>

#include "fuzz_input.h"
#include "io/schedule_json.h"
#include "schedule/problem.h"
#include "util/input_error.h"

namespace {

constexpr size_t kMaxSolvedTasks = 10;  // the exact search stays within milliseconds
constexpr int64_t kNodeBudget = 200000;

double tolerance(const phaze::schedule::Problem& p) {
  double scale = 0;
  for (const phaze::schedule::Task& t : p.tasks) scale += std::max(t.single_s, t.parallel_s);
  return 1e-9 * scale;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace phaze;
  try {
    const schedule::Problem problem = io::parse_schedule_input(fuzz::as_text(data, size), "question.json");
    (void)io::schedule_input_json(problem).dump();
    if (problem.tasks.size() > kMaxSolvedTasks || !schedule::has_finite_latencies(problem)) return 0;
    if (!schedule::validate(problem).empty()) std::abort();  // the reader let an invalid question through
    const double tol = tolerance(problem);
    schedule::Schedule exact = schedule::make_exact_solver(kNodeBudget)->solve(problem);
    schedule::Schedule list = schedule::make_list_solver()->solve(problem);
    if (!exact.feasible || !list.feasible) std::abort();
    if (!schedule::check_schedule(problem, exact, tol).empty()) std::abort();
    if (!schedule::check_schedule(problem, list, tol).empty()) std::abort();
    if (exact.makespan_s > list.makespan_s + tol) std::abort();
    if (exact.proven_optimal && exact.lower_bound_s > exact.makespan_s + tol) std::abort();
    if (schedule::exact_lower_bound(problem) > exact.makespan_s + tol) std::abort();
    schedule::summarize(problem, exact);
    (void)io::schedule_output_json(problem, exact, "exact").dump();
  } catch (const InputError&) {
  }
  return 0;
}
