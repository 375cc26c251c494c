// End-to-end tests of `phaze schedule`: the worked examples of layer-schedule.md section 8 (fixtures in
// tests/data/schedule) with the makespans of its quick-reference table, a real layer, and bad input.

#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "support/run_phaze.h"
#include "support/temp_file.h"

namespace {

using nlohmann::json;
using phaze_test::chomp;
using phaze_test::expect_input_error;
using phaze_test::expect_one_line;
using phaze_test::quoted;
using phaze_test::run_phaze;
using phaze_test::RunResult;
using phaze_test::TempFile;

std::string data_path(const std::string& name) {
  return std::string(PHAZE_TEST_DATA) + "/schedule/" + name;
}

using phaze_test::parse_json;

/// The final makespans of the quick-reference table (layer-schedule.md 8).
struct Example {
  const char* file;
  double makespan;
};

const Example kExamples[] = {
    {"a_chain.json", 6.5},
    {"b_fork_join_forward.json", 11},
    {"b_fork_join_backward.json", 20},
    {"c_core_limit.json", 8},
    {"c_core_limit_1_9.json", 7.6},
    {"c_core_limit_2_0.json", 8},
    {"d_fused_pairing.json", 8},
    {"e_attention_forward.json", 15.5},
    {"e_attention_forward_nop.json", 15.5},
    {"e_attention_backward.json", 29},
    {"f_collective.json", 11},
    {"f_collective_original.json", 12},
};

json run_json(const std::string& file, const std::string& solver) {
  const RunResult r = run_phaze("schedule " + quoted(data_path(file)) + " --solver " + solver + " --json");
  EXPECT_EQ(r.status, 0) << file << " (" << solver << "): " << r.err;
  return parse_json(r.out);
}

void expect_example(const Example& ex, const std::string& solver) {
  SCOPED_TRACE(std::string(ex.file) + " with --solver " + solver);
  const json j = run_json(ex.file, solver);
  ASSERT_TRUE(j.contains("makespan_s") && j["makespan_s"].is_number()) << j.dump();
  EXPECT_NEAR(j.at("makespan_s").get<double>(), ex.makespan, 1e-9);
  EXPECT_EQ(j.value("feasible", false), true);
  EXPECT_EQ(j.value("proven_optimal", false), true);
  // Every operator of the fixture is reported with a time.
  ASSERT_TRUE(j.contains("ops")) << j.dump();
  for (const json& op : j.at("ops")) {
    ASSERT_TRUE(op.contains("start_s") && op.contains("finish_s")) << op.dump();
    EXPECT_TRUE(op.at("start_s").is_number()) << op.dump();
    EXPECT_LE(op.at("finish_s").get<double>(), ex.makespan + 1e-9) << op.dump();
  }
}

TEST(CliSchedule, WorkedExamplesWithTheIlpSolver) {
  for (const Example& ex : kExamples) expect_example(ex, "ilp");
}

TEST(CliSchedule, WorkedExamplesWithTheExactSolver) {
  for (const Example& ex : kExamples) expect_example(ex, "exact");
}

TEST(CliSchedule, ExactIsTheDefaultSolver) {
  const RunResult r = run_phaze("schedule " + quoted(data_path("d_fused_pairing.json")) + " --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = parse_json(r.out);
  ASSERT_TRUE(j.contains("solver") && j.contains("makespan_s")) << r.out;
  EXPECT_EQ(j.at("solver"), "exact");
  EXPECT_NEAR(j.at("makespan_s").get<double>(), 8, 1e-9);
}

TEST(CliSchedule, ListSolverGivesAFeasibleScheduleNoBetterThanTheOptimum) {
  for (const Example& ex : kExamples) {
    SCOPED_TRACE(ex.file);
    const json j = run_json(ex.file, "list");
    ASSERT_TRUE(j.contains("makespan_s") && j["makespan_s"].is_number()) << j.dump();
    EXPECT_GE(j.at("makespan_s").get<double>(), ex.makespan - 1e-9);
  }
}

TEST(CliSchedule, ExampleEOutputs) {
  // layer-schedule.md 8, example E: TC utilisation 27 / (2 · 15.5), VC 3 / 15.5, both peaks 1.
  const json j = run_json("e_attention_forward.json", "exact");
  ASSERT_TRUE(j.contains("makespan_s") && j.contains("ops")) << j.dump();
  EXPECT_NEAR(j.at("tensor_utilisation").get<double>(), 27.0 / 31, 1e-9);
  EXPECT_NEAR(j.at("vector_utilisation").get<double>(), 3.0 / 15.5, 1e-9);
  EXPECT_NEAR(j.at("tensor_peak").get<double>(), 1.0, 1e-12);
  EXPECT_NEAR(j.at("vector_peak").get<double>(), 1.0, 1e-12);
  ASSERT_EQ(j.at("ops").size(), 6u);
  EXPECT_EQ(j.at("ops").at(5).at("id"), "P");
  EXPECT_EQ(j.at("ops").at(5).at("parallel"), true);
  EXPECT_NEAR(j.at("ops").at(5).at("start_s").get<double>(), 13, 1e-9);
}

TEST(CliSchedule, TextOutputHasATableAndAGanttChart) {
  const RunResult r = run_phaze("schedule " + quoted(data_path("f_collective.json")));
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* needle : {"D1", "W1", "AR", "LN", "parallel", "Gantt", "TC0", "TC1", "VC0", "link", "makespan 11"})
    EXPECT_NE(r.out.find(needle), std::string::npos) << "lacks '" << needle << "':\n" << r.out;
}

TEST(CliSchedule, RealLayerBackwardPass) {
  const RunResult r = run_phaze("schedule --model gpt3-175b --arch tpuv4-like --tp 8 --pass bwd --no-cache");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("makespan"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Gantt"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("utilisation"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("energy"), std::string::npos) << r.out;
}

TEST(CliSchedule, RealLayerJson) {
  const RunResult r = run_phaze(
      "schedule --model gpt3-175b --arch tpuv4-like --tp 8 --layer transformer --solver list --json --no-cache "
      "--attention-backend unfused");
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = parse_json(r.out);
  for (const char* key : {"pass", "tp", "solver", "ops", "makespan_s", "energy_j"})
    ASSERT_TRUE(j.contains(key)) << "no " << key << ": " << r.out;
  EXPECT_EQ(j.at("pass"), "fwd");
  EXPECT_EQ(j.at("tp"), 8);
  EXPECT_EQ(j.at("solver"), "list");
  EXPECT_EQ(j.at("ops").size(), 18u);  // models.md 3.1 at t = 8
  ASSERT_TRUE(j.at("makespan_s").is_number()) << j.dump();
  EXPECT_GT(j.at("makespan_s").get<double>(), 0);
  EXPECT_GT(j.at("energy_j").get<double>(), 0);
}

TEST(CliSchedule, WrittenQuestionOfARealLayerSchedulesTheSame) {
  // The question written for a real layer, read back as a file, is the same problem: same operators,
  // same optimum.
  TempFile question("");  // overwritten by the command
  const std::string layer = "--model llama2-7b --arch tpuv4-like --tp 8 --pass bwd --no-cache";
  const RunResult w = run_phaze("schedule " + layer + " --write-question " + quoted(question.path()));
  ASSERT_EQ(w.status, 0) << w.err;
  EXPECT_EQ(w.out, "");
  const RunResult direct = run_phaze("schedule " + layer + " --json");
  const RunResult from_file = run_phaze("schedule " + quoted(question.path()) + " --json");
  ASSERT_EQ(direct.status, 0) << direct.err;
  ASSERT_EQ(from_file.status, 0) << from_file.err;
  const json a = parse_json(direct.out), b = parse_json(from_file.out);
  for (const json* j : {&a, &b})
    ASSERT_TRUE(j->contains("ops") && j->contains("makespan_s") && j->contains("proven_optimal")) << j->dump();
  EXPECT_EQ(a.at("ops").size(), b.at("ops").size());
  EXPECT_EQ(a.at("makespan_s"), b.at("makespan_s"));
  EXPECT_EQ(b.at("proven_optimal"), true);
  expect_input_error(run_phaze("schedule " + layer + " --write-question /no/such/dir/q.json"), "/no/such/dir/q.json");
}

/// Twelve independent operators (2 tensor, 3 vector cores) that CBC takes minutes to prove optimal.
constexpr const char* kTwelveIndependent = R"({"tensor_cores": 2, "vector_cores": 3, "ops": [
  {"id": "op0", "unit": "tensor", "latency_s": 6.334, "parallel_latency_s": 2.313},
  {"id": "op1", "unit": "fused", "latency_s": 6.631, "parallel_latency_s": 2.207},
  {"id": "op2", "unit": "tensor", "latency_s": 9.179, "parallel_latency_s": 4.907},
  {"id": "op3", "unit": "tensor", "latency_s": 2.726, "parallel_latency_s": 1.795},
  {"id": "op4", "unit": "fused", "latency_s": 4.574, "parallel_latency_s": 3.341},
  {"id": "op5", "unit": "tensor", "latency_s": 6.714, "parallel_latency_s": 4.928},
  {"id": "op6", "unit": "fused", "latency_s": 7.671, "parallel_latency_s": 4.876},
  {"id": "op7", "unit": "tensor", "latency_s": 2.435, "parallel_latency_s": 1.896},
  {"id": "op8", "unit": "tensor", "latency_s": 3.711, "parallel_latency_s": 1.171},
  {"id": "op9", "unit": "vector", "latency_s": 5.255, "parallel_latency_s": 3.465},
  {"id": "op10", "unit": "fused", "latency_s": 7.427, "parallel_latency_s": 5.649},
  {"id": "op11", "unit": "fused", "latency_s": 7.553, "parallel_latency_s": 4.445}]})";

TEST(CliSchedule, TimeLimitGivesTheBestScheduleFoundUnproven) {
  const TempFile file(kTwelveIndependent);
  const auto started = std::chrono::steady_clock::now();
  const RunResult r = run_phaze("schedule " + quoted(file.path()) + " --solver ilp --time-limit 1 --json");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_LT(seconds, 30) << "hang guard";
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = parse_json(r.out);
  for (const char* key : {"feasible", "proven_optimal", "time_limit_s", "makespan_s", "lower_bound_s", "ops"})
    ASSERT_TRUE(j.contains(key)) << "no " << key << ": " << r.out;
  EXPECT_EQ(j.at("feasible"), true);
  EXPECT_EQ(j.at("proven_optimal"), false);
  EXPECT_EQ(j.at("time_limit_s"), 1.0);
  // A valid schedule (the CLI checks it before printing) between the bounds: the serial schedule of fastest
  // variants, Σ ℓ' = 40.993 s, and the exact solver's root bound reported as lower_bound_s.
  const double makespan = j.at("makespan_s").get<double>();
  EXPECT_LE(makespan, 40.993 + 1e-9);
  EXPECT_GT(j.at("lower_bound_s").get<double>(), 0);
  EXPECT_LE(j.at("lower_bound_s").get<double>(), makespan);
  ASSERT_EQ(j.at("ops").size(), 12u);
  for (const json& op : j.at("ops")) EXPECT_LE(op.at("finish_s").get<double>(), makespan + 1e-9) << op.dump();

  const RunResult text = run_phaze("schedule " + quoted(file.path()) + " --solver ilp --time-limit 0.5");
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("not proven within the time limit of 0.5 s"), std::string::npos) << text.out;
}

TEST(CliSchedule, BadTimeLimitsExitTwoQuotingTheValue) {
  const std::string file = quoted(data_path("a_chain.json"));
  for (const char* value : {"0", "-1", "abc", "1e9", "86401", "nan", "inf", "5s"}) {
    SCOPED_TRACE(value);
    expect_input_error(run_phaze("schedule " + file + " --solver ilp --time-limit '" + value + "'"),
                       std::string("'") + value + "'");
  }
  expect_input_error(run_phaze("schedule " + file + " --time-limit 5"), "--solver ilp");
  const RunResult ok = run_phaze("schedule " + file + " --solver ilp --time-limit 86400 --json");
  ASSERT_EQ(ok.status, 0) << ok.err;
  const json j = parse_json(ok);
  ASSERT_TRUE(j.contains("proven_optimal") && j.contains("makespan_s")) << ok.out;
  EXPECT_EQ(j.at("proven_optimal"), true);
  EXPECT_NEAR(j.at("makespan_s").get<double>(), 6.5, 1e-9);  // layer-schedule.md 8, example A
  const RunResult help = run_phaze("schedule --help");
  EXPECT_NE(help.out.find("--time-limit"), std::string::npos) << help.out;
}

TEST(CliSchedule, IlpRefusesLatenciesTooFarApart) {
  // 1 µs beside 6 s: CBC cannot resolve the short one once times are scaled by the long one.
  const TempFile file(R"({"tensor_cores": 1, "vector_cores": 1, "ops": [
    {"id": "long", "unit": "tensor", "latency_s": 10, "parallel_latency_s": 6},
    {"id": "short", "unit": "vector", "latency_s": 1e-6, "parallel_latency_s": 1e-6}]})");
  expect_input_error(run_phaze("schedule " + quoted(file.path()) + " --solver ilp"), "'short'");
  EXPECT_EQ(run_phaze("schedule " + quoted(file.path()) + " --solver exact").status, 0);
}

TEST(CliSchedule, NeedsExactlyOneOfFileAndModel) {
  expect_input_error(run_phaze("schedule"), "--model");
  expect_input_error(run_phaze("schedule " + quoted(data_path("a_chain.json")) + " --model gpt3-175b"), "--model");
  expect_input_error(run_phaze("schedule " + quoted(data_path("a_chain.json")) + " --arch tpuv4-like"), "--arch");
  expect_input_error(run_phaze("schedule " + quoted(data_path("a_chain.json")) + " --pass bwd"), "--pass");
}

TEST(CliSchedule, BadOptionsExitTwo) {
  expect_input_error(run_phaze("schedule " + quoted(data_path("a_chain.json")) + " --solver gurobi"));
  expect_input_error(run_phaze("schedule --model gpt3-175b --pass sideways --no-cache"));
  expect_input_error(run_phaze("schedule --model gpt3-175b --layer middle --no-cache"));
  expect_input_error(run_phaze("schedule --model no-such-model --no-cache"));
  expect_input_error(run_phaze("schedule " + quoted(data_path("no_such_file.json"))), "no_such_file.json");
}

TEST(CliSchedule, BadQuestionsExitTwoWithOneLine) {
  const struct {
    const char* text;
    const char* needle;
  } cases[] = {
      {"{\"tensor_cores\": 2", "malformed"},
      {R"({"vector_cores": 1, "ops": [{"id": "A", "unit": "tensor", "latency_s": 1, "parallel_latency_s": 1}]})",
       "tensor_cores"},
      {R"({"tensor_cores": 0, "vector_cores": 1, "ops": [{"id": "A", "unit": "tensor", "latency_s": 1,
           "parallel_latency_s": 1}]})",
       "tensor_cores"},
      {R"({"tensor_cores": 1, "vector_cores": 1, "ops": [{"id": "A", "unit": "gpu", "latency_s": 1}]})", "unit"},
      {R"({"tensor_cores": 1, "vector_cores": 1, "ops": [{"id": "A", "unit": "tensor", "latency_s": -1,
           "parallel_latency_s": 1}]})",
       "latency_s"},
      {R"({"tensor_cores": 1, "vector_cores": 1, "ops": [{"id": "A", "unit": "none", "latency_s": 0},
           {"id": "A", "unit": "none", "latency_s": 0}]})",
       "duplicate"},
      {R"({"tensor_cores": 1, "vector_cores": 1, "ops": [{"id": "A", "unit": "none", "latency_s": 0}],
           "edges": [["A", "B"]]})",
       "'B'"},
      {R"({"tensor_cores": 1, "vector_cores": 1, "ops": [{"id": "A", "unit": "none", "latency_s": 0},
           {"id": "B", "unit": "comm", "latency_s": 1}], "edges": [["A", "B"], ["B", "A"]]})",
       "cycle"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    const TempFile file(c.text);
    const RunResult r = run_phaze("schedule " + quoted(file.path()));
    expect_input_error(r, c.needle);
    EXPECT_NE(r.err.find(file.path()), std::string::npos) << "does not name the file: " << r.err;
  }
}

}  // namespace
