#pragma once

// Leaving points out of an exact search that lists only its best points: a point whose upper bounds lie
// below what the answer has already reached can be neither the best of its combination, nor of a model, nor
// in the top list, so it need not be evaluated. The thresholds only rise as points are added, so a point
// left out on early thresholds stays out of the final answer, whatever the order the points come in.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "search/answer.h"
#include "search/point.h"

namespace phaze::search {

/// What the points added so far have reached: any point of the answer's best lists is at least as good.
struct AnswerThresholds {
  std::vector<std::optional<double>> combination_best;  ///< per combination, its best score (samples/s)
  std::vector<std::optional<double>> model_best;        ///< per model, its best samples/s
  int64_t top = 0;                                      ///< designs in the top list
  std::optional<double> top_last;                       ///< the score of the last of a full top list
};

/// Whether a point of `combination` cannot enter an answer that has reached `t`, when each model's samples/s
/// there is at most `bounds[m]` (nothing: the model has no plan there). Strictly below every threshold that
/// concerns it: a tie could still win on canonical order.
bool cannot_enter(const AnswerThresholds& t, size_t combination, const std::vector<std::optional<double>>& bounds);

/// The thresholds of the evaluated points, kept up to date as they are added.
class AnswerThresholdTracker {
 public:
  AnswerThresholdTracker(size_t combinations, size_t models, int64_t top);
  /// Adds an evaluated point of `combination`.
  void add(const PointOutcome& point, size_t combination);
  const AnswerThresholds& now() const { return thresholds_; }

 private:
  SearchAnswer answer_;  ///< the top list and the per-model bests of the points added
  AnswerThresholds thresholds_;
};

}  // namespace phaze::search
