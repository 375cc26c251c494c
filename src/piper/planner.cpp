#include "piper/planner.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <stdexcept>

#include "piper/choices.h"
#include "piper/downsets.h"
#include "util/divisors.h"

namespace phaze::piper {

namespace {

/// One candidate stage: D \ D'. Its nodes and TMPC assignments are recomputed for the stages of the answer
/// only: with millions of candidates, keeping them would take gigabytes.
struct StagePair {
  int outer = 0, inner = 0;
};

/// A stage's choices at one width: a slice of the planner's pool.
struct ChoiceSpan {
  const StageChoice* data = nullptr;
  size_t size = 0;
  bool empty() const { return size == 0; }
  const StageChoice& operator[](size_t i) const { return data[i]; }
  const StageChoice* begin() const { return data; }
  const StageChoice* end() const { return data + size; }
};

/// A way of running a downset D (the later part of the pipeline): Σ d of its stages, their devices, and
/// its first stage (pair, width, degree, choice) with the point of the rest it continues.
struct Point {
  int64_t sigma = 0;
  int64_t devices = 0;
  int pair = -1;
  int rest = -1;
  int width = -1;
  int64_t degree = 0;
  int choice = -1;
  double slowest_s = 0;  ///< the largest stage time per sample of the way
};

struct Found {
  std::vector<Point> chain;  ///< first stage first
  double slowest_s = 0;
};

class Planner {
 public:
  explicit Planner(const Problem& p) : problem_(p), downsets_(enumerate_downsets(p)) {
    divisors_ = divisors(p.micro_batches);
    slot_of_sigma_.assign(static_cast<size_t>(p.micro_batches) + 1, -1);
    std::vector<char> in_stage(p.nodes.size(), 0);
    pairs_of_.resize(downsets_.sets.size());
    choice_begin_.push_back(0);
    for (size_t outer = 0; outer < downsets_.sets.size(); ++outer)
      for (int inner : downsets_.below[outer]) {
        const std::vector<int> nodes = stage_nodes(downsets_, static_cast<int>(outer), inner);
        for (int v : nodes) in_stage[static_cast<size_t>(v)] = 1;
        for (size_t w = 0; w < p.widths.size(); ++w) {
          const StageChoices sc = stage_choices(p, nodes, in_stage, static_cast<int>(w), false);
          pool_.insert(pool_.end(), sc.choices.begin(), sc.choices.end());
          choice_begin_.push_back(pool_.size());
        }
        for (int v : nodes) in_stage[static_cast<size_t>(v)] = 0;
        pairs_of_[outer].push_back(static_cast<int>(pairs_.size()));
        pairs_.push_back(StagePair{static_cast<int>(outer), inner});
      }
  }

  /// The choices of pair `pair` at width index `w`.
  ChoiceSpan choices(size_t pair, size_t w) const {
    const size_t cell = pair * problem_.widths.size() + w;
    return ChoiceSpan{pool_.data() + choice_begin_[cell], choice_begin_[cell + 1] - choice_begin_[cell]};
  }

  const Downsets& downsets() const { return downsets_; }

  /// The way of running every node with the fewest devices among those whose stages all take at most
  /// `limit` seconds per sample; nothing when none exists.
  std::optional<Found> within(double limit) {
    ++checks_;
    const size_t count = downsets_.sets.size();
    ways_.assign(count, {});
    ways_[0].push_back(Point{});
    std::vector<int64_t> y_max(divisors_.size());
    for (size_t outer = 1; outer < count; ++outer) {
      // The candidates by Σ d: at each Σ d only the one with the fewest devices (the first of equals) counts.
      candidates_.clear();
      touched_.clear();
      for (int pi : pairs_of_[outer]) {
        const StagePair& s = pairs_[static_cast<size_t>(pi)];
        const std::vector<Point>& rest = ways_[static_cast<size_t>(s.inner)];
        if (rest.empty()) continue;
        for (size_t w = 0; w < problem_.widths.size(); ++w) {
          const ChoiceSpan sc = choices(static_cast<size_t>(pi), w);
          if (sc.empty()) continue;
          const int64_t t = problem_.widths[w];
          std::fill(y_max.begin(), y_max.end(), -1);
          size_t di = 0;
          // The rest's ways by Σ d ascending: each needs more micro-batches in flight than the one before,
          // so the least degree that meets the limit only grows.
          for (size_t j = 0; j < rest.size(); ++j) {
            const Point& r = rest[j];
            for (; di < divisors_.size(); ++di) {
              const int64_t d = divisors_[di];
              if (d > problem_.devices / t) {
                di = divisors_.size();
                break;
              }
              if (y_max[di] < 0) y_max[di] = most_in_flight(sc, d, limit);
              if (y_max[di] >= 1 + (r.sigma + d - 1) / d) break;
            }
            if (di == divisors_.size()) break;
            const int64_t d = divisors_[di];
            if (r.sigma + d > problem_.micro_batches || r.devices + d * t > problem_.devices) continue;
            const int64_t sigma = r.sigma + d, devices = r.devices + d * t;
            int& slot = slot_of_sigma_[static_cast<size_t>(sigma)];
            if (slot >= 0 && candidates_[static_cast<size_t>(slot)].devices <= devices) continue;
            const int c = fastest_fitting(sc, d, 1 + (r.sigma + d - 1) / d);
            const Point point{sigma,
                              devices,
                              pi,
                              static_cast<int>(j),
                              static_cast<int>(w),
                              d,
                              c,
                              std::max(r.slowest_s, sc[static_cast<size_t>(c)].time_s(d))};
            place(slot, point);
          }
        }
      }
      keep_candidates(outer);
    }
    return fewest_devices();
  }

  /// Puts `point` in the candidates' slot of its Σ d (`slot`: −1 while that Σ d has none).
  void place(int& slot, const Point& point) {
    if (slot >= 0) {
      candidates_[static_cast<size_t>(slot)] = point;
    } else {
      slot = static_cast<int>(candidates_.size());
      candidates_.push_back(point);
      touched_.push_back(point.sigma);
    }
  }

  /// The ways of downset `outer` from its candidates. Fewer devices with more Σ d is the only trade-off worth
  /// keeping: a way dominated in both goes.
  void keep_candidates(size_t outer) {
    std::sort(touched_.begin(), touched_.end());
    std::vector<Point>& kept = ways_[outer];
    for (int64_t sigma : touched_) {
      int& slot = slot_of_sigma_[static_cast<size_t>(sigma)];
      const Point& c = candidates_[static_cast<size_t>(slot)];
      if (kept.empty() || c.devices < kept.back().devices) kept.push_back(c);
      slot = -1;
    }
  }

  /// The way of the whole graph with the fewest devices (the last: devices fall as Σ d grows), traced back
  /// stage by stage; nothing when the graph has no way.
  std::optional<Found> fewest_devices() const {
    const std::vector<Point>& all = ways_[static_cast<size_t>(downsets_.full)];
    if (all.empty()) return std::nullopt;
    Found found;
    int at = static_cast<int>(all.size()) - 1;
    found.slowest_s = all[static_cast<size_t>(at)].slowest_s;
    for (int downset = downsets_.full; downset != 0;) {
      const Point& p = ways_[static_cast<size_t>(downset)][static_cast<size_t>(at)];
      found.chain.push_back(p);
      at = p.rest;
      downset = pairs_[static_cast<size_t>(p.pair)].inner;
    }
    return found;
  }

  std::vector<StagePlan> stages(const Found& found) const {
    std::vector<StagePlan> out;
    std::vector<char> in_stage(problem_.nodes.size(), 0);
    for (const Point& p : found.chain) {
      const StagePair& s = pairs_[static_cast<size_t>(p.pair)];
      const std::vector<int> nodes = stage_nodes(downsets_, s.outer, s.inner);
      for (int v : nodes) in_stage[static_cast<size_t>(v)] = 1;
      // The same computation as when the planner was built: the same choices in the same order.
      const StageChoices sc = stage_choices(problem_, nodes, in_stage, p.width, true);
      for (int v : nodes) in_stage[static_cast<size_t>(v)] = 0;
      out.push_back(StagePlan{nodes, p.degree, problem_.widths[static_cast<size_t>(p.width)],
                              sc.tmpc[static_cast<size_t>(p.choice)]});
    }
    return out;
  }

  /// Every stage time per sample strictly between lo and hi that some choice takes at some degree, ascending:
  /// the values the optimum can take there (a way's slowest stage is one of them).
  std::vector<double> stage_times_between(double lo, double hi) const {
    std::vector<double> out;
    for (size_t pair = 0; pair < pairs_.size(); ++pair)
      for (size_t w = 0; w < problem_.widths.size(); ++w)
        for (const StageChoice& c : choices(pair, w))
          for (int64_t d : divisors_) {
            if (d > problem_.devices / problem_.widths[w]) break;
            const double v = c.time_s(d);
            if (v > lo && v < hi) out.push_back(v);
          }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

  int64_t checks() const { return checks_; }
  int64_t pairs() const { return static_cast<int64_t>(pairs_.size()); }

 private:
  /// The most micro-batches in flight of a choice of `sc` that takes at most `limit` at degree d (0: none).
  static int64_t most_in_flight(const ChoiceSpan& sc, int64_t d, double limit) {
    for (const StageChoice& c : sc)  // by y_max descending
      if (c.time_s(d) <= limit) return c.max_in_flight;
    return 0;
  }
  /// The fastest choice of `sc` at degree d that fits with y in flight (the first of equal times).
  static int fastest_fitting(const ChoiceSpan& sc, int64_t d, int64_t y) {
    int best = -1;
    for (size_t i = 0; i < sc.size && sc[i].max_in_flight >= y; ++i)
      if (best < 0 || sc[i].time_s(d) < sc[static_cast<size_t>(best)].time_s(d)) best = static_cast<int>(i);
    return best;
  }

  const Problem& problem_;
  Downsets downsets_;
  std::vector<int64_t> divisors_;
  std::vector<StagePair> pairs_;
  std::vector<StageChoice> pool_;           ///< every pair's choices at every width, one after another
  std::vector<size_t> choice_begin_;        ///< per (pair, width), where its choices start in pool_ (and an end)
  std::vector<std::vector<int>> pairs_of_;  ///< per outer downset, its pairs
  std::vector<std::vector<Point>> ways_;
  std::vector<Point> candidates_;
  std::vector<int64_t> touched_;
  std::vector<int> slot_of_sigma_;  ///< per Σ d ≤ N, the candidate at it (−1: none yet)
  int64_t checks_ = 0;
};

/// The relative width below which the search on the time per sample turns from halving to the stage times.
constexpr double kNarrow = 1.0 / (1 << 24);

}  // namespace

PiperAnswer plan_piper(const Problem& problem) {
  Planner planner(problem);
  PiperAnswer answer;
  answer.downsets = static_cast<int64_t>(planner.downsets().sets.size());
  answer.stage_pairs = planner.pairs();
  std::optional<Found> best = planner.within(std::numeric_limits<double>::infinity());
  if (!best) {
    answer.reason = fmt::format(
        "no plan fits: no cut of the graph into stages, with a width and a degree dividing N = {} "
        "per stage, fits in {} bytes per device on at most {} devices",
        problem.micro_batches, problem.memory_per_device_bytes, problem.devices);
    answer.checks = planner.checks();
    return answer;
  }
  // The least limit that admits a way is the optimum, and it is the time of some stage choice at some degree.
  // Between a limit known to admit none (lo) and the slowest stage of the best way found (hi): halve the
  // interval until it is narrow, then search the stage times inside it, which are few.
  double hi = best->slowest_s;
  if (hi > 0) {
    if (std::optional<Found> zero = planner.within(0.0)) {
      best = std::move(zero);
      hi = best->slowest_s;
    } else {
      double lo = 0.0;
      auto probe = [&](double limit) {
        if (std::optional<Found> found = planner.within(limit)) {
          best = std::move(found);
          hi = best->slowest_s;
          return true;
        }
        lo = limit;
        return false;
      };
      while (hi - lo > hi * kNarrow) {
        const double mid = lo + (hi - lo) / 2;
        if (!(mid > lo && mid < hi)) break;
        probe(mid);
      }
      const std::vector<double> times = planner.stage_times_between(lo, hi);
      size_t first = 0, last = times.size();  // the optimum is times[k] for the least feasible k, or hi
      while (first < last) {
        const size_t mid = first + (last - first) / 2;
        if (times[mid] >= hi) {
          last = mid;
        } else if (probe(times[mid])) {
          last = mid;
        } else {
          first = mid + 1;
        }
      }
    }
  }
  answer.stages = planner.stages(*best);
  const PlanEvaluation check = evaluate_plan(problem, answer.stages);
  if (!check.valid) throw std::logic_error("the Piper planner built an invalid plan: " + check.reason);
  answer.feasible = true;
  answer.time_per_sample_s = check.time_per_sample_s;
  answer.checks = planner.checks();
  return answer;
}

}  // namespace phaze::piper
