#pragma once

#include <cstdint>

#include "schedule/problem.h"

namespace phaze::schedule {

/// The cores of each type that schedules of a problem can keep busy at once, as far as they matter to it.
struct CoreCounts {
  int64_t tensor_cores = 1;
  int64_t vector_cores = 1;
};

/// Cores beyond those that any schedule could use at once change nothing: the unpaired cores of a type
/// run only that type's single-core operators, and operators that run at the same instant are pairwise
/// unordered, so at most the largest such set of operators of that type (an antichain of the DAG) are
/// ever busy there. With the pairs kept and that many unpaired cores, every schedule of the problem is
/// a schedule of the smaller one (its intervals on unpaired cores re-coloured onto fewer cores) and back,
/// so both have the same optimum; the smaller one gives the solver tighter bounds and lets problems that
/// differ only in idle cores share one solve. Intra-operator-parallel runs keep their latencies (they are
/// inputs). For a problem whose DAG is not valid (see validate()), its own counts.
CoreCounts usable_cores(const Problem& problem);

}  // namespace phaze::schedule
