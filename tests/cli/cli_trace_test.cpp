// `--trace FILE` of schedule, predict and search: Chrome trace-event JSON whose tracks are the cores or the
// pipeline stages, whose events never overlap on a track, and whose last event ends at the makespan, the
// iteration time or the time per batch that the same command prints as JSON.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/file_text.h"
#include "support/run_phaze.h"
#include "support/temp_dir.h"

namespace {

using nlohmann::json;
using phaze_test::file_text;
using phaze_test::quoted;
using phaze_test::run_phaze;
using phaze_test::TempDir;

const std::string kTinyModel = std::string(PHAZE_TEST_DATA) + "/hf/tiny-gpt2/config.json";

struct Track {
  std::string name;
  std::vector<std::pair<double, double>> events;  // start and end, microseconds
};

/// The trace's tracks by (process, thread), checking the format on the way: metadata names every track,
/// every complete event has a non-negative duration. Returns the end of the last event in seconds.
double read_trace(const json& trace, std::map<std::pair<int, int>, Track>& tracks, std::set<std::string>& names) {
  EXPECT_EQ(trace["displayTimeUnit"], "ms");
  double end_us = 0;
  for (const json& e : trace["traceEvents"]) {
    const auto key = std::pair(e["pid"].get<int>(), e.value("tid", 0));
    if (e["ph"] == "M") {
      if (e["name"] == "thread_name") tracks[key].name = e["args"]["name"];
      continue;
    }
    EXPECT_EQ(e["ph"], "X");
    const double ts = e["ts"].get<double>(), dur = e["dur"].get<double>();
    EXPECT_GE(dur, 0);
    tracks[key].events.emplace_back(ts, ts + dur);
    names.insert(e["name"].get<std::string>());
    end_us = std::max(end_us, ts + dur);
  }
  for (auto& [key, track] : tracks) {
    EXPECT_FALSE(track.name.empty()) << key.first << "/" << key.second;
    std::sort(track.events.begin(), track.events.end());
    for (size_t i = 1; i < track.events.size(); ++i)
      EXPECT_GE(track.events[i].first, track.events[i - 1].second * (1 - 1e-12) - 1e-9) << track.name;
  }
  return end_us * 1e-6;
}

TEST(CliTrace, ScheduleTraceHasACoreTrackPerCoreAndEndsAtTheMakespan) {
  TempDir dir;
  const std::string trace = dir.file("layer.json");
  const auto r =
      run_phaze("schedule --model llama2-7b --tp 1 --mbs 1 --seq 512 --json --no-cache --trace " + quoted(trace));
  ASSERT_EQ(r.status, 0) << r.err;
  const json out = phaze_test::parse_json(r);
  std::map<std::pair<int, int>, Track> tracks;
  std::set<std::string> names;
  const double end_s = read_trace(json::parse(file_text(trace)), tracks, names);
  EXPECT_NEAR(end_s, out["makespan_s"].get<double>(), 1e-12);
  // The TPUv4-like chip: 8 tensor cores and 2 vector cores, one track each.
  EXPECT_EQ(tracks.size(), 10u);
  // Every operator with work is on some core.
  for (const json& op : out["ops"])
    if (op["unit"] != "none") {
      EXPECT_TRUE(names.contains(op["id"].get<std::string>())) << op["id"];
    }
}

TEST(CliTrace, PredictTraceHasAStageTrackPerStageAndEndsAtTheIterationTime) {
  TempDir dir;
  const std::string trace = dir.file("iteration.json");
  const auto r = run_phaze(
      "predict --model gpt3-175b --system dgx-a100-80gb --tp 8 --pp 8 --dp 2 --mbs 1 --global-batch 1536 --gpus 128 "
      "--vp 2 --json --trace " +
      quoted(trace));
  ASSERT_EQ(r.status, 0) << r.err;
  const json out = phaze_test::parse_json(r);
  std::map<std::pair<int, int>, Track> tracks;
  std::set<std::string> names;
  const double end_s = read_trace(json::parse(file_text(trace)), tracks, names);
  EXPECT_NEAR(end_s, out["iteration_time_s"].get<double>(), 1e-9 * end_s);
  EXPECT_EQ(tracks.size(), 17u);  // 8 stages, each with its communication, and the gradients' track
  // 1,536 / 2 = 768 micro-batches a pipeline: the first and last 32 one by one, by phase, the others as one
  // event per track.
  for (const char* phase : {"forward", "recompute", "backward", "tensor-parallel collectives", "pipeline sends"})
    for (int i : {1, 32, 737, 768}) EXPECT_TRUE(names.contains(fmt::format("{} {}", phase, i))) << phase << " " << i;
  EXPECT_FALSE(names.contains("forward 33"));
  EXPECT_FALSE(names.contains("context-parallel exchange 1"));  // c = 1: nothing to draw
  EXPECT_TRUE(names.contains("micro-batches 33–736"));
  EXPECT_TRUE(names.contains("optimizer step"));
}

TEST(CliTrace, SearchTraceDrawsEachModelOfTheBestPointAndEndsAtItsTimePerBatch) {
  TempDir dir;
  const std::string trace = dir.file("best.json");
  const auto r = run_phaze(
      fmt::format("search --model {} --model llama2-7b --seq 64,128 --tc 1,2 --vc 1 --width 8 --depth 8,16 --glb-mib 2 "
                  "--hbm 32 --devices 16 --global-batch 32 --json --trace {}",
                  quoted(kTinyModel), quoted(trace)));
  ASSERT_EQ(r.status, 0) << r.err;
  const json out = phaze_test::parse_json(r);
  const json trace_json = json::parse(file_text(trace));
  for (int pid : {1, 2}) {
    json one = json::object();
    one["displayTimeUnit"] = "ms";
    one["traceEvents"] = json::array();
    for (const json& e : trace_json["traceEvents"])
      if (e["pid"] == pid) one["traceEvents"].push_back(e);
    std::map<std::pair<int, int>, Track> tracks;
    std::set<std::string> names;
    const double end_s = read_trace(one, tracks, names);
    const json& model = out["best"]["models"][pid - 1];
    EXPECT_NEAR(end_s, model["time_per_batch_s"].get<double>(), 1e-9 * end_s);
    EXPECT_EQ(tracks.size(), model["plan"]["stages"].size() + 1);
    // A slot holds the stage's own passes, named by phase and micro-batch.
    EXPECT_TRUE(names.contains("forward 1"));
    EXPECT_TRUE(names.contains("backward 1"));
  }
}

TEST(CliTrace, AnUnwritableTracePathExitsTwoNamingTheOption) {
  const std::string search = "search --model " + quoted(kTinyModel) + " --tc 1 --vc 1 --width 8 --depth 8 --glb-mib 2";
  for (const std::string& command :
       {std::string("schedule --model llama2-7b --seq 128"),
        std::string("predict --model gpt2-xl --system dgx-a100-80gb --global-batch 8"), search})
    phaze_test::expect_input_error(run_phaze(command + " --trace /nonexistent-dir/trace.json"), "--trace");
}

}  // namespace
