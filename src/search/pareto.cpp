#include "search/pareto.h"

#include <algorithm>

namespace phaze::search {

bool dominates(const FrontierFigures& a, const FrontierFigures& b) {
  const bool no_worse =
      a.samples_per_s >= b.samples_per_s && a.area_um2 <= b.area_um2 && a.energy_per_sample_j <= b.energy_per_sample_j;
  return no_worse && !(a == b);
}

size_t frontier_count(size_t models) {
  return models > 1 ? models + 1 : models;
}

namespace {

/// The figures of frontier `f` of a point whose models give `feasible`, `samples_per_s` and
/// `energy_per_sample_j` (by index) and whose score is `score`.
template <typename Feasible, typename Samples, typename Energy>
std::optional<FrontierFigures> figures_of(size_t models, size_t f, double area_um2, double score, Feasible feasible,
                                          Samples samples, Energy energy) {
  if (f < models) {
    if (!feasible(f)) return std::nullopt;
    return FrontierFigures{samples(f), area_um2, energy(f)};
  }
  // The averages, summed in model order as the score is (score_point).
  double energy_sum = 0;
  for (size_t m = 0; m < models; ++m) {
    if (!feasible(m)) return std::nullopt;
    energy_sum += energy(m);
  }
  return FrontierFigures{score, area_um2, energy_sum / static_cast<double>(models)};
}

}  // namespace

std::optional<FrontierFigures> frontier_figures(const PointOutcome& p, size_t f, int64_t global_batch) {
  const double batch = static_cast<double>(global_batch);
  return figures_of(
      p.models.size(), f, p.area_um2, p.score, [&](size_t m) { return p.models[m].feasible; },
      [&](size_t m) { return p.models[m].samples_per_s; },
      [&](size_t m) { return p.models[m].energy_per_batch_j / batch; });
}

std::optional<FrontierFigures> frontier_figures(const PointRow& r, size_t f, int64_t global_batch) {
  const double batch = static_cast<double>(global_batch);
  return figures_of(
      r.models.size(), f, r.area_um2, r.score, [&](size_t m) { return r.models[m].feasible; },
      [&](size_t m) { return r.models[m].samples_per_s; },
      [&](size_t m) { return r.models[m].energy_per_batch_j / batch; });
}

std::optional<FrontierFigures> frontier_bound(const std::vector<std::optional<ModelBound>>& bounds, size_t f,
                                              double area_um2) {
  const size_t models = bounds.size();
  if (f < models) {
    if (!bounds[f]) return std::nullopt;
    return FrontierFigures{bounds[f]->samples_per_s, area_um2, bounds[f]->energy_per_sample_j};
  }
  // The averages of the bounds, summed in model order as the point's are: rounding is monotone in each term.
  double samples = 0, energy = 0;
  for (const std::optional<ModelBound>& b : bounds) {
    if (!b) return std::nullopt;
    samples += b->samples_per_s;
    energy += b->energy_per_sample_j;
  }
  const double n = static_cast<double>(models);
  return FrontierFigures{samples / n, area_um2, energy / n};
}

void FrontierSet::add(const FrontierFigures& x) {
  for (const FrontierFigures& k : kept_)
    if (k == x || dominates(k, x)) return;
  std::erase_if(kept_, [&](const FrontierFigures& k) { return dominates(x, k); });
  kept_.push_back(x);
}

bool FrontierSet::rules_out(const FrontierFigures& best) const {
  return std::any_of(kept_.begin(), kept_.end(), [&](const FrontierFigures& k) {
    return k.samples_per_s > best.samples_per_s && k.area_um2 <= best.area_um2 &&
           k.energy_per_sample_j <= best.energy_per_sample_j;
  });
}

std::vector<ParetoFrontier> pareto_frontiers(const std::vector<PointRow>& rows, size_t models, int64_t global_batch) {
  std::vector<ParetoFrontier> out;
  for (size_t f = 0; f < frontier_count(models); ++f) {
    ParetoFrontier& frontier = out.emplace_back();
    if (f < models) frontier.model = f;
    std::vector<std::pair<FrontierFigures, const PointRow*>> candidates;
    for (const PointRow& r : rows)
      if (const std::optional<FrontierFigures> x = frontier_figures(r, f, global_batch))
        candidates.emplace_back(*x, &r);
    // Most samples/s first, then least area, then least energy: a point's dominators all come before it, and
    // one dominated by a point left out is dominated by a point kept (dominance is transitive).
    std::sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) {
      if (a.first.samples_per_s != b.first.samples_per_s) return a.first.samples_per_s > b.first.samples_per_s;
      if (a.first.area_um2 != b.first.area_um2) return a.first.area_um2 < b.first.area_um2;
      if (a.first.energy_per_sample_j != b.first.energy_per_sample_j)
        return a.first.energy_per_sample_j < b.first.energy_per_sample_j;
      return before(*a.second, *b.second);
    });
    for (const auto& candidate : candidates) {
      const FrontierFigures& x = candidate.first;
      const bool beaten = std::any_of(frontier.points.begin(), frontier.points.end(),
                                      [&](const FrontierPoint& k) { return dominates(k.figures, x); });
      if (!beaten) frontier.points.push_back({*candidate.second, x, false});
    }
    for (FrontierPoint& p : frontier.points)
      p.area_frontier = std::none_of(frontier.points.begin(), frontier.points.end(), [&](const FrontierPoint& q) {
        return q.figures.samples_per_s >= p.figures.samples_per_s && q.figures.area_um2 <= p.figures.area_um2 &&
               (q.figures.samples_per_s > p.figures.samples_per_s || q.figures.area_um2 < p.figures.area_um2);
      });
    std::stable_sort(frontier.points.begin(), frontier.points.end(),
                     [](const FrontierPoint& a, const FrontierPoint& b) {
                       if (a.figures.area_um2 != b.figures.area_um2) return a.figures.area_um2 < b.figures.area_um2;
                       return before(a.row, b.row);
                     });
  }
  return out;
}

}  // namespace phaze::search
