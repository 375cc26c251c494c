#include "search/uniform_pricer.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <optional>

#include "placement/time_floor.h"
#include "schedule/layer_problem.h"

namespace phaze::search {

namespace {

/// Whether a plan of `time_s` per batch (infinity: none) at width index `width` beats `best` of width index
/// `best_width`: faster, or as fast with a smaller width (the planner's rule over widths). Applied to a bound
/// of the width's time, whether the width could still beat `best`.
bool could_beat(double time_s, size_t width, const placement::Plan& best, size_t best_width) {
  return time_s < std::numeric_limits<double>::infinity() &&
         (!best.feasible || time_s < best.time_per_batch || (time_s == best.time_per_batch && width < best_width));
}

bool beats(const placement::Plan& plan, size_t width, const placement::Plan& best, size_t best_width) {
  return plan.feasible && could_beat(plan.time_per_batch, width, best, best_width);
}

/// The indices of `clusters`, those with more memory per device first (in their order among equals).
std::vector<size_t> roomiest_first(const std::vector<placement::Cluster>& clusters) {
  std::vector<size_t> order(clusters.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return clusters[a].memory_bytes > clusters[b].memory_bytes; });
  return order;
}

/// Per point of `clusters`: the points that differ from it only in having more memory per device, in index
/// order.
std::vector<std::vector<size_t>> roomier_points(const std::vector<placement::Cluster>& clusters) {
  std::vector<std::vector<size_t>> roomier(clusters.size());
  for (size_t k = 0; k < clusters.size(); ++k)
    for (size_t r = 0; r < clusters.size(); ++r)
      if (clusters[r].memory_bytes > clusters[k].memory_bytes &&
          placement::differ_only_in_memory(clusters[r], clusters[k]))
        roomier[k].push_back(r);
  return roomier;
}

}  // namespace

void UniformPricer::find_fitting(Workload& w) {
  find_chain_fitting(w, [&](const std::vector<placement::Chain>& chains, const placement::Cluster& cluster) {
    return planner_.solve(chains, cluster).feasible;
  });
}

bool UniformPricer::ModelBounds::any_width() const {
  return std::any_of(usable.begin(), usable.end(), [](char u) { return u != 0; });
}

std::optional<size_t> UniformPricer::ModelBounds::least_width(size_t k) const {
  std::optional<size_t> least;
  for (size_t wi = 0; wi < time_s.size(); ++wi)
    if (usable[wi] && time_s[wi][k] < (least ? time_s[*least][k] : std::numeric_limits<double>::infinity())) least = wi;
  return least;
}

// Every width is placed on the root bounds of its layers, which bound its time per batch from below. A
// placement costs a fraction of a millisecond, a width's layer schedules up to seconds, but an exhaustive
// search has millions of points: a point's placement waits until the floor that needs none
// (placement::time_floor_s) could decide something, whether it could win (plan_model) or be left out
// (leave_out_on_bounds). Points with more memory come first: their placements serve the others (refine).
UniformPricer::ModelBounds UniformPricer::bound_model(const std::vector<model::LayerGraph>& graphs,
                                                      const hw::Architecture& design,
                                                      const std::vector<placement::Cluster>& clusters,
                                                      Scheduling& scheduling) {
  const size_t widths = graphs.size(), points = clusters.size();
  ModelBounds out;
  out.problems.resize(widths);
  out.usable.assign(widths, 0);
  out.time_s.assign(widths, std::vector<double>(points, std::numeric_limits<double>::infinity()));
  out.level.assign(widths, std::vector<BoundLevel>(points, BoundLevel::kPlaced));
  out.stages.assign(widths, std::vector<std::vector<placement::Stage>>(points));
  out.stand_ins.resize(widths);
  out.chains.resize(widths);
  out.roomiest_first = roomiest_first(clusters);
  out.roomier = roomier_points(clusters);
  for (size_t wi = 0; wi < widths; ++wi) {
    out.problems[wi] = layer_problems(graphs[wi], design, scheduling.estimator);
    if (!all_finite(out.problems[wi])) continue;
    out.usable[wi] = 1;
    out.stand_ins[wi] = bound_layers(out.problems[wi], *scheduling.cache);
    out.chains[wi] = make_chain(graphs[wi], out.stand_ins[wi]);
    for (const size_t k : out.roomiest_first) {
      out.level[wi][k] = BoundLevel::kFloor;
      out.time_s[wi][k] = placement::time_floor_s(out.chains[wi], clusters[k]);
    }
  }
  return out;
}

bool UniformPricer::width_fits(ModelBounds& bounds, const std::vector<model::LayerGraph>& graphs,
                               const std::vector<placement::Cluster>& clusters, size_t wi, size_t k) {
  const placement::Cluster& c = clusters[k];
  const auto key = std::tuple(&graphs[wi], c.devices, c.memory_bytes, c.micro_batches, c.recompute, c.optimizer);
  {
    std::lock_guard lock(placing_);
    if (const auto found = fits_.find(key); found != fits_.end()) return found->second;
  }
  while (bounds.level[wi][k] != BoundLevel::kPlaced) refine(bounds, graphs, clusters, wi, k);
  const bool fits = bounds.time_s[wi][k] < std::numeric_limits<double>::infinity();
  std::lock_guard lock(placing_);
  fits_.emplace(key, fits);
  return fits;
}

placement::Plan UniformPricer::place(const model::LayerGraph& graph, const LayerSchedules& schedules,
                                     const placement::Chain& chain, const placement::Cluster& cluster) {
  std::lock_guard lock(placing_);
  return plans_.solve(graph, schedules, chain, cluster, planner_);
}

void UniformPricer::refine(ModelBounds& bounds, const std::vector<model::LayerGraph>& graphs,
                           const std::vector<placement::Cluster>& clusters, size_t wi, size_t k) {
  constexpr double kNoPlan = std::numeric_limits<double>::infinity();
  double& time = bounds.time_s[wi][k];
  BoundLevel& level = bounds.level[wi][k];
  if (level == BoundLevel::kFloor) {
    // Every plan that fits here fits at a roomier point and takes as long there: the slowest best plan of the
    // placed roomier points is the tightest bound they give, and the best time here when its plan fits here.
    std::optional<size_t> roomier;
    for (const size_t r : bounds.roomier[k])
      if (bounds.level[wi][r] == BoundLevel::kPlaced &&
          (!roomier || bounds.time_s[wi][r] > bounds.time_s[wi][*roomier]))
        roomier = r;
    if (roomier) {
      const double roomier_s = bounds.time_s[wi][*roomier];
      const std::vector<placement::Stage>& stages = bounds.stages[wi][*roomier];
      if (roomier_s == kNoPlan || placement::stages_fit_memory(bounds.chains[wi], stages, clusters[k])) {
        time = roomier_s;
        level = BoundLevel::kPlaced;
        bounds.stages[wi][k] = stages;
        return;
      }
      time = std::max(time, roomier_s);
      level = BoundLevel::kRoomier;
      return;
    }
  }
  placement::Plan plan = place(graphs[wi], bounds.stand_ins[wi], bounds.chains[wi], clusters[k]);
  time = plan.feasible ? plan.time_per_batch : kNoPlan;
  level = BoundLevel::kPlaced;
  bounds.stages[wi][k] = std::move(plan.stages);
}

UniformPricer::ModelPlans UniformPricer::plan_model(const std::vector<model::LayerGraph>& graphs, ModelBounds& bounds,
                                                    const std::vector<placement::Cluster>& clusters,
                                                    const std::function<bool(size_t)>& needed, Scheduling& scheduling) {
  const size_t widths = graphs.size(), points = clusters.size();
  ModelPlans out;
  out.any_width = bounds.any_width();
  out.schedules.resize(widths);
  out.plans.resize(points);
  out.width_of.assign(points, widths);
  const std::vector<size_t>& order = bounds.roomiest_first;
  // Schedules one width exactly and lets its plans compete for every point where neither its bound nor its
  // plan at a roomier point (no faster than its plan here) already loses to the best plan there.
  std::vector<double> placed_s(points);  // this width's best time at each point placed (infinity: no plan)
  auto solve = [&](size_t wi) {
    const LayerSchedules& s = out.schedules[wi].emplace(solve_layers(bounds.problems[wi], scheduling));
    unproven_ += s.unproven_passes();
    const placement::Chain chain = make_chain(graphs[wi], s);
    std::fill(placed_s.begin(), placed_s.end(), -1.0);  // -1: not placed
    for (const size_t k : order) {
      if (out.plans[k].feasible && bounds.time_s[wi][k] > out.plans[k].time_per_batch) continue;
      // The width's plan at a roomier point is no slower than its plan here (none there: none here).
      bool settled = false;
      for (const size_t r : bounds.roomier[k])
        settled = settled || (placed_s[r] >= 0 && !could_beat(placed_s[r], wi, out.plans[k], out.width_of[k]));
      if (settled) continue;
      placement::Plan plan = place(graphs[wi], s, chain, clusters[k]);
      placed_s[k] = plan.feasible ? plan.time_per_batch : std::numeric_limits<double>::infinity();
      if (beats(plan, wi, out.plans[k], out.width_of[k])) {
        out.plans[k] = std::move(plan);
        out.width_of[k] = wi;
      }
    }
  };

  // A width is scheduled only while it could still beat (or tie with a smaller width) the best plan of some
  // needed point: the plans are those of scheduling every width. Most points need one or two widths.
  // A weak bound that could win is refined first, a level at a time. Points are taken roomiest first, so that
  // their placements serve the others.
  auto could_win = [&](size_t wi, size_t k) {
    if (!bounds.usable[wi] || out.schedules[wi] || !needed(k)) return false;
    auto below_best = [&] { return could_beat(bounds.time_s[wi][k], wi, out.plans[k], out.width_of[k]); };
    if (!below_best()) return false;
    while (bounds.level[wi][k] != BoundLevel::kPlaced) {
      refine(bounds, graphs, clusters, wi, k);
      if (!below_best()) return false;
    }
    return true;
  };
  while (true) {
    // The first point that an unscheduled width could still improve, and its most promising such width.
    std::optional<size_t> next;
    for (size_t i = 0; i < points && !next; ++i)
      for (size_t wi = 0, k = order[i]; wi < widths; ++wi)
        if (could_win(wi, k) && (!next || bounds.time_s[wi][k] < bounds.time_s[*next][k])) next = wi;
    if (!next) break;
    solve(*next);
  }
  return out;
}

void UniformPricer::leave_out_on_bounds(const Workload& workload, MicroBatch& mb, const LeaveOutTest& leave_out,
                                        std::vector<LeftOutPoint>* left_out) {
  const SearchQuestion& q = *workload.question;
  ChainPoints& points = mb.points;
  // A model's energy per sample here is at least its least over the widths with their layers at their least
  // energies; the points of a micro-batch share N, so it is the same for all of them.
  std::vector<double> least_energy(q.models.size(), std::numeric_limits<double>::infinity());
  for (size_t mi = 0; mi < q.models.size(); ++mi) {
    const ModelBounds& b = mb.bounds[mi];
    if (points.clusters[mi].empty()) continue;
    const int64_t micro_batches = points.clusters[mi].front().micro_batches;
    for (size_t wi = 0; wi < b.usable.size(); ++wi)
      if (b.usable[wi])
        least_energy[mi] = std::min(least_energy[mi], uniform_batch_energy_j(workload.graphs[mi][points.index][wi],
                                                                             b.stand_ins[wi], micro_batches, 0) /
                                                          static_cast<double>(q.global_batch));
  }
  std::vector<std::optional<ModelBound>> most(q.models.size());
  for (size_t j = 0; j < points.todo.size(); ++j) {
    // A model's samples/s here is at most the global batch over its least bound. Only the width holding
    // that least bound can change it, so the bounds start at their floors and that width is refined until
    // the test leaves the point out or every model's least bound is placed: the decision of placing every
    // bound at once, for the placements it needs.
    bool feasible = true;
    while (true) {
      std::optional<std::pair<size_t, size_t>> weak;  // a (model, width) whose least bound is not placed yet
      for (size_t mi = 0; mi < q.models.size(); ++mi) {
        const std::optional<size_t> k = points.fitting_index(mi, j);
        const ModelBounds& b = mb.bounds[mi];
        const std::optional<size_t> at = k ? b.least_width(*k) : std::nullopt;
        most[mi] =
            at ? std::optional(ModelBound{static_cast<double>(q.global_batch) / b.time_s[*at][*k], least_energy[mi]})
               : std::nullopt;
        if (at && b.level[*at][*k] != BoundLevel::kPlaced && !weak) weak.emplace(mi, *at);
      }
      // A bound not placed yet may be finite where no plan fits: taking it for a plan only keeps a point that
      // could be left out, and the count of feasible points asks each such model whether a width fits.
      if (leave_out(points.keys[j], most)) {
        points.left_out[j] = 1;
        for (size_t mi = 0; mi < q.models.size() && feasible; ++mi) {
          const std::optional<size_t> k = points.fitting_index(mi, j);
          ModelBounds& b = mb.bounds[mi];
          bool planned = false;
          for (size_t wi = 0; k && b.any_width() && wi < b.time_s.size() && !planned; ++wi)
            planned = b.usable[wi] && b.time_s[wi][*k] < std::numeric_limits<double>::infinity() &&
                      (b.level[wi][*k] == BoundLevel::kPlaced ||
                       width_fits(b, workload.graphs[mi][points.index], points.clusters[mi], wi, *k));
          feasible = planned;
        }
        if (left_out) left_out->push_back({points.keys[j], feasible});
        break;
      }
      if (!weak) break;
      const auto [mi, wi] = *weak;
      refine(mb.bounds[mi], workload.graphs[mi][points.index], points.clusters[mi], wi, *points.fitting_index(mi, j));
    }
  }
}

std::vector<PointOutcome> UniformPricer::price_points(const Workload& workload, Scheduling& scheduling,
                                                      const hw::Design& design,
                                                      const std::function<bool(const std::string&)>& wanted,
                                                      const LeaveOutTest& leave_out,
                                                      std::vector<LeftOutPoint>* left_out) {
  const SearchQuestion& q = *workload.question;
  // Per micro-batch with points to do: its points, and per model the bounds of its widths at the points
  // that fit, and then its plans.
  std::vector<MicroBatch> work;
  for (size_t bi = 0; bi < q.micro_batches.size(); ++bi) {
    std::optional<ChainPoints> points = chain_points(workload, design, bi, wanted);
    if (!points) continue;
    MicroBatch mb;
    mb.points = std::move(*points);
    mb.bounds.resize(q.models.size());
    mb.plans.resize(q.models.size());
    for (size_t mi = 0; mi < q.models.size(); ++mi)
      if (!mb.points.clusters[mi].empty())
        mb.bounds[mi] = bound_model(workload.graphs[mi][bi], design.arch, mb.points.clusters[mi], scheduling);
    if (leave_out) leave_out_on_bounds(workload, mb, leave_out, left_out);
    work.push_back(std::move(mb));
  }

  // The micro-batches' plans are independent of each other (only their layer problems needed this thread's
  // estimator): with threads to share them, each is planned by whichever thread takes it.
  std::vector<std::function<void()>> tasks;
  for (MicroBatch& mb : work)
    tasks.emplace_back([&] {
      ChainPoints& points = mb.points;
      for (size_t mi = 0; mi < q.models.size(); ++mi) {
        if (points.clusters[mi].empty()) continue;
        // A point that is no longer wanted (its combination stopped meanwhile) is dropped before the next
        // width is scheduled for it.
        auto needed = [&](size_t k) {
          const size_t j = points.fitting[mi][k];
          if (points.left_out[j] || points.dropped[j]) return false;
          if (wanted(points.keys[j])) return true;
          points.dropped[j] = 1;
          return false;
        };
        mb.plans[mi] =
            plan_model(workload.graphs[mi][points.index], mb.bounds[mi], points.clusters[mi], needed, scheduling);
      }
    });
  run_tasks(scheduling.sharing, std::move(tasks));

  std::vector<const ChainPoints*> points;
  for (const MicroBatch& mb : work) points.push_back(&mb.points);
  return assemble_points(workload, design, points, wanted,
                         [&](size_t batch, size_t mi, size_t k, const hw::Architecture& point_design) {
                           const ChainPoints& at = work[batch].points;
                           const ModelPlans& mp = work[batch].plans[mi];
                           return chain_outcome(at, mi, k, q.devices, mp.any_width, mp.plans[k].feasible, [&] {
                             const size_t wi = mp.width_of[k];
                             return model_outcome(workload.graphs[mi][at.index][wi], *mp.schedules[wi], mp.plans[k],
                                                  at.clusters[mi][k], point_design, q.global_batch);
                           });
                         });
}

}  // namespace phaze::search
