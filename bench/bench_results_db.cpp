// Search results file: writing batches of points (one transaction each) as the search does, and what a
// resumed run pays: opening a file of 100,000 points (with its integrity check), loading its keys, loading
// every record, and single lookups. Records are shaped like the search's: a design, a micro-batch size,
// recomputation, HBM size and a placement of a few stages, about 500 bytes of JSON.

#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "search/results_file.h"

namespace {

using phaze::search::PointResult;
using phaze::search::ResultsDb;

constexpr const char* kIdentity = R"({"cost_model":"v3","models":["gpt3-175b"],"mbs":[1,2,4,8],"hbm_gib":[16,32,64]})";

std::string key(int64_t i) {
  return fmt::format("design={:05d} mbs={} recompute={} hbm_gib={}", i / 24, 1 << (i % 4), (i / 4) % 2,
                     16 << (i / 8 % 3));
}

PointResult search_point(int64_t i) {
  const bool feasible = i % 5 != 0;
  nlohmann::json stages = nlohmann::json::array();
  for (int s = 0; s < 4; ++s) {
    stages.push_back({{"nodes", {3 * s, 3 * s + 1, 3 * s + 2}}, {"devicesForStage", 8}, {"latency_s", 0.0123 * s}});
  }
  nlohmann::json record = {
      {"design",
       {{"num_tc", 8},
        {"tc_width", 128},
        {"tc_depth", 128},
        {"num_vc", 2},
        {"vc_width", 128},
        {"glb_bytes", 134217728},
        {"hbm_bytes", 34359738368},
        {"area_um2", 278826676.31216}}},
      {"mbs", 1 << (i % 4)},
      {"recompute", (i / 4) % 2 == 1},
      {"feasible", feasible},
      {"throughput_samples_per_s", feasible ? 1234.5 + static_cast<double>(i % 997) : 0.0},
      {"placement",
       {{"stages", stages}, {"dataParallelDegree", 16}, {"tensorParallelDegree", 8}, {"finalTimePerBatch", 56.68}}}};
  return {key(i), std::move(record), feasible, feasible ? 1234.5 + static_cast<double>(i % 997) : 0.0};
}

std::string db_path(const char* name) {
  return (std::filesystem::temp_directory_path() / fmt::format("phaze_bench_{}_{}.sqlite", name, ::getpid())).string();
}

void remove_db(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
}

/// A file with `n` points, written in batches of 1000.
std::string filled_db(int64_t n) {
  const std::string path = db_path(fmt::format("filled_{}", n).c_str());
  remove_db(path);
  ResultsDb db(path, kIdentity);
  std::vector<PointResult> batch;
  for (int64_t i = 0; i < n; ++i) {
    batch.push_back(search_point(i));
    if (batch.size() == 1000 || i + 1 == n) {
      db.put_batch(batch);
      batch.clear();
    }
  }
  return path;
}

/// One batch of new points per iteration, into a file that grows as a search's does.
void BM_PutBatch(benchmark::State& state) {
  const int64_t batch_size = state.range(0);
  const std::string path = db_path("put");
  remove_db(path);
  {
    ResultsDb db(path, kIdentity);
    std::vector<PointResult> batch;
    for (int64_t i = 0; i < batch_size; ++i) batch.push_back(search_point(i));
    int64_t next = 0;
    for (auto _ : state) {
      state.PauseTiming();
      for (PointResult& p : batch) p.key = key(next++);
      state.ResumeTiming();
      if (db.put_batch(batch) != batch_size) state.SkipWithError("points were not new");
    }
    state.counters["points_in_file"] = static_cast<double>(db.count());
  }
  state.SetItemsProcessed(state.iterations() * batch_size);
  state.counters["record_bytes"] = static_cast<double>(search_point(0).record.dump().size());
  remove_db(path);
}
BENCHMARK(BM_PutBatch)->Arg(100)->Arg(1000)->Arg(10000)->UseRealTime()->Unit(benchmark::kMillisecond);

constexpr int64_t kResumePoints = 100000;

void BM_Open100kPoints(benchmark::State& state) {
  const std::string path = filled_db(kResumePoints);
  state.counters["file_MiB"] = static_cast<double>(std::filesystem::file_size(path)) / (1 << 20);
  for (auto _ : state) {
    ResultsDb db(path, kIdentity);
    benchmark::DoNotOptimize(db.path().data());
  }
  remove_db(path);
}
BENCHMARK(BM_Open100kPoints)->Unit(benchmark::kMillisecond);

void BM_LoadKeys100kPoints(benchmark::State& state) {
  const std::string path = filled_db(kResumePoints);
  {
    ResultsDb db(path, kIdentity);
    for (auto _ : state) benchmark::DoNotOptimize(db.load_keys().data());
  }
  state.SetItemsProcessed(state.iterations() * kResumePoints);
  remove_db(path);
}
BENCHMARK(BM_LoadKeys100kPoints)->Unit(benchmark::kMillisecond);

void BM_All100kPoints(benchmark::State& state) {
  const std::string path = filled_db(kResumePoints);
  {
    ResultsDb db(path, kIdentity);
    for (auto _ : state) benchmark::DoNotOptimize(db.all().data());
  }
  state.SetItemsProcessed(state.iterations() * kResumePoints);
  remove_db(path);
}
BENCHMARK(BM_All100kPoints)->Unit(benchmark::kMillisecond);

void BM_FindIn100kPoints(benchmark::State& state) {
  const std::string path = filled_db(kResumePoints);
  {
    ResultsDb db(path, kIdentity);
    int64_t i = 0;
    for (auto _ : state) {
      benchmark::DoNotOptimize(db.find(key(i)));
      i = (i + 7919) % kResumePoints;
    }
  }
  state.SetItemsProcessed(state.iterations());
  remove_db(path);
}
BENCHMARK(BM_FindIn100kPoints)->Unit(benchmark::kMicrosecond);

void BM_Best10Of100kPoints(benchmark::State& state) {
  const std::string path = filled_db(kResumePoints);
  {
    ResultsDb db(path, kIdentity);
    for (auto _ : state) benchmark::DoNotOptimize(db.best(10).data());
  }
  remove_db(path);
}
BENCHMARK(BM_Best10Of100kPoints)->Unit(benchmark::kMicrosecond);

}  // namespace
