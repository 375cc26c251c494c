#pragma once

// Plans of PHAZE's planner kept by what decides them: the layer graph (model, micro-batch, width), the
// makespans of its distinct layers' passes, and the cluster. Designs that differ only where no layer's
// makespan changes (a buffer larger than every tile, vector cores that only change energies) meet the same
// chains at the same points; so do the root-bound chains of the width bounding. A hit returns the plan the
// planner would compute, bit for bit.

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "model/layer_graph.h"
#include "placement/chain.h"
#include "placement/corrected_planner.h"
#include "search/layer_scheduling.h"

namespace phaze::search {

/// One thread's cache of placement::CorrectedPlanner plans (not thread-safe), for the layer graphs of one
/// workload (a graph is known by its address). It holds at most `capacity` plans and forgets all of them
/// when full, which bounds its memory without changing any answer.
class PlanCache {
 public:
  explicit PlanCache(size_t capacity = 16384) : capacity_(capacity) {}

  /// The planner's plan of `chain` (make_chain(graph, schedules)) on `cluster`, computed by `planner` when
  /// not cached.
  placement::Plan solve(const model::LayerGraph& graph, const LayerSchedules& schedules, const placement::Chain& chain,
                        const placement::Cluster& cluster, placement::CorrectedPlanner& planner);

  int64_t hits() const { return hits_; }
  int64_t misses() const { return misses_; }

 private:
  struct Entry {
    std::vector<uint64_t> key;
    placement::Plan plan;
  };
  size_t capacity_;
  size_t size_ = 0;
  std::unordered_map<uint64_t, std::vector<Entry>> buckets_;
  std::vector<uint64_t> key_;  ///< work space: the key of the call
  int64_t hits_ = 0, misses_ = 0;
};

}  // namespace phaze::search
