#pragma once

// What the answer keeps of every point it lists in full (the CSV of every point): the point's identity, its
// score and per model the plan's shape and figures, about a tenth of the memory of its PointOutcome. An
// exhaustive sweep holds hundreds of thousands of them.

#include <cstdint>
#include <vector>

#include "search/design_point.h"
#include "search/point.h"

namespace phaze::search {

/// One model's plan at a point, as the CSV of every point gives it.
struct ModelRow {
  bool feasible = false;
  int64_t width = 0;  ///< t
  int64_t stages = 0;
  int64_t data_parallel = 0;
  double time_per_batch_s = 0;
  double samples_per_s = 0;
  double energy_per_batch_j = 0;
  bool operator==(const ModelRow&) const = default;
};

struct PointRow {
  DesignValues design{};  ///< chip and HBM size
  double area_um2 = 0;
  int64_t micro_batch = 0;
  bool recompute = false;
  bool feasible = false;
  double score = 0;  ///< as PointOutcome::score
  std::vector<ModelRow> models;
  bool operator==(const PointRow&) const = default;
};

PointRow row_of(const PointOutcome& point);

/// A point with the row's identity (its key included), feasibility, score and per model its feasibility,
/// throughput and energy per batch, and nothing else: what the answer's order (better, better_for_model) and its top
/// list read.
PointOutcome outline_of(const PointRow& row);

/// Canonical order (as `before` of their points).
bool before(const PointRow& a, const PointRow& b);

}  // namespace phaze::search
