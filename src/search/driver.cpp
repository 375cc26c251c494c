#include "search/driver.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "hw/area.h"
#include "hw/presets.h"
#include "search/answer_thresholds.h"
#include "search/design_walk.h"
#include "search/evaluate.h"
#include "search/point_row.h"
#include "search/point_store.h"
#include "search/pricer.h"
#include "search/rank_evaluation.h"
#include "search/schedule_cache.h"

namespace phaze::search {

namespace {

std::string best_text(const PointOutcome& p) {
  const hw::Architecture& a = p.design;
  return fmt::format("{:.4g} samples/s ({}x{}x{} TC, {}x{} VC, {} MiB GLB, {} GiB HBM, mbs {}, rc {})", p.score,
                     a.num_tc, a.tc_width, a.tc_depth, a.num_vc, a.vc_width, a.glb_bytes >> 20, a.hbm_bytes >> 30,
                     p.micro_batch, p.recompute ? "on" : "off");
}

/// A design's points for the combinations running when it was handed out: those found in the results file
/// with their scores, and those to evaluate by key.
struct DesignPoints {
  std::vector<std::pair<size_t, std::optional<double>>> resumed;  ///< combination, score
  std::vector<std::pair<std::string, size_t>> wanted;             ///< key, combination

  std::optional<size_t> combination_of(const std::string& key) const {
    const auto w = std::find_if(wanted.begin(), wanted.end(), [&](const auto& k) { return k.first == key; });
    return w == wanted.end() ? std::nullopt : std::optional<size_t>(w->second);
  }
};

DesignPoints design_points(const hw::Design& design, const std::vector<size_t>& running_now,
                           const std::vector<Combination>& combos, const ScoreMap& stored) {
  DesignPoints points;
  for (size_t c : running_now) {
    std::string key = point_key_for(design, combos[c]);
    if (const auto found = stored.find(key); found != stored.end()) {
      points.resumed.emplace_back(c, found->second);
    } else {
      points.wanted.emplace_back(std::move(key), c);
    }
  }
  return points;
}

/// Counts the points the walk knew: those resumed from the results file, and those evaluated for a
/// combination whose answer did not visit their bucket.
void count_walk_points(const Walk& walk, const SearchAnswer& answer, RunStats& stats) {
  stats.points_resumed = 0;
  stats.points_past_stop = 0;
  for (size_t position = 0; position < walk.order.designs.size(); ++position)
    for (size_t c = 0; c < walk.combinations; ++c) {
      const Slot& s = walk.slot(position, c);
      if (!s.known) continue;
      if (!s.evaluated) ++stats.points_resumed;
      if (s.evaluated && static_cast<int64_t>(walk.order.bucket_of(position)) >= answer.combinations[c].buckets_visited)
        ++stats.points_past_stop;
    }
}

}  // namespace

hw::Design tpuv4_design(const SearchQuestion& question) {
  hw::Design d;
  // Beside a chip given whole, the preset itself: even a chip of the same cores keeps its own bandwidth.
  d.arch = question.chip ? hw::tpuv4_like() : point_architecture(question, hw::tpuv4_like());
  d.arch.name.clear();
  d.area_um2 = hw::area_um2(d.arch, question.space.core_overheads);
  return d;
}

namespace {

/// One run of the search: what the threads that take its designs share, and the answer built from what
/// they found.
class SearchRun {
 public:
  SearchRun(const SearchQuestion& question, const RunSettings& settings);
  /// Visits the designs on this process's threads and the other ranks' (RunSettings::job).
  void walk_designs();
  /// The answer from the scores the walk knew, with its baselines; fills `stats` when given.
  SearchAnswer answer(RunStats* stats);

 private:
  /// Takes designs on one slot of the walk until none is left: a thread of this process (slot < threads) or a
  /// thread of another rank.
  void take_designs(Progress& progress);
  /// The evaluated points of `split` at the design at `position`, and in `out` those left out on their bounds
  /// (`reached_then`: the thresholds when the design was handed out).
  std::vector<PointOutcome> evaluate(std::optional<Evaluator>& evaluator, int slot, size_t position,
                                     const DesignPoints& split, const std::optional<AnswerThresholds>& reached_then,
                                     std::vector<LeftOutPoint>& out, int64_t& remote_unproven);
  /// Enters a design's points in the walk and the progress line; called with the walk's lock held.
  void record(size_t position, const DesignPoints& split, const std::vector<PointOutcome>& points,
              const std::vector<LeftOutPoint>& out, Progress& progress);
  /// The points the answer shows in full: read back from the results file, or evaluated again (evaluation is
  /// deterministic, and the caches give what a fresh solve gives) and taken through their record's text as
  /// stored points are.
  std::vector<PointOutcome> points_in_full(const std::vector<PointOutcome>& outlines);

  const SearchQuestion& q_;
  const RunSettings& settings_;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  const std::vector<hw::Design> designs_;
  const BucketOrder order_;
  const std::vector<Combination> combos_;
  const Workload workload_;
  const int threads_;
  PointStore store_;
  ScheduleCache cache_;
  std::optional<PointOutcome> best_so_far_;
  std::atomic<int64_t> evaluated_{0}, unproven_{0};
  // Points left out on their bounds (guarded by the walk's mutex), and the thresholds they are held against.
  const bool leaving_out_;
  AnswerThresholdTracker reached_;
  int64_t left_out_ = 0, left_out_feasible_ = 0;
  std::atomic<int64_t> left_out_remote_{0};  // of them, by other ranks
  // The other ranks of an MPI job take designs like threads of this process: one slot per thread of theirs.
  std::optional<RemoteRanks> remote_;
  int64_t remote_threads_ = 0;
  int slots_ = 0;
  std::atomic<int> next_slot_{0};
  std::optional<Walk> walk_;
  // Threads without a design to take schedule layers of the designs that others evaluate.
  WorkSharing sharing_;
  // The Spotlight-style baseline's argmins need nothing from the walk: this process's threads take them
  // first, and the walk's designs as they finish, so that no thread waits for the others at the end of them.
  std::optional<SpotlightArgmins> argmins_;
};

/// The question's designs, once it is valid.
std::vector<hw::Design> valid_designs(const SearchQuestion& q) {
  validate(q);
  return search_designs(q);
}

SearchRun::SearchRun(const SearchQuestion& q, const RunSettings& settings)
    : q_(q),
      settings_(settings),
      designs_(valid_designs(q)),
      order_(bucket_order(designs_, q.bucket_um2)),
      combos_(combinations(q)),
      workload_(prepare_workload(q)),
      threads_(std::max(1, settings.threads)),
      store_(settings.db_path, q),
      leaving_out_(settings.leave_out_by_bound && q.stop_rule == StopRule::Exact && !settings.keep_all &&
                   make_pricer(q)->bounds_points()),
      reached_(combos_.size(), q.models.size(), settings.top, settings.pareto, q.global_batch, q.ranking) {
  if (q.stop_rule == StopRule::Exact) store_.reserve(designs_.size() * combos_.size());
  // A resumed run starts from the thresholds its stored points reached, so that it leaves out what the run it
  // resumes left out (those points are not in the file) instead of evaluating them.
  if (leaving_out_ && store_.has_file())
    for (const PointRow& row : store_.take_rows()) {
      const PointOutcome point = outline_of(row);
      const auto c = std::find(combos_.begin(), combos_.end(),
                               Combination{point.micro_batch, point.design.hbm_bytes, point.recompute});
      if (c != combos_.end()) reached_.add(point, static_cast<size_t>(c - combos_.begin()));
    }
  if (settings.job && settings.job->size() > 1) remote_.emplace(*settings.job);
  slots_ = threads_ + (remote_ ? remote_->slots() : 0);
  walk_.emplace(order_, work_units(designs_, order_, q.stop_rule == StopRule::Exact), combos_.size(), stop_window(q),
                kLookAheadPerThread * static_cast<size_t>(slots_));
  argmins_.emplace(q, designs_, cache_);
}

void SearchRun::walk_designs() {
  sharing_.set_on_post([&] {
    std::lock_guard lock(walk_->mutex);
    walk_->changed.notify_all();
  });
  {
    // The bucket search counts buckets, whose total is only a bound; the exact search counts points.
    Progress progress = q_.stop_rule == StopRule::Exact
                            ? Progress(static_cast<int64_t>(designs_.size() * combos_.size()), settings_.progress)
                            : Progress(static_cast<int64_t>(order_.buckets()), settings_.progress, "buckets",
                                       /*total_is_bound=*/true);
    run_walk(*walk_, slots_, [&] { take_designs(progress); });
    if (q_.stop_rule == StopRule::Buckets) progress.set_total(static_cast<int64_t>(walk_->frontier));
    progress.finish();
  }
  sharing_.set_on_post({});
  remote_threads_ = remote_ ? remote_->slots() : 0;
  remote_.reset();  // the other ranks stop here: the baselines run on this one
}

void SearchRun::take_designs(Progress& progress) {
  const int slot = next_slot_++;
  std::optional<Evaluator> evaluator;
  if (slot < threads_) {
    argmins_->work();
    evaluator.emplace(workload_, cache_);
    evaluator->share_work(sharing_);
  }
  int64_t remote_unproven = 0;
  Walk& walk = *walk_;
  std::unique_lock lock(walk.mutex);
  // Evaluates the design at `position`, called and returning with the lock held.
  walk.take_designs(
      lock,
      [&](size_t position) {
        if (settings_.cancel && settings_.cancel->load()) throw SearchCancelled();
        std::vector<size_t> running_now;
        for (size_t c = 0; c < combos_.size(); ++c)
          if (running(walk.states[c], order_)) running_now.push_back(c);
        const std::optional<AnswerThresholds> reached_then =
            leaving_out_ ? std::optional<AnswerThresholds>(reached_.now()) : std::nullopt;
        lock.unlock();

        // The points of the combinations running now: found in the results file, or evaluated.
        const hw::Design& design = designs_[order_.designs[position]];
        const DesignPoints split = design_points(design, running_now, combos_, store_.at_start());
        std::vector<PointOutcome> points;
        std::vector<LeftOutPoint> out;
        if (!split.wanted.empty())
          points = evaluate(evaluator, slot, position, split, reached_then, out, remote_unproven);
        store_.commit(points);

        lock.lock();
        record(position, split, points, out, progress);
        store_.keep(points);
        walk.changed.notify_all();
      },
      evaluator ? &sharing_ : nullptr);
  unproven_ += evaluator ? evaluator->unproven_passes() : remote_unproven;
}

std::vector<PointOutcome> SearchRun::evaluate(std::optional<Evaluator>& evaluator, int slot, size_t position,
                                              const DesignPoints& split,
                                              const std::optional<AnswerThresholds>& reached_then,
                                              std::vector<LeftOutPoint>& out, int64_t& remote_unproven) {
  if (evaluator) {
    LeaveOutTest test;
    if (reached_then)
      test = [&](const std::string& key, const std::vector<std::optional<ModelBound>>& bounds) {
        return cannot_enter(*reached_then, *split.combination_of(key), designs_[order_.designs[position]].area_um2,
                            bounds);
      };
    // A point whose combination stopped while the design was under way is not evaluated: it is past the
    // stop, out of the answer.
    auto wanted = [&](const std::string& key) {
      const std::optional<size_t> c = split.combination_of(key);
      if (!c) return false;
      std::lock_guard still(walk_->mutex);
      return running(walk_->states[*c], order_);
    };
    return evaluator->evaluate(designs_[order_.designs[position]], wanted, test, &out);
  }
  // Another rank leaves points out on the thresholds reached when this thread took the design, as this
  // process's threads do.
  std::vector<std::string> keys;
  std::vector<size_t> combinations;
  for (const auto& wanted : split.wanted) {
    keys.push_back(wanted.first);
    combinations.push_back(*split.combination_of(wanted.first));
  }
  std::vector<PointOutcome> points =
      remote_->evaluate(slot - threads_, position, keys, combinations, reached_then, out, remote_unproven);
  left_out_remote_ += static_cast<int64_t>(out.size());
  return points;
}

void SearchRun::record(size_t position, const DesignPoints& split, const std::vector<PointOutcome>& points,
                       const std::vector<LeftOutPoint>& out, Progress& progress) {
  Walk& walk = *walk_;
  for (const auto& [c, score] : split.resumed) walk.slot(position, c) = {true, false, score};
  // A point left out has no score; the exact search, the only one that leaves points out, visits every
  // bucket whatever their scores.
  for (const LeftOutPoint& p : out) {
    walk.slot(position, *split.combination_of(p.key)) = {true, true, std::nullopt};
    left_out_feasible_ += p.feasible ? 1 : 0;
  }
  left_out_ += static_cast<int64_t>(out.size());
  for (const PointOutcome& p : points) {
    const size_t c = *split.combination_of(p.key);
    walk.slot(position, c) = {true, true, rule_score(p.feasible, p.score)};
    if (leaving_out_) reached_.add(p, c);
    if (p.feasible && (!best_so_far_ || better(p, *best_so_far_, q_.ranking))) {
      best_so_far_ = p;
      progress.set_best(best_text(p));
    }
  }
  evaluated_ += static_cast<int64_t>(points.size());
  const int64_t buckets_finished = walk.finish_design(position);
  progress.advance(q_.stop_rule == StopRule::Exact
                       ? static_cast<int64_t>(points.size() + out.size() + split.resumed.size())
                       : buckets_finished);
}

std::vector<PointOutcome> SearchRun::points_in_full(const std::vector<PointOutcome>& outlines) {
  std::vector<std::string> keys;
  for (const PointOutcome& o : outlines) keys.push_back(o.key);
  if (store_.has_file()) return store_.stored(keys);
  // Each design once, with the keys of all its points shown (the top list and the bests share designs).
  std::vector<DesignValues> shown;
  for (const PointOutcome& o : outlines) shown.push_back(design_values(o.design));
  std::map<std::string, PointOutcome> found;
  Evaluator again(workload_, cache_);
  for (const hw::Design& design : designs_) {
    const DesignValues chip = design_values(design.arch);
    std::set<std::string> wanted;
    for (size_t i = 0; i < outlines.size(); ++i)
      if (std::equal(chip.begin(), chip.begin() + kChipFields, shown[i].begin())) wanted.insert(outlines[i].key);
    if (wanted.empty()) continue;
    for (PointOutcome& p : again.evaluate(design, [&](const std::string& key) { return wanted.contains(key); }))
      found.emplace(p.key, as_recorded(p));
  }
  std::vector<PointOutcome> out;
  for (const std::string& key : keys) {
    const auto point = found.find(key);
    if (point == found.end()) throw std::logic_error("search: point " + key + " evaluated again is missing");
    out.push_back(point->second);
  }
  return out;
}

SearchAnswer SearchRun::answer(RunStats* stats) {
  // The answer replays the stop rule over the scores the walk knew: those of the points stored in the results
  // file and those evaluated, so that a resumed run decides as a fresh one.
  const Walk& walk = *walk_;
  auto score = [&](size_t position, size_t c) {
    const Slot& s = walk.slot(position, c);
    if (!s.known) throw std::logic_error("search: a point the answer needs was never evaluated");
    return s.score;
  };
  SearchAnswer answer = build_answer(
      AnswerSpace{q_, designs_, order_, combos_}, score, store_.take_rows(),
      [&](const std::vector<PointOutcome>& outlines) { return points_in_full(outlines); },
      AnswerListing{settings_.top, settings_.keep_all, settings_.pareto});
  answer.feasible_points += left_out_feasible_;  // explored (the search is exact), though not evaluated

  // The baseline is evaluated afresh (it is one design) through the same path as every point.
  Evaluator evaluator(workload_, cache_);
  const hw::Design tpuv4 = tpuv4_design(q_);
  answer.tpuv4_baseline = best_feasible(evaluator.evaluate(tpuv4, [](const std::string&) { return true; }), q_.ranking);
  const DesignValues tpuv4_chip = design_values(tpuv4.arch);
  answer.tpuv4_in_space = std::any_of(designs_.begin(), designs_.end(), [&](const hw::Design& d) {
    const DesignValues chip = design_values(d.arch);
    return std::equal(chip.begin(), chip.begin() + kChipFields, tpuv4_chip.begin());
  });
  answer.baselines = compute_baselines(q_, answer.best, answer.tpuv4_baseline, workload_, cache_, threads_,
                                       stats ? &stats->baseline_times : nullptr, &*argmins_);

  if (stats) {
    count_walk_points(walk, answer, *stats);
    stats->points_evaluated = evaluated_;
    stats->points_left_out = left_out_;
    stats->points_left_out_remote = left_out_remote_;
    stats->schedule_hits = cache_.hits();
    stats->schedule_misses = cache_.misses();
    stats->unproven_passes = unproven_;
    stats->remote_threads = remote_threads_;
    stats->elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  return answer;
}

}  // namespace

SearchAnswer run_search(const SearchQuestion& q, const RunSettings& settings, RunStats* stats) {
  SearchRun run(q, settings);
  run.walk_designs();
  return run.answer(stats);
}

}  // namespace phaze::search
