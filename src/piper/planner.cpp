#include "piper/planner.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <limits>
#include <optional>
#include <stdexcept>

#include "piper/choices.h"
#include "piper/downsets.h"
#include "util/divisors.h"
#include "util/run_on_threads.h"

namespace phaze::piper {

namespace {

/// Downsets of one size below which a threshold test takes them on one thread, and how many a thread takes
/// at a time.
constexpr size_t kParallelDownsets = 64, kDownsetChunk = 16;

/// The most threads a planner uses: each keeps a table of N + 1 candidates (4 MiB at N = 2^20).
constexpr int kMostThreads = 64;

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
  /// The planner of `p`, its candidate stages' choices built on `threads` threads (each takes a run of
  /// downsets; the pool is laid out in downset order whatever the count, so the answer does not depend on it;
  /// at most kMostThreads, each holding a table of N + 1 entries), grown where `grow` and the cut allow.
  Planner(const Problem& p, int threads, bool grow) : problem_(p), downsets_(enumerate_downsets(p)), grow_(grow) {
    divisors_ = divisors(p.micro_batches);
    threads_ = std::clamp(threads, 1, kMostThreads);
    scratch_.resize(static_cast<size_t>(threads_));
    for (Scratch& scratch : scratch_) scratch.slot_of_sigma.assign(static_cast<size_t>(p.micro_batches) + 1, -1);
    const size_t count = downsets_.sets.size();
    pairs_of_.resize(count);
    for (size_t outer = 0; outer < count; ++outer)
      for (int inner : downsets_.below[outer]) {
        pairs_of_[outer].push_back(static_cast<int>(pairs_.size()));
        pairs_.push_back(StagePair{static_cast<int>(outer), inner});
      }
    // Runs of downsets of about equal candidate stages, a few per thread, taken in turn by the threads.
    const size_t runs =
        threads_ <= 1 ? 1 : std::min<size_t>(4 * static_cast<size_t>(threads_), std::max<size_t>(count, 1));
    std::vector<size_t> bounds{0};
    for (size_t outer = 0, pairs = 0; outer < count; ++outer) {
      pairs += downsets_.below[outer].size();
      if (bounds.size() < runs && pairs * runs >= pairs_.size() * bounds.size()) bounds.push_back(outer + 1);
    }
    while (bounds.size() <= runs) bounds.push_back(count);
    std::vector<Segment> segments(runs);
    std::vector<std::exception_ptr> failures(runs);
    std::atomic<size_t> next{0};
    run_on_threads(static_cast<int>(std::min<size_t>(runs, static_cast<size_t>(threads_))), [&] {
      for (size_t r; (r = next.fetch_add(1)) < runs;) {
        try {
          build_segment(bounds[r], bounds[r + 1], segments[r]);
        } catch (...) {
          failures[r] = std::current_exception();
        }
      }
    });
    // The first failure in downset order: the one a single thread meets.
    for (const std::exception_ptr& failure : failures)
      if (failure) std::rethrow_exception(failure);
    // Each (pair, width) points into its segment's pool: the pools stay where the threads built them.
    cell_choices_.reserve(pairs_.size() * p.widths.size());
    cell_sizes_.reserve(pairs_.size() * p.widths.size());
    for (Segment& segment : segments) {
      const StageChoice* at = segment.pool.data();
      for (size_t size : segment.sizes) {
        cell_choices_.push_back(at);
        cell_sizes_.push_back(static_cast<uint32_t>(size));
        at += size;
      }
      segment.sizes = {};
      pools_.push_back(std::move(segment.pool));
    }
  }

  /// The choices of pair `pair` at width index `w`.
  ChoiceSpan choices(size_t pair, size_t w) const {
    const size_t cell = pair * problem_.widths.size() + w;
    return ChoiceSpan{cell_choices_[cell], cell_sizes_[cell]};
  }

  const Downsets& downsets() const { return downsets_; }

  /// The way of running every node with the fewest devices among those whose stages all take at most
  /// `limit` seconds per sample; nothing when none exists.
  std::optional<Found> within(double limit) {
    ++checks_;
    const size_t count = downsets_.sets.size();
    ways_.assign(count, {});
    ways_[0].push_back(Point{});
    // A downset's ways depend on those of smaller ones only: the downsets of one size (they come in size
    // order) are independent, and each is written by one thread.
    for (size_t first = 1; first < count;) {
      size_t last = first;
      while (last < count && downsets_.sizes[last] == downsets_.sizes[first]) ++last;
      if (threads_ <= 1 || last - first < kParallelDownsets) {
        for (size_t outer = first; outer < last; ++outer) add_ways(outer, limit, scratch_[0]);
      } else {
        std::atomic<size_t> next{first};
        std::atomic<size_t> slot{0};
        run_on_threads(threads_, [&] {
          Scratch& scratch = scratch_[slot.fetch_add(1)];
          for (size_t begin; (begin = next.fetch_add(kDownsetChunk)) < last;)
            for (size_t outer = begin; outer < std::min(begin + kDownsetChunk, last); ++outer)
              add_ways(outer, limit, scratch);
        });
      }
      first = last;
    }
    return fewest_devices();
  }

  /// One thread's buffers for the candidates of a downset.
  struct Scratch {
    std::vector<Point> candidates;
    std::vector<int64_t> touched;
    std::vector<int> slot_of_sigma;  ///< per Σ d ≤ N, the candidate at it (−1: none yet)
  };

  /// The ways of downset `outer` within `limit`, from those of the smaller downsets.
  void add_ways(size_t outer, double limit, Scratch& scratch) {
    // The candidates by Σ d: at each Σ d only the one with the fewest devices (the first of equals) counts.
    scratch.candidates.clear();
    scratch.touched.clear();
    for (int pi : pairs_of_[outer]) {
      const StagePair& s = pairs_[static_cast<size_t>(pi)];
      const std::vector<Point>& rest = ways_[static_cast<size_t>(s.inner)];
      if (rest.empty()) continue;
      for (size_t w = 0; w < problem_.widths.size(); ++w) {
        const ChoiceSpan sc = choices(static_cast<size_t>(pi), w);
        if (sc.empty()) continue;
        const int64_t t = problem_.widths[w], d_most = problem_.devices / t;
        size_t di = 0;
        int64_t y_max = -1;  // most_in_flight at degree divisors_[di] (−1: not computed yet)
        // The rest's ways by Σ d ascending: each needs more micro-batches in flight than the one before,
        // so the least degree that meets the limit only grows.
        for (size_t j = 0; j < rest.size(); ++j) {
          const Point& r = rest[j];
          for (; di < divisors_.size(); ++di, y_max = -1) {
            const int64_t d = divisors_[di];
            if (d > d_most) {
              di = divisors_.size();
              break;
            }
            if (y_max < 0) y_max = most_in_flight(sc, d, limit);
            if (y_max >= 1 + (r.sigma + d - 1) / d) break;
          }
          if (di == divisors_.size()) break;
          const int64_t d = divisors_[di];
          if (r.sigma + d > problem_.micro_batches || r.devices + d * t > problem_.devices) continue;
          const int64_t sigma = r.sigma + d, devices = r.devices + d * t;
          int& slot = scratch.slot_of_sigma[static_cast<size_t>(sigma)];
          if (slot >= 0 && scratch.candidates[static_cast<size_t>(slot)].devices <= devices) continue;
          const int c = fastest_fitting(sc, d, 1 + (r.sigma + d - 1) / d);
          const Point point{sigma,
                            devices,
                            pi,
                            static_cast<int>(j),
                            static_cast<int>(w),
                            d,
                            c,
                            std::max(r.slowest_s, sc[static_cast<size_t>(c)].time_s(d))};
          place(scratch, slot, point);
        }
      }
    }
    keep_candidates(outer, scratch);
  }

  /// Puts `point` in the candidates' slot of its Σ d (`slot`: −1 while that Σ d has none).
  static void place(Scratch& scratch, int& slot, const Point& point) {
    if (slot >= 0) {
      scratch.candidates[static_cast<size_t>(slot)] = point;
    } else {
      slot = static_cast<int>(scratch.candidates.size());
      scratch.candidates.push_back(point);
      scratch.touched.push_back(point.sigma);
    }
  }

  /// The ways of downset `outer` from its candidates. Fewer devices with more Σ d is the only trade-off worth
  /// keeping: a way dominated in both goes.
  void keep_candidates(size_t outer, Scratch& scratch) {
    std::sort(scratch.touched.begin(), scratch.touched.end());
    std::vector<Point>& kept = ways_[outer];
    for (int64_t sigma : scratch.touched) {
      int& slot = scratch.slot_of_sigma[static_cast<size_t>(sigma)];
      const Point& c = scratch.candidates[static_cast<size_t>(slot)];
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
      // The same computation as when the planner was built, so the same choices in the same order: the walk
      // over the outer downset's stages up to this one where the stage was grown, else the stage's own.
      StageChoices sc;
      if (grow_ && cut_independent_of_tmpc(problem_, p.width)) {
        GrowingStage growing(problem_, p.width);
        std::vector<int64_t> seen(downsets_.sets.size(), -1);
        walk_stages(s.outer, growing, seen, 0, [&](int inner) {
          if (inner != s.inner) return true;
          sc = growing.choices_with_tmpcs();
          return false;
        });
      } else {
        for (int v : nodes) in_stage[static_cast<size_t>(v)] = 1;
        sc = stage_choices(problem_, nodes, in_stage, p.width, true);
        for (int v : nodes) in_stage[static_cast<size_t>(v)] = 0;
      }
      if (p.choice < 0 || static_cast<size_t>(p.choice) >= sc.tmpc.size())
        throw std::logic_error("the Piper planner lost a stage's choice when reading its TMPCs back");
      std::vector<int> tmpc = sc.tmpc[static_cast<size_t>(p.choice)];
      for (int v : nodes) in_stage[static_cast<size_t>(v)] = 1;
      order_identical_nodes(problem_, nodes, in_stage, p.width, tmpc);
      for (int v : nodes) in_stage[static_cast<size_t>(v)] = 0;
      out.push_back(StagePlan{nodes, p.degree, problem_.widths[static_cast<size_t>(p.width)], std::move(tmpc)});
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
  /// The choices of the candidate stages of a run of downsets: per (pair, width) in pair order, how many,
  /// and the choices one after another.
  struct Segment {
    std::vector<size_t> sizes;
    std::vector<StageChoice> pool;
  };

  /// The choices of every stage D \ D' of the downsets D in [first, last).
  void build_segment(size_t first, size_t last, Segment& out) const {
    const Problem& p = problem_;
    const size_t widths = p.widths.size();
    std::vector<std::optional<GrowingStage>> growing(widths);
    for (size_t w = 0; w < widths; ++w)
      if (grow_ && cut_independent_of_tmpc(p, static_cast<int>(w))) growing[w].emplace(p, static_cast<int>(w));
    std::vector<char> in_stage(p.nodes.size(), 0);
    std::vector<int> position(downsets_.sets.size(), -1);
    std::vector<int64_t> seen(downsets_.sets.size(), -1);
    std::vector<std::vector<StageChoice>> grown(widths);                      // per width, the walk's choices
    std::vector<std::vector<size_t>> grown_begin(widths), grown_end(widths);  // per width, per D' of below
    for (size_t outer = first; outer < last; ++outer) {
      const std::vector<int>& below = downsets_.below[outer];
      for (size_t i = 0; i < below.size(); ++i) position[static_cast<size_t>(below[i])] = static_cast<int>(i);
      // Where the cut does not depend on the TMPCs, the stages D \ D' of this D in one walk: removing a node
      // from D' adds it to the stage, so each stage extends the one it was reached from.
      for (size_t w = 0; w < widths; ++w) {
        if (!growing[w]) continue;
        grown[w].clear();
        grown_begin[w].resize(below.size());
        grown_end[w].resize(below.size());
        walk_stages(static_cast<int>(outer), *growing[w], seen, static_cast<int64_t>(outer * widths + w),
                    [&](int inner) {
                      const auto at = static_cast<size_t>(position[static_cast<size_t>(inner)]);
                      grown_begin[w][at] = grown[w].size();
                      growing[w]->choices(grown[w]);
                      grown_end[w][at] = grown[w].size();
                      return true;
                    });
      }
      for (size_t i = 0; i < below.size(); ++i) {
        std::vector<int> nodes;
        for (size_t w = 0; w < widths; ++w) {
          const size_t before = out.pool.size();
          if (growing[w]) {
            out.pool.insert(out.pool.end(), grown[w].begin() + static_cast<std::ptrdiff_t>(grown_begin[w][i]),
                            grown[w].begin() + static_cast<std::ptrdiff_t>(grown_end[w][i]));
          } else {
            if (nodes.empty()) nodes = stage_nodes(downsets_, static_cast<int>(outer), below[i]);
            for (int v : nodes) in_stage[static_cast<size_t>(v)] = 1;
            const StageChoices sc = stage_choices(p, nodes, in_stage, static_cast<int>(w), false);
            for (int v : nodes) in_stage[static_cast<size_t>(v)] = 0;
            out.pool.insert(out.pool.end(), sc.choices.begin(), sc.choices.end());
          }
          out.sizes.push_back(out.pool.size() - before);
        }
      }
    }
  }

  /// Visits every D' ⊊ D of downset `outer` once, each reached from the downset before it by removing one
  /// node (Downsets::removals), depth first, with `stage` holding D \ D' at each `visit(D')`, until a visit
  /// returns false. `seen` holds `stamp` for the downsets visited.
  template <class Visit>
  void walk_stages(int outer, GrowingStage& stage, std::vector<int64_t>& seen, int64_t stamp, Visit visit) const {
    struct Frame {
      int downset;
      size_t next;  // its next removal to try
    };
    std::vector<Frame> stack{{outer, 0}};
    while (!stack.empty()) {
      Frame& top = stack.back();
      const std::vector<std::pair<int, int>>& removals = downsets_.removals[static_cast<size_t>(top.downset)];
      if (top.next == removals.size()) {
        stack.pop_back();
        if (!stack.empty()) stage.pop();
        continue;
      }
      const auto [v, inner] = removals[top.next++];
      if (seen[static_cast<size_t>(inner)] == stamp) continue;
      seen[static_cast<size_t>(inner)] = stamp;
      stage.push(v);
      if (!visit(inner)) return;
      stack.push_back(Frame{inner, 0});
    }
  }

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
  bool grow_;  ///< grow stages where the cut allows (GrowingStage), else build each from its nodes
  std::vector<int64_t> divisors_;
  std::vector<StagePair> pairs_;
  std::vector<std::vector<StageChoice>> pools_;   ///< per run of downsets, its pairs' choices one after another
  std::vector<const StageChoice*> cell_choices_;  ///< per (pair, width), where its choices start in its pool
  std::vector<uint32_t> cell_sizes_;              ///< per (pair, width), how many (at most kStageChoices)
  std::vector<std::vector<int>> pairs_of_;        ///< per outer downset, its pairs
  std::vector<std::vector<Point>> ways_;
  int threads_ = 1;
  std::vector<Scratch> scratch_;  ///< per thread
  int64_t checks_ = 0;
};

/// The relative width below which the search on the time per sample turns from halving to the stage times.
constexpr double kNarrow = 1.0 / (1 << 24);

}  // namespace

namespace {

/// The answer of one planner; nothing when the plan it built fails evaluate_plan.
std::optional<PiperAnswer> solve(const Problem& problem, int threads, bool grow) {
  Planner planner(problem, threads, grow);
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
  if (!check.valid) return std::nullopt;
  answer.feasible = true;
  answer.time_per_sample_s = check.time_per_sample_s;
  answer.checks = planner.checks();
  return answer;
}

}  // namespace

PiperAnswer plan_piper(const Problem& problem, int threads) {
  // Growing stages adds a stage's memory in the walk's order of its nodes, evaluate_plan in node order: where
  // a stage's memory is within rounding of M the two can disagree, the planner's plan then failing the
  // evaluation or no plan found. Stages built from their nodes give the answer the planner gave before
  // stages grew, in those cases alone.
  const bool grown = [&] {
    for (size_t w = 0; w < problem.widths.size(); ++w)
      if (cut_independent_of_tmpc(problem, static_cast<int>(w))) return true;
    return false;
  }();
  std::optional<PiperAnswer> answer = solve(problem, threads, grown);
  if (grown && (!answer || !answer->feasible)) {
    const int64_t checks = answer ? answer->checks : 0;
    answer = solve(problem, threads, false);
    if (answer) answer->checks += checks;
  }
  if (!answer) throw std::logic_error("the Piper planner built a plan that evaluate_plan refuses");
  return *answer;
}

}  // namespace phaze::piper
