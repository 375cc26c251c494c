#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace phaze::schedule {

/// What an operator occupies (layer-schedule.md 1): a tensor core, a vector core, a tensor core with its
/// paired vector core (fused GEMM + epilogue), the chip's link (a collective), or nothing (layout).
enum class TaskKind { Tensor, Vector, Fused, Comm, None };

/// One operator of the layer: its single-core and all-cores (intra-operator parallel) latency and energy.
struct Task {
  std::string id;
  TaskKind kind = TaskKind::None;
  double single_s = 0;    ///< ℓ, seconds on one core of its kind
  double parallel_s = 0;  ///< ℓ', seconds on all cores of its kind (ignored for Comm and None)
  double single_energy_j = 0;
  double parallel_energy_j = 0;
};

/// Most tasks in one problem: the exact solver keeps sets of tasks as 64-bit masks. The layers of every model
/// have far fewer (a transformer layer's backward pass has about 30).
inline constexpr int kMaxTasks = 64;

/// A layer's scheduling problem: a DAG of tasks on n_TC tensor and n_VC vector cores; tensor core c and
/// vector core c form pair c for c < min(n_TC, n_VC).
struct Problem {
  int64_t tensor_cores = 1;
  int64_t vector_cores = 1;
  std::vector<Task> tasks;
  std::vector<std::pair<int, int>> edges;  ///< (from, to) task indices: `to` waits for `from`
  /// Compatibility with the original: collectives are vector-core operators (blocked by parallel ones).
  bool comm_as_vector = false;
  /// Variant of constraint S7: a parallel operator excludes only operators sharing a core type with it.
  bool overlap_across_types = false;

  int64_t pairs() const { return tensor_cores < vector_cores ? tensor_cores : vector_cores; }
};

/// Where and when one task runs. Cores are -1 when unused or when the task runs on all of them.
struct TaskSlot {
  double start_s = 0;
  double finish_s = 0;
  bool parallel = false;
  int64_t tensor_core = -1;
  int64_t vector_core = -1;
};

struct Schedule {
  bool feasible = false;  ///< false only when a latency is not finite
  double makespan_s = 0;
  std::vector<TaskSlot> tasks;  ///< one per task, in the problem's order
  double energy_j = 0;
  double tensor_utilisation = 0;  ///< busy tensor-core time / (n_TC · makespan)
  double vector_utilisation = 0;
  double tensor_peak = 0;  ///< most tensor cores busy at once / n_TC
  double vector_peak = 0;
  bool proven_optimal = false;
  /// A proven lower bound on the optimal makespan, seconds: the makespan when proven optimal, the exact
  /// solver's root bound otherwise; 0 when the solver gives none.
  double lower_bound_s = 0;
};

/// A scheduler: the exact branch and bound, the MILP of layer-schedule.md on CBC, or list scheduling.
class Solver {
 public:
  virtual ~Solver() = default;
  virtual Schedule solve(const Problem& problem) = 0;
  virtual std::string_view name() const = 0;
};

/// "tensor", "vector", "fused", "comm" or "none".
const char* to_string(TaskKind kind);

/// "exact", "ilp" or "list"; nullptr for another name.
std::unique_ptr<Solver> make_solver(std::string_view name);
std::unique_ptr<Solver> make_exact_solver();
/// The exact solver with its own budget of search nodes (at least 1): beyond it, the best schedule found is
/// returned unproven, with the root lower bound. The default budget takes a few seconds at most.
std::unique_ptr<Solver> make_exact_solver(int64_t node_budget);
/// The MILP solver without a time limit, or with one over all its CBC solves (seconds, > 0): when it is
/// reached, the best schedule found comes back unproven. Its solve() throws InputError for latencies too
/// far apart for CBC (see detail::solve_milp).
std::unique_ptr<Solver> make_milp_solver();
std::unique_ptr<Solver> make_milp_solver(double time_limit_s);
std::unique_ptr<Solver> make_list_solver();

/// The exact solver's lower bound on the optimal makespan before any search (its bounds at the empty
/// schedule), seconds; 0 for a problem that fails validate(). For tests and reports.
double exact_lower_bound(const Problem& problem);

/// Whether the exact solver shows, within `node_budget` search nodes, that no schedule of `problem` is shorter
/// than `target_s` seconds: its optimal makespan is then at least target_s · (1 − 1e-12) (the solver's
/// rounding slack). False when it finds a shorter schedule, when the budget runs out, or for a problem that
/// fails validate(). A target a few percent below the optimum is shown far sooner than the optimum is proven:
/// a caller that needs only to know that a layer is no faster than some figure asks this first.
bool exact_proves_at_least(const Problem& problem, double target_s, int64_t node_budget);

/// Whether every operator has a finite estimate in both variants; otherwise the layer is infeasible on
/// the design (layer-schedule.md 5).
bool has_finite_latencies(const Problem& problem);

/// Checks a problem: indices in range, no self-loop or duplicate edge, acyclic, latencies finite and not
/// negative. Returns "" or the reason (naming the task).
std::string validate(const Problem& problem);

/// An independent feasibility check of a schedule (precedence, durations, core capacity and indices,
/// pairing of fused single-core tasks, exclusivity of parallel tasks, one collective at a time on the
/// link, makespan). Returns "" or the first violation found.
std::string check_schedule(const Problem& problem, const Schedule& schedule, double tolerance_s = 1e-12);

/// Fills energy, utilisation and peaks of a schedule whose slots are set (layer-schedule.md 5).
void summarize(const Problem& problem, Schedule& schedule);

/// The least energy any schedule of `problem` can have, joules: each operator in its cheaper mode (a
/// collective and a single-core-only kind in their one mode), summed as summarize sums a schedule's, so that
/// it is at most the energy summarize gives any schedule of the problem.
double least_energy_j(const Problem& problem);

/// Gives cores to the tasks of a schedule whose times and modes are set, by the greedy interval rule of
/// layer-schedule.md 5; false when the greedy rule cannot pair every fused single-core task.
bool assign_cores(const Problem& problem, Schedule& schedule);

}  // namespace phaze::schedule
