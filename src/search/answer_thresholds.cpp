#include "search/answer_thresholds.h"

namespace phaze::search {

bool cannot_enter(const AnswerThresholds& t, size_t combination, double area_um2,
                  const std::vector<std::optional<ModelBound>>& bounds) {
  auto below = [](double bound, const std::optional<double>& reached) { return reached && bound < *reached; };
  for (size_t f = 0; f < t.frontiers.size(); ++f) {
    const std::optional<FrontierFigures> best = frontier_bound(bounds, f, area_um2);
    if (best && !t.frontiers[f].rules_out(*best)) return false;
  }
  bool feasible = true;
  double sum = 0;
  for (size_t m = 0; m < bounds.size(); ++m) {
    if (!bounds[m]) {
      feasible = false;
      continue;
    }
    if (!below(bounds[m]->samples_per_s, t.model_best[m])) return false;
    sum += bounds[m]->samples_per_s;
  }
  if (!feasible) return true;  // an infeasible point enters no best list, and its models no model's
  // The score's bound, summed as the score is (evaluate.cpp): rounding keeps the order of the terms.
  const double score = sum / static_cast<double>(bounds.size());
  return below(score, t.combination_best[combination]) && (t.top == 0 || below(score, t.top_last));
}

AnswerThresholdTracker::AnswerThresholdTracker(size_t combinations, size_t models, int64_t top, bool pareto,
                                               int64_t global_batch, Ranking ranking)
    : global_batch_(global_batch) {
  answer_.ranking = ranking;
  answer_.best_per_model.resize(models);
  thresholds_.combination_best.resize(combinations);
  thresholds_.model_best.resize(models);
  thresholds_.top = top;
  if (pareto) thresholds_.frontiers.resize(frontier_count(models));
}

void AnswerThresholdTracker::add(const PointOutcome& point, size_t combination) {
  accumulate(answer_, point, thresholds_.top);
  for (size_t f = 0; f < thresholds_.frontiers.size(); ++f)
    if (const std::optional<FrontierFigures> x = frontier_figures(point, f, global_batch_))
      thresholds_.frontiers[f].add(*x);
  if (point.feasible) {
    std::optional<double>& best = thresholds_.combination_best[combination];
    if (!best || point.score > *best) best = point.score;
  }
  for (size_t m = 0; m < thresholds_.model_best.size(); ++m)
    if (answer_.best_per_model[m]) thresholds_.model_best[m] = answer_.best_per_model[m]->models[m].samples_per_s;
  if (thresholds_.top > 0 && static_cast<int64_t>(answer_.top.size()) == thresholds_.top)
    thresholds_.top_last = answer_.top.back().score;
}

}  // namespace phaze::search
