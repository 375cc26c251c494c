#pragma once

// The search's answer: built from the evaluated points by replaying the stop rule over their scores, then
// taking the points of the designs each combination visited, so that it does not depend on the thread count,
// nor on whether the run was resumed.

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "hw/enumerate.h"
#include "search/baselines.h"
#include "search/buckets.h"
#include "search/pareto.h"
#include "search/point.h"
#include "search/point_row.h"
#include "search/point_scores.h"
#include "search/question.h"

namespace phaze::search {

/// The architecture search of one outer combination (method.md 7) and its best point.
struct CombinationResult {
  Combination combination;
  int64_t buckets_visited = 0;  ///< area buckets visited, those without a feasible design included
  int64_t designs_visited = 0;
  bool stop_fired = false;           ///< the stop rule ended the visit before the last bucket
  std::optional<PointOutcome> best;  ///< nothing when no visited point of it is feasible
};

/// The answer: the best point, the top list, each model's best point, over the explored points (those of the
/// designs each combination visited).
struct SearchAnswer {
  int64_t designs = 0;           ///< designs in the space
  int64_t points = 0;            ///< points in the space (designs × HBM sizes × micro-batches × recomputation)
  int64_t buckets = 0;           ///< area buckets of the space
  int64_t designs_explored = 0;  ///< designs visited by at least one combination
  int64_t points_explored = 0;   ///< the answer's points: per combination the designs it visited, summed
  int64_t feasible_points = 0;   ///< explored points where every model has a plan
  std::vector<CombinationResult> combinations;  ///< in the order of combinations()
  Ranking ranking = Ranking::Canonical;         ///< how points of equal score rank; what the top list lists
  std::optional<PointOutcome> best;             ///< nothing when no point is feasible
  /// The best point of each of the `top` best entries (designs, or chips; Ranking), best first.
  std::vector<PointOutcome> top;
  std::vector<std::optional<PointOutcome>> best_per_model;  ///< per model: the point of its highest throughput
  std::vector<PointRow> all;  ///< with keep_all: every explored point in canonical order, as a row
  /// When asked for (AnswerListing::pareto): the Pareto frontiers of the explored points (pareto.h).
  std::vector<ParetoFrontier> pareto;
  /// Baseline: the TPUv4-like chip (accelerator.md) with its best point over the same HBM sizes, micro-batch
  /// sizes and recomputation settings, whether or not it lies in the searched space; nothing when no point
  /// of it is feasible.
  std::optional<PointOutcome> tpuv4_baseline;
  /// Whether the TPUv4-like chip is one of the searched designs: its points at the question's HBM sizes are
  /// then points of the space, which an exact answer is never slower than.
  bool tpuv4_in_space = false;
  /// The other baselines (baselines.h): the strict 32 GiB TPUv4-like point, the hand-set Megatron-style
  /// plans, the Spotlight-style design.
  Baselines baselines;
};

/// Adds one point to an answer under construction (best, top `top`, per-model bests, counts), ranked by
/// answer.ranking. The top list holds one point per entry (a design, or a chip; Ranking); the result does not
/// depend on the order of calls.
void accumulate(SearchAnswer& answer, const PointOutcome& point, int64_t top);

/// The space an answer is built over: the question, its designs in canonical order, their visiting order and
/// the combinations (micro-batch, HBM size, recomputation).
struct AnswerSpace {
  const SearchQuestion& question;
  const std::vector<hw::Design>& designs;
  const BucketOrder& order;
  const std::vector<Combination>& combinations;
};

/// What an answer lists: `top` designs in the top list; with `keep_all`, every explored point in `all`; with
/// `pareto`, the Pareto frontiers of the explored points.
struct AnswerListing {
  int64_t top = 5;
  bool keep_all = false;
  bool pareto = false;
};

/// The points an answer shows in full, given their outlines (outline_of), in the same order.
using FullPoints = std::function<std::vector<PointOutcome>(const std::vector<PointOutcome>&)>;

/// Builds the answer: replays the stop rule over `score` (every point it needs: position in visiting order,
/// combination), then keeps of `rows` (any order, every point that may belong to the answer) those of the
/// designs each combination visited, and ranks them. The points the answer shows in full (the best, the top
/// list, each model's and each combination's best) come from `full_points`. With `keep_all`, the kept rows
/// are in `all` (the vector of `rows`, filtered in place). The baselines are left empty.
SearchAnswer build_answer(const AnswerSpace& space, const ScoreOf& score, std::vector<PointRow> rows,
                          const FullPoints& full_points, const AnswerListing& listing);

}  // namespace phaze::search
