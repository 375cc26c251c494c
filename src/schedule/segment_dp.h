#pragma once

// Exact scheduling by dynamic programming over the ideals of the operator DAG, for layers where every
// intra-operator-parallel run excludes all other work and nothing runs on the link (no collectives, or
// collectives as vector operators). Internal to the exact solver; see segment_dp.cpp.

#include <cstdint>
#include <functional>
#include <optional>

#include "schedule/prepared.h"
#include "schedule/problem.h"

namespace phaze::schedule::detail {

/// The shortest single-core schedule of a set of tasks, if one is shorter than a cutoff.
struct SegmentSchedule {
  bool proven = false;  ///< the search finished: `found` and the schedule are exact
  bool found = false;   ///< a schedule shorter than the cutoff exists (then it is the shortest)
  Schedule schedule;    ///< when found: the tasks' slots from time 0, cores included
};

/// Solves a problem whose tasks may only run single-core, looking only for makespans below `cutoff_s`.
using SegmentSolver = std::function<SegmentSchedule(const Problem& segment, double cutoff_s)>;

/// Whether solve_by_segments can be exact for this problem: the default exclusivity rule (a parallel
/// operator runs alone) and no operator on the link.
bool segments_apply(const Problem& problem);

/// The minimum makespan schedule, with its slots set for every task except layout tasks (left at zero),
/// or nothing when the problem does not qualify (segments_apply), its DAG has too many ideals, or a
/// segment's single-core schedule could not be proven within the solver's budget. `prepared` is
/// prepare(problem).
std::optional<Schedule> solve_by_segments(const Problem& problem, const Prepared& prepared,
                                          const SegmentSolver& solve_segment);

/// The exact solver without the dynamic program: its branch and bound alone (exact_solver.cpp), for tests
/// that compare the two.
Schedule solve_by_search(const Problem& problem, int64_t node_budget);

}  // namespace phaze::schedule::detail
