#pragma once

// Internals of the MILP solver (layer-schedule.md 3-4), exposed for tests and diagnostics. The public entry
// point is make_milp_solver() in schedule/problem.h.

#include <cstdint>
#include <vector>

#include "schedule/problem.h"

namespace phaze::schedule::detail {

struct MilpOptions {
  /// Wall-clock limit of the whole solve (all CBC solves together), seconds; 0 = none (then every solve has
  /// gap 0). When it stops CBC, the best schedule found comes back unproven.
  double time_limit_s = 0;
  /// Adds the valid inequalities (makespan and start-time bounds, core symmetry breaking) to the rows of
  /// section 3; off gives the documented model alone.
  bool valid_inequalities = true;
  /// Also solves each phase's LP relaxation (MilpPhase::root_bound_s); for tests and diagnostics.
  bool root_bound = false;
};

/// One CBC solve of the two-phase scheme (layer-schedule.md 4) and the replay of its solution.
struct MilpPhase {
  bool tensor_constraints = false;  ///< TC core-assignment constraints (S9-S11) were in this solve
  bool vector_constraints = false;  ///< VC core-assignment constraints were in this solve
  double objective_s = 0;           ///< T of the MILP solution, seconds
  double replay_makespan_s = 0;     ///< makespan of the replay by x order, seconds
  int64_t tensor_peak = 0;          ///< most tensor cores busy at once in the replay
  int64_t vector_peak = 0;          ///< most vector cores busy at once in the replay
  bool proven_optimal = false;      ///< CBC proved optimality (gap 0)
  int columns = 0;
  int rows = 0;
  double seconds = 0;       ///< wall time of the CBC solve
  double root_bound_s = 0;  ///< optimum of the LP relaxation, seconds (only with MilpOptions::root_bound)
};

struct MilpReport {
  std::vector<MilpPhase> phases;  ///< phase 1 first, then at most two re-solves
  bool cores_from_z = false;      ///< core indices were read from z (both core types enabled)
  bool pairing_failed = false;    ///< the greedy assignment could not pair a fused task (section 4 step 5)
};

/// Solves `problem` by the two-phase MILP scheme. Throws std::invalid_argument for a malformed problem
/// (see validate()) and InputError when its usable latencies span more than CBC can resolve (naming the
/// shortest operator); a non-finite or negative latency gives feasible = false.
Schedule solve_milp(const Problem& problem, const MilpOptions& options = {}, MilpReport* report = nullptr);

}  // namespace phaze::schedule::detail
