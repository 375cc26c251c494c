#pragma once

// A point's score as the stop rule sees it, by point key: what the walk over the designs records, what the
// point store gives back and what the answer replays the stop rule over.

#include <optional>
#include <string>
#include <unordered_map>

#include "hw/enumerate.h"
#include "search/buckets.h"
#include "search/design_point.h"

namespace phaze::search {

/// Scores by point key.
using ScoreMap = std::unordered_map<std::string, std::optional<double>>;

/// A point's score as the stop rule sees it: nothing when it is infeasible.
inline std::optional<double> rule_score(bool feasible, double score) {
  return feasible ? std::optional<double>(score) : std::nullopt;
}

/// The key of the point of `design` for combination `c`.
inline std::string point_key_for(const hw::Design& design, const Combination& c) {
  hw::Architecture a = design.arch;
  a.hbm_bytes = c.hbm_bytes;
  return point_key(a, c.micro_batch, c.recompute);
}

}  // namespace phaze::search
