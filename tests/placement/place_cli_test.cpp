// End-to-end tests of `phaze place` (placement.md, "Output"): run the binary, check exit status, stdout,
// the -o file and stderr. The expected numbers are the hand-worked examples of planner_examples_test.cpp.

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "support/run_phaze.h"
#include "support/temp_dir.h"

namespace {

using phaze_test::chomp;
using phaze_test::expect_input_error;
using phaze_test::expect_one_line;
using phaze_test::quoted;
using phaze_test::run_phaze;
using phaze_test::RunResult;

using nlohmann::json;

std::string data_path(const std::string& relative) {
  return fmt::format("{}/placement/{}", PHAZE_TEST_DATA, relative);
}

using phaze_test::parse_json;

using phaze_test::TempDir;

json node(int64_t id, double params, double acts, double fw, double bw, bool tp = false) {
  return json{{"id", id},
              {"parameterSize", params},
              {"activationSize", acts},
              {"optimalLatencyFw", fw},
              {"optimalLatencyBw", bw},
              {"isTensorParallelized", tp}};
}

json edge(int64_t from, int64_t to, double bytes) {
  return json{{"sourceId", from}, {"destId", to}, {"communicationCost", bytes}};
}

/// Checks the documented keys and the worked example's answer: one stage {0,1,2} on 1 device, d = 4, t = 1,
/// time 9*2 + 4*3*30/(10*4) = 27.
void expect_example_result(const json& j) {
  ASSERT_TRUE(j.is_object());
  for (const char* key :
       {"stages", "dataParallelDegree", "tensorParallelDegree", "finalTimePerBatch", "fixedStrategyTimePerBatch"})
    ASSERT_TRUE(j.contains(key)) << "missing key " << key << ": " << j.dump();
  ASSERT_TRUE(j["stages"].is_array());
  ASSERT_EQ(j["stages"].size(), 1u);
  EXPECT_EQ(j["stages"][0]["nodes"], json::array({0, 1, 2}));
  EXPECT_EQ(j["stages"][0]["devicesForStage"], 1);
  EXPECT_EQ(j["dataParallelDegree"], 4);
  EXPECT_EQ(j["tensorParallelDegree"], 1);
  ASSERT_TRUE(j["finalTimePerBatch"].is_number());
  EXPECT_DOUBLE_EQ(j["finalTimePerBatch"].get<double>(), 27.0);
}

TEST(PlacementCli, ExampleToStdout) {
  const RunResult r = run_phaze("place " + quoted(data_path("example.json")));
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = parse_json(r.out);
  expect_example_result(j);
  // Hand-set p = 2, t = 1, d = 2, L = 2: stages {0} (load 4) and {1,2} (load 7): 7*(4+1) + 4*1*10/20 = 37.
  ASSERT_TRUE(j["fixedStrategyTimePerBatch"].is_number()) << j.dump();
  EXPECT_DOUBLE_EQ(j["fixedStrategyTimePerBatch"].get<double>(), 37.0);
}

TEST(PlacementCli, OutputFile) {
  TempDir dir;
  const std::string out = dir.file("out.json");
  const RunResult r = run_phaze("place " + quoted(data_path("example.json")) + " -o " + quoted(out));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.find("finalTimePerBatch"), std::string::npos) << "result went to stdout too: " << r.out;
  ASSERT_TRUE(std::filesystem::exists(out));
  std::ifstream in(out);
  std::stringstream text;
  text << in.rdbuf();
  const json j = parse_json(text.str());
  expect_example_result(j);
  EXPECT_DOUBLE_EQ(j["fixedStrategyTimePerBatch"].get<double>(), 37.0);

  // The long form writes the same.
  const std::string out2 = dir.file("out2.json");
  const RunResult r2 = run_phaze("place --output " + quoted(out2) + " " + quoted(data_path("example.json")));
  ASSERT_EQ(r2.status, 0) << r2.err;
  std::ifstream in2(out2);
  std::stringstream text2;
  text2 << in2.rdbuf();
  EXPECT_EQ(parse_json(text2.str()), j);
}

// M = 20 while one node needs 2*10 + 5 = 25: nothing fits. Infeasible is an answer: exit 0.
TEST(PlacementCli, InfeasibleInputExitsZeroWithNulls) {
  const RunResult r = run_phaze("place " + quoted(data_path("infeasible_memory.json")));
  EXPECT_EQ(r.status, 0) << r.err;
  const json j = parse_json(r.out);
  ASSERT_TRUE(j.contains("stages")) << r.out;
  EXPECT_TRUE(j["stages"].is_array());
  EXPECT_TRUE(j["stages"].empty());
  ASSERT_TRUE(j.contains("finalTimePerBatch")) << r.out;
  EXPECT_TRUE(j["finalTimePerBatch"].is_null());
  ASSERT_TRUE(j.contains("fixedStrategyTimePerBatch")) << r.out;
  EXPECT_TRUE(j["fixedStrategyTimePerBatch"].is_null());
  expect_one_line(r.err);
}

// p*t*d = 2*1*3 = 6 > K = 4: the hand-set time is null, the main result (27) is still written.
TEST(PlacementCli, HandSetNeedingTooManyDevices) {
  const RunResult r = run_phaze("place " + quoted(data_path("hand_set_too_many_devices.json")));
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = parse_json(r.out);
  expect_example_result(j);
  EXPECT_TRUE(j["fixedStrategyTimePerBatch"].is_null()) << r.out;
}

// fixedTMPC = 2 while the input only has width 1.
TEST(PlacementCli, HandSetWidthNotInInput) {
  const RunResult r = run_phaze("place " + quoted(data_path("hand_set_width_missing.json")));
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = parse_json(r.out);
  expect_example_result(j);
  EXPECT_TRUE(j["fixedStrategyTimePerBatch"].is_null()) << r.out;
}

TEST(PlacementCli, MalformedJsonExitsTwo) {
  const RunResult r = run_phaze("place " + quoted(data_path("malformed.json")));
  expect_input_error(r, "malformed.json");
}

TEST(PlacementCli, MissingKeyExitsTwo) {
  const RunResult r = run_phaze("place " + quoted(data_path("missing_bandwidth.json")));
  expect_input_error(r, "bandwidth");
}

TEST(PlacementCli, CycleExitsTwo) {
  const RunResult r = run_phaze("place " + quoted(data_path("cycle.json")));
  expect_input_error(r, "cycle");
}

TEST(PlacementCli, MissingInputFileExitsTwo) {
  TempDir dir;
  const std::string missing = dir.file("does_not_exist.json");
  const RunResult r = run_phaze("place " + quoted(missing));
  expect_input_error(r, "does_not_exist.json");
}

TEST(PlacementCli, MissingArgumentIsAnError) {
  const RunResult r = run_phaze("place");
  EXPECT_NE(r.status, 0) << r.out;
}

// Nodes listed out of order with negative ids: the chain is -5 -> 3 -> -7 (fw 1, bw 2, 10 parameter and 5
// activation bytes, 10-byte edges, bandwidth 10), K = 4, N = 8, M = 35. One stage needs 75 and two-node
// stages 2*20 + 10 = 50, so only three single-node stages fit (the first needs 25 + 2*5 = 35). Loads: {-5}
// 1 + (1 + 2) = 4, {3} (1 + 1) + (1 + 2) = 5, {-7} (1 + 1) + 2 = 4; 3 devices so d = 1: 5*(8 + 2) = 50.
TEST(PlacementCli, OriginalIdsInTopologicalOrder) {
  json j = parse_json([] {
    std::ifstream in(data_path("example.json"));
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }());
  j["maxMemoryPerDevice"] = 35;
  j["nodes"]["1"] = json::array({node(-7, 10, 5, 1, 2), node(3, 10, 5, 1, 2), node(-5, 10, 5, 1, 2)});
  j["edges"]["1"] = json::array({edge(3, -7, 10), edge(-5, 3, 10)});
  j["mbsInBatch"] = 8.0;  // a float with an integral value is accepted
  TempDir dir;
  const RunResult r = run_phaze("place " + quoted(dir.write("ids.json", j.dump(2))));
  ASSERT_EQ(r.status, 0) << r.err;
  const json out = parse_json(r.out);
  ASSERT_EQ(out["stages"].size(), 3u) << r.out;
  EXPECT_EQ(out["stages"][0]["nodes"], json::array({-5}));
  EXPECT_EQ(out["stages"][1]["nodes"], json::array({3}));
  EXPECT_EQ(out["stages"][2]["nodes"], json::array({-7}));
  EXPECT_EQ(out["dataParallelDegree"], 1);
  EXPECT_DOUBLE_EQ(out["finalTimePerBatch"].get<double>(), 50.0);
}

// Recomputation through the file (planner_examples_test.cpp, example 2): n0 fw 3 bw 1, n1 and n2 fw 1 bw 1,
// 10 parameter and 10 activation bytes each, 2-byte edges, bandwidth 1, K = 2, N = 1, M = 80, SGD.
// With recomputation the best is {0},{1,2}: max(3 + (max(F0 = 3, 2) + 1), 6) * 2 = 14; without, 6 * 2 = 12.
TEST(PlacementCli, RecomputationFlag) {
  json j;
  j["maxMemoryPerDevice"] = 80;
  j["maxDevices"] = 2;
  j["bandwidth"] = 1;
  j["mbsInBatch"] = 1;
  j["optimizerAlgorithm"] = "SGD";
  j["nodes"]["1"] = json::array({node(100, 10, 10, 3, 1), node(200, 10, 10, 1, 1), node(300, 10, 10, 1, 1)});
  j["edges"]["1"] = json::array({edge(100, 200, 2), edge(200, 300, 2)});
  TempDir dir;
  for (const bool recompute : {true, false}) {
    j["activationRecomputation"] = recompute;
    const RunResult r = run_phaze("place " + quoted(dir.write("recompute.json", j.dump())));
    ASSERT_EQ(r.status, 0) << r.err;
    const json out = parse_json(r.out);
    ASSERT_EQ(out["stages"].size(), 2u) << r.out;
    EXPECT_EQ(out["stages"][0]["nodes"], json::array({100}));
    EXPECT_EQ(out["stages"][1]["nodes"], json::array({200, 300}));
    EXPECT_DOUBLE_EQ(out["finalTimePerBatch"].get<double>(), recompute ? 14.0 : 12.0);
  }
}

// A validation failure deep in the file (a self-loop in the edges) also exits 2 with one line.
TEST(PlacementCli, ValidationErrorExitsTwo) {
  json j = parse_json([] {
    std::ifstream in(data_path("example.json"));
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }());
  j["edges"]["1"].push_back(edge(1, 1, 3));
  TempDir dir;
  const RunResult r = run_phaze("place " + quoted(dir.write("loop.json", j.dump())));
  expect_input_error(r);
}

// Corrected terms through the file (planner_examples_test.cpp): two nodes fw 1, bw 1, 8 parameter bytes,
// K = 4, N = 8, bandwidth 2, data-parallel links 4 bytes/s, α = 0.25: one node per stage on d = 2,
// 2*(4 + 1) + 2*(1/2)*8/4 + 2*1*0.25 = 12.5 with the parts 8, 2, 2.5 and no optimizer step. With 0.125 s per
// parameter byte the optimizer step adds 8*0.125 = 1 to that plan, and nothing else comes close
// (the one-stage plans gain 2).
TEST(PlacementCli, CorrectedTerms) {
  json j;
  j["maxMemoryPerDevice"] = 1000;
  j["maxDevices"] = 4;
  j["bandwidth"] = 2;
  j["mbsInBatch"] = 8;
  j["activationRecomputation"] = false;
  j["optimizerAlgorithm"] = "SGD";
  j["nodes"]["1"] = json::array({node(0, 8, 0, 1, 1), node(1, 8, 0, 1, 1)});
  j["edges"]["1"] = json::array({edge(0, 1, 0)});
  j["correctedTerms"] = {{"ringLatency", 0.25}, {"dataParallelBandwidth", 4}};
  TempDir dir;
  {
    const RunResult r = run_phaze("place " + quoted(dir.write("corrected.json", j.dump())));
    ASSERT_EQ(r.status, 0) << r.err;
    const json out = parse_json(r.out);
    EXPECT_DOUBLE_EQ(out["finalTimePerBatch"].get<double>(), 12.5);
    EXPECT_EQ(out["dataParallelDegree"], 2);
    ASSERT_TRUE(out.contains("timePerBatchParts")) << r.out;
    EXPECT_DOUBLE_EQ(out["timePerBatchParts"]["pipelineSteadyState"].get<double>(), 8.0);
    EXPECT_DOUBLE_EQ(out["timePerBatchParts"]["pipelineFillDrain"].get<double>(), 2.0);
    EXPECT_DOUBLE_EQ(out["timePerBatchParts"]["dataParallelSync"].get<double>(), 2.5);
    EXPECT_DOUBLE_EQ(out["timePerBatchParts"]["optimizerStep"].get<double>(), 0.0);
    EXPECT_TRUE(out["fixedStrategyTimePerBatchParts"].is_null());  // no hand-set strategy in the file
  }
  j["correctedTerms"]["optimizerTimePerByte"] = 0.125;
  {
    const RunResult r = run_phaze("place " + quoted(dir.write("optimizer.json", j.dump())));
    ASSERT_EQ(r.status, 0) << r.err;
    const json out = parse_json(r.out);
    EXPECT_DOUBLE_EQ(out["finalTimePerBatch"].get<double>(), 13.5);
    EXPECT_DOUBLE_EQ(out["timePerBatchParts"]["optimizerStep"].get<double>(), 1.0);
  }
}

TEST(PlacementCli, CorrectedTermsValidationExitsTwo) {
  json j = parse_json([] {
    std::ifstream in(data_path("example.json"));
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }());
  TempDir dir;
  j["correctedTerms"] = {{"optimizerTimePerByte", -1e-12}};
  const std::string negative = dir.write("negative.json", j.dump());
  RunResult r = run_phaze("place " + quoted(negative));
  expect_input_error(r, "optimizerTimePerByte");
  EXPECT_NE(r.err.find(negative), std::string::npos) << r.err;

  j["correctedTerms"] = {{"ringLatency", 12345}};
  std::string text = j.dump();
  text.replace(text.find("12345"), 5, "-1e999");
  const std::string infinite = dir.write("infinite.json", text);
  r = run_phaze("place " + quoted(infinite));
  expect_input_error(r, "ringLatency");
  EXPECT_NE(r.err.find(infinite), std::string::npos) << r.err;
}

}  // namespace
