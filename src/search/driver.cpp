#include "search/driver.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

#include "hw/area.h"
#include "hw/presets.h"
#include "search/evaluate.h"
#include "search/question_json.h"
#include "search/results_file.h"
#include "search/schedule_cache.h"
#include "util/file_lock.h"
#include "util/run_on_threads.h"

namespace phaze::search {

namespace {

std::string best_text(const PointOutcome& p) {
  const hw::Architecture& a = p.design;
  return fmt::format("{:.4g} samples/s ({}x{}x{} TC, {}x{} VC, {} MiB GLB, {} GiB HBM, mbs {}, rc {})", p.score,
                     a.num_tc, a.tc_width, a.tc_depth, a.num_vc, a.vc_width, a.glb_bytes >> 20, a.hbm_bytes >> 30,
                     p.micro_batch, p.recompute ? "on" : "off");
}

}  // namespace

hw::Design tpuv4_design(const SearchQuestion& question) {
  hw::Design d;
  d.arch = point_architecture(question, hw::tpuv4_like());
  d.area_um2 = hw::area_um2(d.arch);
  return d;
}

namespace {

void accumulate_per_model(SearchAnswer& answer, const PointOutcome& point) {
  for (size_t m = 0; m < answer.best_per_model.size() && m < point.models.size(); ++m) {
    if (!point.models[m].feasible) continue;
    auto& best = answer.best_per_model[m];
    if (!best || better_for_model(point, *best, m)) best = point;
  }
}

}  // namespace

void accumulate(SearchAnswer& answer, const PointOutcome& point, int64_t top) {
  if (point.feasible) {
    ++answer.feasible_points;
    if (!answer.best || better(point, *answer.best)) answer.best = point;
    if (top > 0) {
      // One entry per design (chip and HBM size), with its best micro-batch and recomputation setting.
      const auto same = std::find_if(answer.top.begin(), answer.top.end(),
                                     [&](const PointOutcome& p) { return same_design(p.design, point.design); });
      if (same != answer.top.end()) {
        if (!better(point, *same)) return accumulate_per_model(answer, point);
        answer.top.erase(same);
      }
      auto at = std::upper_bound(answer.top.begin(), answer.top.end(), point, better);
      if (at - answer.top.begin() < top) {
        answer.top.insert(at, point);
        if (static_cast<int64_t>(answer.top.size()) > top) answer.top.pop_back();
      }
    }
  }
  accumulate_per_model(answer, point);
}

namespace {

/// Designs a thread may be handed beyond the start of the first unfinished bucket (besides the rest of that
/// bucket): enough that one slow design rarely leaves the other threads idle, few enough that the work done
/// past a stop stays small.
constexpr size_t kLookAheadPerThread = 4;

std::string key_of(const hw::Design& design, const Combination& c) {
  hw::Architecture a = design.arch;
  a.hbm_bytes = c.hbm_bytes;
  return point_key(a, c.micro_batch, c.recompute);
}

/// A point's score as the stop rule sees it: nothing when it is infeasible.
std::optional<double> rule_score(bool feasible, double score) {
  return feasible ? std::optional<double>(score) : std::nullopt;
}

/// Scores by point key.
using ScoreMap = std::unordered_map<std::string, std::optional<double>>;

/// What the walk over the designs knows of one point.
struct Slot {
  bool known = false;
  bool evaluated = false;  ///< by this run; otherwise found in the results file
  std::optional<double> score;
};

/// The positions (in visiting order) a thread takes at once, in the order they are handed out. The bucket
/// search hands out one design at a time in visiting order, as its stop rule needs. The exhaustive search,
/// whose answer does not depend on the order, hands out all designs with the same tensor cores (count and
/// systolic array) together, one GLB size after another per vector-core configuration: their GEMM estimates
/// are shared by one estimator, and designs that differ only in a GLB larger than every tile meet the same
/// layer schedules while the schedule cache still holds them.
std::vector<std::vector<size_t>> work_units(const std::vector<hw::Design>& designs, const BucketOrder& order,
                                            bool exhaustive) {
  std::vector<std::vector<size_t>> units;
  if (!exhaustive) {
    for (size_t p = 0; p < order.designs.size(); ++p) units.push_back({p});
    return units;
  }
  std::vector<size_t> positions(order.designs.size());
  std::iota(positions.begin(), positions.end(), size_t{0});
  auto group = [&](size_t p) {
    const hw::Architecture& a = designs[order.designs[p]].arch;
    return std::tuple(a.tc_width, a.tc_depth, a.num_tc);
  };
  auto inside = [&](size_t p) {
    const hw::Architecture& a = designs[order.designs[p]].arch;
    return std::tuple(a.num_vc, a.vc_width, a.glb_bytes);
  };
  std::stable_sort(positions.begin(), positions.end(),
                   [&](size_t a, size_t b) { return std::pair(group(a), inside(a)) < std::pair(group(b), inside(b)); });
  for (size_t k = 0; k < positions.size(); ++k) {
    if (k == 0 || group(positions[k]) != group(positions[k - 1])) units.emplace_back();
    units.back().push_back(positions[k]);
  }
  return units;
}

/// The designs in visiting order, handed out to threads in work units, and the buckets finished so far.
/// Every member is guarded by `mutex`.
struct Walk {
  const BucketOrder& order;
  std::vector<std::vector<size_t>> units;
  size_t combinations;
  std::optional<int64_t> window;  ///< nothing: exhaustive
  size_t look_ahead;              ///< designs beyond the start of the first unfinished bucket
  std::mutex mutex;
  std::condition_variable changed;
  size_t next = 0;                       ///< the next work unit to hand out
  size_t frontier = 0;                   ///< the first bucket not finished
  std::vector<size_t> finished_designs;  ///< per bucket
  std::vector<Slot> slots;               ///< [position · combinations + combination]
  std::vector<CombinationState> states;  ///< per combination, updated as buckets finish in visiting order
  std::exception_ptr failure;

  Walk(const BucketOrder& o, std::vector<std::vector<size_t>> u, size_t c, std::optional<int64_t> w, size_t ahead)
      : order(o),
        units(std::move(u)),
        combinations(c),
        window(w),
        look_ahead(ahead),
        finished_designs(o.buckets(), 0),
        slots(o.designs.size() * c),
        states(c) {}

  bool any_running() const {
    return std::any_of(states.begin(), states.end(), [&](const CombinationState& s) { return running(s, order); });
  }
  bool more() const { return !failure && next < units.size() && any_running(); }
  /// Whether the next unit may be handed out now: its positions lie in the first unfinished bucket or the
  /// look-ahead after its start.
  bool next_allowed() const {
    if (!window || frontier >= order.buckets()) return true;
    const size_t limit = std::max(order.start[frontier + 1], order.start[frontier] + look_ahead);
    return std::all_of(units[next].begin(), units[next].end(), [&](size_t p) { return p < limit; });
  }
  Slot& slot(size_t position, size_t combination) { return slots[position * combinations + combination]; }
  /// Counts the design at `position` as finished and finishes the buckets that are now complete, in visiting
  /// order. Returns how many buckets it finished.
  int64_t finish_design(size_t position) {
    ++finished_designs[order.bucket_of(position)];
    const ScoreOf score = [&](size_t p, size_t c) {
      const Slot& s = slot(p, c);
      if (!s.known) throw std::logic_error("search: a bucket finished before all its points were known");
      return s.score;
    };
    int64_t finished = 0;
    while (frontier < order.buckets() && any_running() &&
           finished_designs[frontier] == order.start[frontier + 1] - order.start[frontier]) {
      const auto designs = static_cast<int64_t>(finished_designs[frontier]);
      for (size_t c = 0; c < combinations; ++c)
        if (running(states[c], order))
          finish_bucket(states[c], bucket_maximum(order, frontier, c, score), designs, window);
      ++frontier;
      ++finished;
    }
    return finished;
  }
};

/// Builds the answer from points (`visit_points` calls its argument with each point that may belong to it,
/// any order): replays the stop rule over `scores`, then takes the points of the designs each combination
/// visited.
SearchAnswer build_answer(const SearchQuestion& q, const std::vector<hw::Design>& designs, const BucketOrder& order,
                          const std::vector<Combination>& combos, const ScoreMap& scores,
                          const std::function<void(const std::function<void(PointOutcome&&)>&)>& visit_points,
                          const RunSettings& settings) {
  const std::vector<CombinationState> states = replay(
      order, combos.size(),
      [&](size_t position, size_t c) {
        const auto found = scores.find(key_of(designs[order.designs[position]], combos[c]));
        if (found == scores.end()) throw std::logic_error("search: a point the answer needs was never evaluated");
        return found->second;
      },
      stop_window(q));

  SearchAnswer answer;
  answer.designs = static_cast<int64_t>(designs.size());
  answer.points = static_cast<int64_t>(designs.size() * combos.size());
  answer.buckets = static_cast<int64_t>(order.buckets());
  answer.best_per_model.resize(q.models.size());
  // A point is explored when its design's area bucket is at or above the last bucket its combination visited
  // (buckets are visited from the largest area down).
  std::vector<std::optional<int64_t>> lowest_bucket(combos.size());
  int64_t deepest = 0;
  for (size_t c = 0; c < combos.size(); ++c) {
    const CombinationState& s = states[c];
    answer.combinations.push_back({combos[c], s.buckets_visited, s.designs_visited, s.stop_fired, std::nullopt});
    answer.points_explored += s.designs_visited;
    deepest = std::max(deepest, s.buckets_visited);
    if (s.buckets_visited > 0) {
      const hw::Design& last = designs[order.designs[order.start[static_cast<size_t>(s.buckets_visited - 1)]]];
      lowest_bucket[c] = area_bucket(last.area_um2, q.bucket_um2);
    }
  }
  answer.designs_explored = static_cast<int64_t>(order.start[static_cast<size_t>(deepest)]);

  visit_points([&](PointOutcome&& p) {
    const auto c = static_cast<size_t>(
        std::find(combos.begin(), combos.end(), Combination{p.micro_batch, p.design.hbm_bytes, p.recompute}) -
        combos.begin());
    if (c == combos.size() || !lowest_bucket[c] || area_bucket(p.area_um2, q.bucket_um2) < *lowest_bucket[c]) return;
    accumulate(answer, p, settings.top);
    std::optional<PointOutcome>& best = answer.combinations[c].best;
    if (p.feasible && (!best || better(p, *best))) best = p;
    if (settings.keep_all) answer.all.push_back(std::move(p));
  });
  if (settings.keep_all) std::sort(answer.all.begin(), answer.all.end(), before);
  return answer;
}

}  // namespace

SearchAnswer run_search(const SearchQuestion& q, const RunSettings& settings, RunStats* stats) {
  const auto start = std::chrono::steady_clock::now();
  validate(q);
  const std::vector<hw::Design> designs = search_designs(q);
  const BucketOrder order = bucket_order(designs, q.bucket_um2);
  const std::vector<Combination> combos = combinations(q);
  const Workload workload = prepare_workload(q);
  const int threads = std::max(1, settings.threads);

  // Declared before the database: released only after the connection is closed (util/file_lock.h).
  std::optional<ExclusiveFileLock> db_lock;
  std::unique_ptr<ResultsDb> db;
  ScoreMap stored;  // points of the results file at the start
  auto load_scores = [&] {
    ScoreMap scores;
    for (PointResult& r : db->load_summaries())
      scores.emplace(std::move(r.key), rule_score(r.feasible, r.throughput_samples_per_s));
    return scores;
  };
  if (!settings.db_path.empty()) {
    db = std::make_unique<ResultsDb>(settings.db_path, run_identity(q));
    db_lock.emplace(settings.db_path, "results file");
    stored = load_scores();
  }

  ScheduleCache cache;
  std::vector<PointOutcome> memory;  // without a results file: every point, for the answer
  std::optional<PointOutcome> best_so_far;
  std::atomic<int64_t> evaluated{0}, unproven{0};
  Walk walk(order, work_units(designs, order, q.exhaustive), combos.size(), stop_window(q),
            kLookAheadPerThread * static_cast<size_t>(threads));

  {
    // The bucket search counts buckets, whose total is only a bound; the exhaustive search counts points.
    Progress progress = q.exhaustive ? Progress(static_cast<int64_t>(designs.size() * combos.size()), settings.progress)
                                     : Progress(static_cast<int64_t>(order.buckets()), settings.progress, "buckets",
                                                /*total_is_bound=*/true);
    auto work = [&] {
      try {
        Evaluator evaluator(workload, cache);
        std::unique_lock lock(walk.mutex);
        // Evaluates the design at `position`, called and returning with the lock held.
        auto visit = [&](size_t position) {
          std::vector<size_t> running_now;
          for (size_t c = 0; c < combos.size(); ++c)
            if (running(walk.states[c], order)) running_now.push_back(c);
          lock.unlock();

          // The points of the combinations running now: found in the results file, or evaluated.
          const hw::Design& design = designs[order.designs[position]];
          std::vector<std::pair<size_t, std::optional<double>>> resumed;
          std::vector<std::pair<std::string, size_t>> wanted;
          for (size_t c : running_now) {
            std::string key = key_of(design, combos[c]);
            if (const auto found = stored.find(key); found != stored.end()) {
              resumed.emplace_back(c, found->second);
            } else {
              wanted.emplace_back(std::move(key), c);
            }
          }
          auto combination_of = [&](const std::string& key) {
            const auto w = std::find_if(wanted.begin(), wanted.end(), [&](const auto& k) { return k.first == key; });
            return w == wanted.end() ? std::nullopt : std::optional<size_t>(w->second);
          };
          std::vector<PointOutcome> points;
          if (!wanted.empty())
            points =
                evaluator.evaluate(design, [&](const std::string& key) { return combination_of(key).has_value(); });
          if (db && !points.empty()) {
            std::vector<PointResult> batch;
            for (const PointOutcome& p : points) batch.push_back({p.key, to_record(p), p.feasible, p.score});
            db->put_batch(batch);
          }

          lock.lock();
          for (const auto& [c, score] : resumed) walk.slot(position, c) = {true, false, score};
          for (PointOutcome& p : points) {
            walk.slot(position, *combination_of(p.key)) = {true, true, rule_score(p.feasible, p.score)};
            if (p.feasible && (!best_so_far || better(p, *best_so_far))) {
              best_so_far = p;
              progress.set_best(best_text(p));
            }
            if (!db) memory.push_back(std::move(p));
          }
          evaluated += static_cast<int64_t>(points.size());
          const int64_t buckets_finished = walk.finish_design(position);
          progress.advance(q.exhaustive ? static_cast<int64_t>(points.size() + resumed.size()) : buckets_finished);
          walk.changed.notify_all();
        };
        while (true) {
          walk.changed.wait(lock, [&] { return !walk.more() || walk.next_allowed(); });
          if (!walk.more()) break;
          for (const size_t position : walk.units[walk.next++]) visit(position);
        }
        unproven += evaluator.unproven_passes();
      } catch (...) {
        std::lock_guard lock(walk.mutex);
        if (!walk.failure) walk.failure = std::current_exception();
        walk.changed.notify_all();
      }
    };
    run_on_threads(threads, work);  // `work` keeps its failure in the walk, to wake the waiting threads
    if (walk.failure) std::rethrow_exception(walk.failure);
    if (!q.exhaustive) progress.set_total(static_cast<int64_t>(walk.frontier));
    progress.finish();
  }

  // The answer replays the stop rule over the points as stored, so that a resumed run decides as a fresh one.
  SearchAnswer answer;
  if (db) {
    answer = build_answer(
        q, designs, order, combos, load_scores(),
        [&](const std::function<void(PointOutcome &&)>& take) {
          db->for_each([&](PointResult&& r) { take(from_record(r.key, r.record)); });
        },
        settings);
  } else {
    ScoreMap scores;
    for (const PointOutcome& p : memory) scores.emplace(p.key, rule_score(p.feasible, p.score));
    answer = build_answer(
        q, designs, order, combos, scores,
        [&](const std::function<void(PointOutcome &&)>& take) {
          // The same text round trip as through the results file, so both paths give the same answer.
          for (const PointOutcome& p : memory) take(as_recorded(p));
        },
        settings);
  }

  // The baseline is evaluated afresh (it is one design) through the same path as every point.
  Evaluator evaluator(workload, cache);
  answer.tpuv4_baseline = best_feasible(evaluator.evaluate(tpuv4_design(q), [](const std::string&) { return true; }));
  answer.baselines = compute_baselines(q, answer.best, answer.tpuv4_baseline, workload, cache, threads,
                                       stats ? &stats->baseline_times : nullptr);

  if (stats) {
    stats->points_resumed = 0;
    stats->points_past_stop = 0;
    for (size_t position = 0; position < order.designs.size(); ++position)
      for (size_t c = 0; c < combos.size(); ++c) {
        const Slot& s = walk.slot(position, c);
        if (!s.known) continue;
        if (!s.evaluated) ++stats->points_resumed;
        if (s.evaluated && static_cast<int64_t>(order.bucket_of(position)) >= answer.combinations[c].buckets_visited)
          ++stats->points_past_stop;
      }
    stats->points_evaluated = evaluated;
    stats->schedule_hits = cache.hits();
    stats->schedule_misses = cache.misses();
    stats->unproven_passes = unproven;
    stats->elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return answer;
}

}  // namespace phaze::search
