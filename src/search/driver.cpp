#include "search/driver.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <mutex>
#include <thread>
#include <unordered_set>

#include "hw/area.h"
#include "hw/presets.h"
#include "io/results_db.h"
#include "search/evaluate.h"
#include "search/schedule_cache.h"

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

bool same_design(const hw::Architecture& a, const hw::Architecture& b) {
  return a.num_tc == b.num_tc && a.tc_width == b.tc_width && a.tc_depth == b.tc_depth && a.num_vc == b.num_vc &&
         a.vc_width == b.vc_width && a.glb_bytes == b.glb_bytes && a.hbm_bytes == b.hbm_bytes;
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

SearchAnswer run_search(const SearchQuestion& q, const RunSettings& settings, RunStats* stats) {
  const auto start = std::chrono::steady_clock::now();
  validate(q);
  const std::vector<hw::Design> designs = search_designs(q);
  const Workload workload = prepare_workload(q);
  const int64_t per_design =
      static_cast<int64_t>(q.micro_batches.size() * q.hbm_bytes.size() * recompute_values(q.recompute).size());

  std::unique_ptr<io::ResultsDb> db;
  std::unordered_set<std::string> done;
  if (!settings.db_path.empty()) {
    db = std::make_unique<io::ResultsDb>(settings.db_path, run_identity(q));
    for (std::string& key : db->load_keys()) done.insert(std::move(key));
  }

  ScheduleCache cache;
  std::vector<PointOutcome> memory;  // without a results file: every point, for the answer
  std::mutex memory_mutex;
  std::optional<PointOutcome> best_so_far;
  std::exception_ptr failure;
  std::atomic<bool> stop{false};
  std::atomic<int64_t> evaluated{0}, unproven{0};

  {
    const int64_t total = static_cast<int64_t>(designs.size()) * per_design;
    Progress progress(total, settings.progress);
    progress.advance(static_cast<int64_t>(done.size()));
    const int threads = std::max(1, settings.threads);
    auto work = [&](int k) {
      try {
        Evaluator evaluator(workload, cache);
        auto wanted = [&](const std::string& key) { return !done.contains(key); };
        for (size_t i = static_cast<size_t>(k); i < designs.size() && !stop; i += static_cast<size_t>(threads)) {
          std::vector<PointOutcome> points = evaluator.evaluate(designs[i], wanted);
          if (points.empty()) continue;
          if (db) {
            std::vector<io::PointResult> batch;
            for (const PointOutcome& p : points) batch.push_back({p.key, to_record(p), p.feasible, p.score});
            db->put_batch(batch);
          }
          std::lock_guard lock(memory_mutex);
          for (PointOutcome& p : points) {
            if (p.feasible && (!best_so_far || better(p, *best_so_far))) {
              best_so_far = p;
              progress.set_best(best_text(p));
            }
            if (!db) memory.push_back(std::move(p));
          }
          evaluated += static_cast<int64_t>(points.size());
          progress.advance(static_cast<int64_t>(points.size()));
        }
        unproven += evaluator.unproven_passes();
      } catch (...) {
        std::lock_guard lock(memory_mutex);
        if (!failure) failure = std::current_exception();
        stop = true;
      }
    };
    std::vector<std::thread> pool;
    for (int k = 1; k < threads; ++k) pool.emplace_back(work, k);
    work(0);
    for (std::thread& t : pool) t.join();
    if (failure) std::rethrow_exception(failure);
    progress.finish();
  }

  SearchAnswer answer;
  answer.designs = static_cast<int64_t>(designs.size());
  answer.points = static_cast<int64_t>(designs.size()) * per_design;
  answer.best_per_model.resize(q.models.size());
  auto take = [&](const PointOutcome& p) {
    accumulate(answer, p, settings.top);
    if (settings.keep_all) answer.all.push_back(p);
  };
  if (db) {
    db->for_each([&](io::PointResult&& r) { take(from_record(r.key, r.record)); });
  } else {
    // The same text round trip as through the results file, so both paths give the same answer.
    for (const PointOutcome& p : memory) take(from_record(p.key, nlohmann::json::parse(to_record(p).dump())));
  }
  if (settings.keep_all) std::sort(answer.all.begin(), answer.all.end(), before);

  // The baseline is evaluated afresh (it is one design) through the same path as every point.
  Evaluator evaluator(workload, cache);
  for (PointOutcome& p : evaluator.evaluate(tpuv4_design(q), [](const std::string&) { return true; })) {
    p = from_record(p.key, nlohmann::json::parse(to_record(p).dump()));
    if (p.feasible && (!answer.tpuv4_baseline || better(p, *answer.tpuv4_baseline))) answer.tpuv4_baseline = p;
  }
  answer.baselines =
      compute_baselines(q, answer.best, answer.tpuv4_baseline, cache, stats ? &stats->baseline_times : nullptr);

  if (stats) {
    stats->points_resumed = static_cast<int64_t>(done.size());
    stats->points_evaluated = evaluated;
    stats->schedule_hits = cache.hits();
    stats->schedule_misses = cache.misses();
    stats->unproven_passes = unproven;
    stats->elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return answer;
}

}  // namespace phaze::search
