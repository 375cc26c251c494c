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
  d.arch = point_architecture(question, hw::tpuv4_like());
  d.area_um2 = hw::area_um2(d.arch);
  return d;
}

SearchAnswer run_search(const SearchQuestion& q, const RunSettings& settings, RunStats* stats) {
  const auto start = std::chrono::steady_clock::now();
  validate(q);
  const std::vector<hw::Design> designs = search_designs(q);
  const BucketOrder order = bucket_order(designs, q.bucket_um2);
  const std::vector<Combination> combos = combinations(q);
  const Workload workload = prepare_workload(q);
  const int threads = std::max(1, settings.threads);

  PointStore store(settings.db_path, q);
  if (q.exhaustive) store.reserve(designs.size() * combos.size());
  ScheduleCache cache;
  std::optional<PointOutcome> best_so_far;
  std::atomic<int64_t> evaluated{0}, unproven{0};
  // Points left out on their bounds (guarded by the walk's mutex), and the thresholds they are held against.
  const bool leaving_out = settings.leave_out_by_bound && q.exhaustive && !settings.keep_all &&
                           settings.db_path.empty() && make_pricer(q)->bounds_points();
  AnswerThresholdTracker reached(combos.size(), q.models.size(), settings.top);
  int64_t left_out = 0, left_out_feasible = 0;
  std::atomic<int64_t> left_out_remote{0};  // of them, by other ranks
  // The other ranks of an MPI job take designs like threads of this process: one slot per thread of theirs.
  std::optional<RemoteRanks> remote;
  if (settings.job && settings.job->size() > 1) remote.emplace(*settings.job);
  const int slots = threads + (remote ? remote->slots() : 0);
  std::atomic<int> next_slot{0};
  Walk walk(order, work_units(designs, order, q.exhaustive), combos.size(), stop_window(q),
            kLookAheadPerThread * static_cast<size_t>(slots));

  // Threads without a design to take schedule layers of the designs that others evaluate.
  WorkSharing sharing;
  // The Spotlight-style baseline's argmins need nothing from the walk: this process's threads take them
  // first, and the walk's designs as they finish, so that no thread waits for the others at the end of them.
  SpotlightArgmins argmins(q, designs, cache);
  sharing.set_on_post([&] {
    std::lock_guard lock(walk.mutex);
    walk.changed.notify_all();
  });
  {
    // The bucket search counts buckets, whose total is only a bound; the exhaustive search counts points.
    Progress progress = q.exhaustive ? Progress(static_cast<int64_t>(designs.size() * combos.size()), settings.progress)
                                     : Progress(static_cast<int64_t>(order.buckets()), settings.progress, "buckets",
                                                /*total_is_bound=*/true);
    run_walk(walk, slots, [&] {
      const int slot = next_slot++;
      std::optional<Evaluator> evaluator;
      if (slot < threads) {
        argmins.work();
        evaluator.emplace(workload, cache);
        evaluator->share_work(sharing);
      }
      int64_t remote_unproven = 0;
      auto evaluate = [&](size_t position, const DesignPoints& split,
                          const std::optional<AnswerThresholds>& reached_then, std::vector<LeftOutPoint>& out) {
        if (evaluator) {
          LeaveOutTest test;
          if (reached_then)
            test = [&](const std::string& key, const std::vector<std::optional<double>>& bounds) {
              return cannot_enter(*reached_then, *split.combination_of(key), bounds);
            };
          // A point whose combination stopped while the design was under way is not evaluated: it is past
          // the stop, out of the answer.
          auto wanted = [&](const std::string& key) {
            const std::optional<size_t> c = split.combination_of(key);
            if (!c) return false;
            std::lock_guard still(walk.mutex);
            return running(walk.states[*c], order);
          };
          return evaluator->evaluate(designs[order.designs[position]], wanted, test, &out);
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
            remote->evaluate(slot - threads, position, keys, combinations, reached_then, out, remote_unproven);
        left_out_remote += static_cast<int64_t>(out.size());
        return points;
      };
      std::unique_lock lock(walk.mutex);
      // Evaluates the design at `position`, called and returning with the lock held.
      walk.take_designs(
          lock,
          [&](size_t position) {
            std::vector<size_t> running_now;
            for (size_t c = 0; c < combos.size(); ++c)
              if (running(walk.states[c], order)) running_now.push_back(c);
            const std::optional<AnswerThresholds> reached_then =
                leaving_out ? std::optional<AnswerThresholds>(reached.now()) : std::nullopt;
            lock.unlock();

            // The points of the combinations running now: found in the results file, or evaluated.
            const hw::Design& design = designs[order.designs[position]];
            const DesignPoints split = design_points(design, running_now, combos, store.at_start());
            std::vector<PointOutcome> points;
            std::vector<LeftOutPoint> out;
            if (!split.wanted.empty()) points = evaluate(position, split, reached_then, out);
            store.commit(points);

            lock.lock();
            for (const auto& [c, score] : split.resumed) walk.slot(position, c) = {true, false, score};
            // A point left out has no score; the exhaustive search, the only one that leaves points out, visits
            // every bucket whatever their scores.
            for (const LeftOutPoint& p : out) {
              walk.slot(position, *split.combination_of(p.key)) = {true, true, std::nullopt};
              left_out_feasible += p.feasible ? 1 : 0;
            }
            left_out += static_cast<int64_t>(out.size());
            for (const PointOutcome& p : points) {
              const size_t c = *split.combination_of(p.key);
              walk.slot(position, c) = {true, true, rule_score(p.feasible, p.score)};
              if (leaving_out) reached.add(p, c);
              if (p.feasible && (!best_so_far || better(p, *best_so_far))) {
                best_so_far = p;
                progress.set_best(best_text(p));
              }
            }
            evaluated += static_cast<int64_t>(points.size());
            const int64_t buckets_finished = walk.finish_design(position);
            progress.advance(q.exhaustive ? static_cast<int64_t>(points.size() + out.size() + split.resumed.size())
                                          : buckets_finished);
            store.keep(points);
            walk.changed.notify_all();
          },
          evaluator ? &sharing : nullptr);
      unproven += evaluator ? evaluator->unproven_passes() : remote_unproven;
    });
    if (!q.exhaustive) progress.set_total(static_cast<int64_t>(walk.frontier));
    progress.finish();
  }
  sharing.set_on_post({});
  const int64_t remote_threads = remote ? remote->slots() : 0;
  remote.reset();  // the other ranks stop here: the baselines run on this one

  // The answer replays the stop rule over the scores the walk knew: those of the points stored in the results
  // file and those evaluated, so that a resumed run decides as a fresh one. The points it shows in full are
  // read back from the results file, or evaluated again (evaluation is deterministic, and the caches give
  // what a fresh solve gives) and taken through their record's text as stored points are.
  auto score = [&](size_t position, size_t c) {
    const Slot& s = walk.slot(position, c);
    if (!s.known) throw std::logic_error("search: a point the answer needs was never evaluated");
    return s.score;
  };
  auto full_points = [&](const std::vector<PointOutcome>& outlines) {
    std::vector<std::string> keys;
    for (const PointOutcome& o : outlines) keys.push_back(o.key);
    if (store.has_file()) return store.stored(keys);
    // Each design once, with the keys of all its points shown (the top list and the bests share designs).
    std::vector<DesignValues> shown;
    for (const PointOutcome& o : outlines) shown.push_back(design_values(o.design));
    std::map<std::string, PointOutcome> found;
    Evaluator again(workload, cache);
    for (const hw::Design& design : designs) {
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
  };
  SearchAnswer answer =
      build_answer(q, designs, order, combos, score, store.take_rows(), full_points, settings.top, settings.keep_all);
  answer.feasible_points += left_out_feasible;  // explored (the search is exhaustive), though not evaluated

  // The baseline is evaluated afresh (it is one design) through the same path as every point.
  Evaluator evaluator(workload, cache);
  answer.tpuv4_baseline = best_feasible(evaluator.evaluate(tpuv4_design(q), [](const std::string&) { return true; }));
  answer.baselines = compute_baselines(q, answer.best, answer.tpuv4_baseline, workload, cache, threads,
                                       stats ? &stats->baseline_times : nullptr, &argmins);

  if (stats) {
    count_walk_points(walk, answer, *stats);
    stats->points_evaluated = evaluated;
    stats->points_left_out = left_out;
    stats->points_left_out_remote = left_out_remote;
    stats->schedule_hits = cache.hits();
    stats->schedule_misses = cache.misses();
    stats->unproven_passes = unproven;
    stats->remote_threads = remote_threads;
    stats->elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return answer;
}

}  // namespace phaze::search
