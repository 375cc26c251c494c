#pragma once

// A layer's scheduling problem as the exact solver's search and its segment dynamic program read it:
// the operators (layout tasks left out) in topological order, with their variants and their relations
// through layout tasks as bit masks. Internal to the exact solver.

#include <cstdint>
#include <vector>

#include "schedule/problem.h"

namespace phaze::schedule::detail {

/// Cores a single-core run holds: none, a tensor core, a vector core, or both (a pair).
enum Use : uint8_t { kNone = 0, kTc = 1, kVc = 2 };

struct Prepared {
  std::vector<int> task;                          // search index → problem index
  std::vector<uint8_t> use;                       // cores used by a single-core run
  std::vector<char> comm;                         // on the link
  std::vector<char> can_parallel;                 // compute tasks whose parallel run is faster
  std::vector<double> single, parallel, fastest;  // seconds; parallel is infinite where it cannot run so
  std::vector<std::vector<int>> preds;            // effective predecessors (through layout tasks)
  std::vector<double> after;  // longest chain of fastest variants after the task (its successors on), seconds
  std::vector<double> tail;   // the same from the task on: fastest + after
  std::vector<uint64_t> pred_mask;
  std::vector<uint64_t> successor_mask;  // direct (effective) successors
  std::vector<char> feeds_comm;          // a collective waits for the task
  std::vector<uint64_t> ancestors;       // every task that must finish before the task starts
  std::vector<uint64_t> descendants;     // every task that starts after the task finishes
  std::vector<int> link_tasks;           // collectives on the link
  /// Per task s, the tasks t < s that s may follow only (see prepare()): the same variants on the same
  /// cores, ancestors(t) ⊆ ancestors(s) and descendants(s) ⊆ descendants(t).
  std::vector<uint64_t> earlier_twins;
};

/// Throws std::length_error for more than 64 operators.
Prepared prepare(const Problem& p);

}  // namespace phaze::schedule::detail
