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
#include "search/model_bound.h"
#include "search/pareto.h"
#include "search/point.h"

namespace phaze::search {

/// What the points added so far have reached: any point of the answer's best lists is at least as good.
struct AnswerThresholds {
  std::vector<std::optional<double>> combination_best;  ///< per combination, its best score (samples/s)
  std::vector<std::optional<double>> model_best;        ///< per model, its best samples/s
  int64_t top = 0;                                      ///< designs in the top list
  std::optional<double> top_last;                       ///< the score of the last of a full top list
  /// With the Pareto frontier asked for (pareto.h): per frontier, the non-dominated figures reached. Empty:
  /// not asked for.
  std::vector<FrontierSet> frontiers;
};

/// Whether a point of `combination` with `area_um2` of chip cannot enter an answer that has reached `t`, given
/// its models' bounds (nothing: the model has no plan there). Strictly below every threshold that concerns
/// it, as a tie could still win on canonical order; and on every frontier asked for, beaten by a point reached.
bool cannot_enter(const AnswerThresholds& t, size_t combination, double area_um2,
                  const std::vector<std::optional<ModelBound>>& bounds);

/// The thresholds of the evaluated points, kept up to date as they are added.
class AnswerThresholdTracker {
 public:
  /// With `pareto`, the frontiers of a question whose global batch is `global_batch` samples too.
  /// `ranking`: the question's, so that the top list's last entry is the answer's.
  AnswerThresholdTracker(size_t combinations, size_t models, int64_t top, bool pareto = false, int64_t global_batch = 1,
                         Ranking ranking = Ranking::Canonical);
  /// Adds an evaluated point of `combination`.
  void add(const PointOutcome& point, size_t combination);
  const AnswerThresholds& now() const { return thresholds_; }

 private:
  SearchAnswer answer_;  ///< the top list and the per-model bests of the points added
  AnswerThresholds thresholds_;
  int64_t global_batch_ = 1;
};

}  // namespace phaze::search
