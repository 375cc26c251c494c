#pragma once

// The Pareto frontier of the search (docs/search.md, "Pareto frontier"): the points no other point beats at once
// on throughput (more is better), chip area and energy per sample (less is better), one frontier per model and
// one of the averages when there are several models. The exact search need not evaluate a point its bounds
// show to be beaten by one already evaluated (answer_thresholds.h), so the frontier comes from the points
// evaluated, not from a listing of every point.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "search/model_bound.h"
#include "search/point.h"
#include "search/point_row.h"

namespace phaze::search {

/// A point as a frontier sees it.
struct FrontierFigures {
  double samples_per_s = 0;
  double area_um2 = 0;
  double energy_per_sample_j = 0;  ///< joules per sample: the layer schedules' energy per batch / global batch
  bool operator==(const FrontierFigures&) const = default;
};

/// Whether `a` is at least as good as `b` in every figure and better in one.
bool dominates(const FrontierFigures& a, const FrontierFigures& b);

/// The frontiers of a question with `models` models: one per model, then the averages' when models > 1.
size_t frontier_count(size_t models);

/// A point's figures on frontier `f` (frontier_count's order): nothing where it has none (the model, or for
/// the averages some model, has no plan). The averages are the point's score and the mean over the models of
/// their energy per sample.
std::optional<FrontierFigures> frontier_figures(const PointOutcome& point, size_t f, int64_t global_batch);
std::optional<FrontierFigures> frontier_figures(const PointRow& row, size_t f, int64_t global_batch);

/// The best figures a point of `area_um2` can reach on frontier `f`, given its models' bounds (nothing: the
/// model has no plan there), the averages taken as the point's own are.
std::optional<FrontierFigures> frontier_bound(const std::vector<std::optional<ModelBound>>& bounds, size_t f,
                                              double area_um2);

/// The non-dominated figures among those added; a figure equal to one kept is not kept twice.
class FrontierSet {
 public:
  void add(const FrontierFigures& figures);
  /// Whether a kept figure beats every point whose figures are at best `best`: strictly more samples/s, no
  /// more area, no more energy. Such a point is dominated, whatever its figures below `best`.
  bool rules_out(const FrontierFigures& best) const;
  const std::vector<FrontierFigures>& figures() const { return kept_; }

 private:
  std::vector<FrontierFigures> kept_;
};

/// One point of a frontier.
struct FrontierPoint {
  PointRow row;
  FrontierFigures figures;
  /// Also on the frontier of throughput against area alone: no point has as much throughput with less
  /// area, or more with as little.
  bool area_frontier = false;
};

/// One frontier: its points by area (least first), then in canonical order.
struct ParetoFrontier {
  std::optional<size_t> model;  ///< the model's index; nothing: the averages
  std::vector<FrontierPoint> points;
};

/// The frontiers of `rows` (frontier_count's order).
std::vector<ParetoFrontier> pareto_frontiers(const std::vector<PointRow>& rows, size_t models, int64_t global_batch);

}  // namespace phaze::search
