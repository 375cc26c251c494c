// The layer-scheduling question format (io/schedule_json.h): valid questions come out as problems with
// their defaults; every validation failure throws phaze::InputError with a one-line message naming the
// source and the item; the output format has the documented keys.

#include "io/schedule_json.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>

#include "schedule/problem.h"
#include "util/input_error.h"

namespace {

using nlohmann::json;
using phaze::InputError;
using phaze::io::parse_schedule_input;
using phaze::io::schedule_input_json;
using phaze::io::schedule_output_json;
using phaze::schedule::Problem;
using phaze::schedule::Schedule;
using phaze::schedule::TaskKind;
using phaze::schedule::TaskSlot;

const char* const kSource = "question.json";

json op(const std::string& id, const std::string& unit, double latency, double parallel) {
  return json{{"id", id}, {"unit", unit}, {"latency_s", latency}, {"parallel_latency_s", parallel}};
}

/// Example F of layer-schedule.md 8 with a no-op: D1 → AR → LN, W1 alone, N after LN.
json base_input() {
  json j;
  j["tensor_cores"] = 2;
  j["vector_cores"] = 1;
  j["ops"] = json::array({op("D1", "tensor", 6, 4), op("W1", "tensor", 8, 4),
                          json{{"id", "AR"}, {"unit", "comm"}, {"latency_s", 5}, {"energy_j", 0.5}},
                          op("LN", "vector", 2, 2), json{{"id", "N"}, {"unit", "none"}, {"latency_s", 0}}});
  j["ops"][0]["energy_j"] = 1.5;
  j["ops"][0]["parallel_energy_j"] = 2.5;
  j["edges"] = json::array({json::array({"D1", "AR"}), json::array({"AR", "LN"}), json::array({"LN", "N"})});
  return j;
}

void expect_rejected(const json& input, std::initializer_list<std::string> needles, const std::string& what) {
  SCOPED_TRACE(what);
  try {
    parse_schedule_input(input.dump(), kSource);
    ADD_FAILURE() << what << ": accepted";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << "not one line: " << message;
    EXPECT_EQ(message.rfind(kSource, 0), 0u) << "does not start with the source: " << message;
    for (const std::string& needle : needles)
      EXPECT_NE(message.find(needle), std::string::npos) << "lacks '" << needle << "': " << message;
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": threw something other than InputError: " << e.what();
  }
}

TEST(ScheduleJson, ParsesAQuestionWithItsDefaults) {
  const Problem p = parse_schedule_input(base_input().dump(), kSource);
  EXPECT_EQ(p.tensor_cores, 2);
  EXPECT_EQ(p.vector_cores, 1);
  EXPECT_FALSE(p.comm_as_vector);
  EXPECT_FALSE(p.overlap_across_types);
  ASSERT_EQ(p.tasks.size(), 5u);
  EXPECT_EQ(p.tasks[0].id, "D1");
  EXPECT_EQ(p.tasks[0].kind, TaskKind::Tensor);
  EXPECT_EQ(p.tasks[0].single_s, 6);
  EXPECT_EQ(p.tasks[0].parallel_s, 4);
  EXPECT_EQ(p.tasks[0].single_energy_j, 1.5);
  EXPECT_EQ(p.tasks[0].parallel_energy_j, 2.5);
  EXPECT_EQ(p.tasks[1].single_energy_j, 0);  // energies default to 0
  EXPECT_EQ(p.tasks[1].parallel_energy_j, 0);
  EXPECT_EQ(p.tasks[2].kind, TaskKind::Comm);
  EXPECT_EQ(p.tasks[2].parallel_s, 5);  // a collective's ℓ' is ℓ
  EXPECT_EQ(p.tasks[2].parallel_energy_j, 0.5);
  EXPECT_EQ(p.tasks[3].kind, TaskKind::Vector);
  EXPECT_EQ(p.tasks[4].kind, TaskKind::None);
  EXPECT_EQ(p.tasks[4].parallel_s, 0);
  const std::vector<std::pair<int, int>> edges = {{0, 2}, {2, 3}, {3, 4}};
  EXPECT_EQ(p.edges, edges);
}

TEST(ScheduleJson, OptionsAndLeftOutEdges) {
  json j = base_input();
  j["comm_as_vector"] = true;
  j["overlap_across_types"] = true;
  j.erase("edges");
  j["ops"][1]["unit"] = "fused";
  const Problem p = parse_schedule_input(j.dump(), kSource);
  EXPECT_TRUE(p.comm_as_vector);
  EXPECT_TRUE(p.overlap_across_types);
  EXPECT_TRUE(p.edges.empty());
  EXPECT_EQ(p.tasks[1].kind, TaskKind::Fused);
}

TEST(ScheduleJson, RoundTrip) {
  json j = base_input();
  j["comm_as_vector"] = true;
  const Problem p = parse_schedule_input(j.dump(), kSource);
  const Problem q = parse_schedule_input(schedule_input_json(p).dump(), kSource);
  EXPECT_EQ(q.tensor_cores, p.tensor_cores);
  EXPECT_EQ(q.vector_cores, p.vector_cores);
  EXPECT_EQ(q.comm_as_vector, p.comm_as_vector);
  EXPECT_EQ(q.edges, p.edges);
  ASSERT_EQ(q.tasks.size(), p.tasks.size());
  for (size_t i = 0; i < p.tasks.size(); ++i) {
    EXPECT_EQ(q.tasks[i].id, p.tasks[i].id);
    EXPECT_EQ(q.tasks[i].kind, p.tasks[i].kind);
    EXPECT_EQ(q.tasks[i].single_s, p.tasks[i].single_s);
    EXPECT_EQ(q.tasks[i].parallel_s, p.tasks[i].parallel_s);
    EXPECT_EQ(q.tasks[i].single_energy_j, p.tasks[i].single_energy_j);
    EXPECT_EQ(q.tasks[i].parallel_energy_j, p.tasks[i].parallel_energy_j);
  }
}

TEST(ScheduleJson, RejectsMalformedJsonAndBadTopLevel) {
  try {
    parse_schedule_input("{\"tensor_cores\": 2,", kSource);
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("malformed JSON"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(kSource), std::string::npos) << e.what();
  }
  expect_rejected(json::array(), {"object"}, "array");
  json j = base_input();
  j.erase("tensor_cores");
  expect_rejected(j, {"missing key 'tensor_cores'"}, "no tensor_cores");
  j = base_input();
  j.erase("vector_cores");
  expect_rejected(j, {"missing key 'vector_cores'"}, "no vector_cores");
  j = base_input();
  j.erase("ops");
  expect_rejected(j, {"missing key 'ops'"}, "no ops");
  j = base_input();
  j["ops"] = json::array();
  expect_rejected(j, {"'ops'", "non-empty"}, "empty ops");
  j = base_input();
  j["ops"] = json::object();
  expect_rejected(j, {"'ops'"}, "ops object");
  j = base_input();
  j["comm_as_vector"] = "yes";
  expect_rejected(j, {"comm_as_vector"}, "option not boolean");
}

TEST(ScheduleJson, RejectsBadCoreCounts) {
  for (const json& bad : {json(0), json(-1), json(1.5), json("2"), json(1e30)}) {
    json j = base_input();
    j["tensor_cores"] = bad;
    expect_rejected(j, {"'tensor_cores'", bad.dump()}, "tensor_cores " + bad.dump());
    j = base_input();
    j["vector_cores"] = bad;
    expect_rejected(j, {"'vector_cores'", bad.dump()}, "vector_cores " + bad.dump());
  }
  json j = base_input();
  j["tensor_cores"] = 4.0;  // an integral float is fine
  EXPECT_EQ(parse_schedule_input(j.dump(), kSource).tensor_cores, 4);
}

TEST(ScheduleJson, RejectsBadOps) {
  json j = base_input();
  j["ops"][1].erase("id");
  expect_rejected(j, {"ops[1]", "missing key 'id'"}, "no id");
  j = base_input();
  j["ops"][1]["id"] = "";
  expect_rejected(j, {"ops[1]", "empty"}, "empty id");
  j = base_input();
  j["ops"][1]["id"] = 7;
  expect_rejected(j, {"ops[1]", "'id'"}, "numeric id");
  j = base_input();
  j["ops"][3]["id"] = "D1";
  expect_rejected(j, {"ops[3]", "duplicate", "'D1'"}, "duplicate id");
  j = base_input();
  j["ops"][1].erase("unit");
  expect_rejected(j, {"ops[1]", "'W1'", "missing key 'unit'"}, "no unit");
  j = base_input();
  j["ops"][1]["unit"] = "gpu";
  expect_rejected(j, {"ops[1]", "'W1'", "'unit'", "gpu"}, "bad unit");
  j = base_input();
  j["ops"][1]["unit"] = "TENSOR";
  expect_rejected(j, {"ops[1]", "'unit'"}, "unit case");
  j = base_input();
  j["ops"][1].erase("latency_s");
  expect_rejected(j, {"ops[1]", "'W1'", "missing key 'latency_s'"}, "no latency");
  j = base_input();
  j["ops"][1]["latency_s"] = -1;
  expect_rejected(j, {"ops[1]", "'W1'", "'latency_s'", "negative"}, "negative latency");
  j = base_input();
  j["ops"][1]["latency_s"] = "fast";
  expect_rejected(j, {"ops[1]", "'latency_s'", "number"}, "latency string");
  j = base_input();
  j["ops"][1]["parallel_latency_s"] = -0.5;
  expect_rejected(j, {"ops[1]", "'parallel_latency_s'", "negative"}, "negative parallel latency");
  j = base_input();
  j["ops"][1].erase("parallel_latency_s");
  expect_rejected(j, {"ops[1]", "'W1'", "missing key 'parallel_latency_s'"}, "compute op without parallel latency");
  j = base_input();
  j["ops"][3]["energy_j"] = -2;
  expect_rejected(j, {"ops[3]", "'LN'", "'energy_j'"}, "negative energy");
  j = base_input();
  j["ops"][3]["parallel_energy_j"] = true;
  expect_rejected(j, {"ops[3]", "'parallel_energy_j'"}, "energy not a number");
  j = base_input();
  j["ops"][1] = "W1";
  expect_rejected(j, {"ops[1]", "object"}, "op not an object");
}

TEST(ScheduleJson, RejectsNonFiniteLatencies) {
  // JSON has no infinity; a number too large for a double is one.
  std::string text = base_input().dump();
  const std::string needle = "\"latency_s\":8";
  const size_t at = text.find(needle);
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at, needle.size(), "\"latency_s\":1e999");
  try {
    parse_schedule_input(text, kSource);
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(kSource), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(ScheduleJson, RejectsBadEdges) {
  json j = base_input();
  j["edges"] = json::object();
  expect_rejected(j, {"'edges'"}, "edges object");
  j = base_input();
  j["edges"].push_back(json::array({"D1"}));
  expect_rejected(j, {"edges[3]", "pair"}, "edge of one");
  j = base_input();
  j["edges"].push_back(json{{"from", "D1"}, {"to", "W1"}});
  expect_rejected(j, {"edges[3]"}, "edge object");
  j = base_input();
  j["edges"].push_back(json::array({"D1", "ZZ"}));
  expect_rejected(j, {"edges[3]", "unknown op id 'ZZ'"}, "unknown to");
  j = base_input();
  j["edges"].push_back(json::array({"YY", "W1"}));
  expect_rejected(j, {"edges[3]", "unknown op id 'YY'"}, "unknown from");
  j = base_input();
  j["edges"].push_back(json::array({"W1", "W1"}));
  expect_rejected(j, {"edges[3]", "self-loop", "'W1'"}, "self-loop");
  j = base_input();
  j["edges"].push_back(json::array({"AR", "LN"}));
  expect_rejected(j, {"edges[3]", "duplicate", "'AR'", "'LN'"}, "duplicate edge");
}

TEST(ScheduleJson, RejectsACycleNamingATaskOnIt) {
  // D1 → AR → LN → N, plus N → AR: the cycle is AR → LN → N → AR; D1 is not on it.
  json j = base_input();
  j["edges"].push_back(json::array({"N", "AR"}));
  try {
    parse_schedule_input(j.dump(), kSource);
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("cycle"), std::string::npos) << message;
    EXPECT_TRUE(message.find("'AR'") != std::string::npos || message.find("'LN'") != std::string::npos ||
                message.find("'N'") != std::string::npos)
        << message;
    EXPECT_EQ(message.find("'D1'"), std::string::npos) << message;
  }
}

TEST(ScheduleJson, OutputHasTheDocumentedKeys) {
  const Problem p = parse_schedule_input(base_input().dump(), kSource);
  Schedule s;
  s.feasible = true;
  s.proven_optimal = true;
  s.makespan_s = 11;
  s.energy_j = 3;
  s.tensor_utilisation = 16.0 / 22;
  s.vector_utilisation = 2.0 / 11;
  s.tensor_peak = 1;
  s.vector_peak = 1;
  s.tasks = {TaskSlot{0, 4, true, -1, -1}, TaskSlot{4, 8, true, -1, -1}, TaskSlot{4, 9, false, -1, -1},
             TaskSlot{9, 11, false, -1, 0}, TaskSlot{11, 11, false, -1, -1}};
  const json out = json::parse(schedule_output_json(p, s, "exact").dump());
  for (const char* key : {"makespan_s", "ops", "energy_j", "tensor_utilisation", "vector_utilisation", "tensor_peak",
                          "vector_peak", "solver", "proven_optimal", "lower_bound_s"})
    EXPECT_TRUE(out.contains(key)) << key;
  EXPECT_EQ(out["makespan_s"], 11.0);
  EXPECT_EQ(out["solver"], "exact");
  EXPECT_EQ(out["proven_optimal"], true);
  EXPECT_EQ(out["energy_j"], 3.0);
  ASSERT_EQ(out["ops"].size(), 5u);
  const json& ln = out["ops"][3];
  EXPECT_EQ(ln["id"], "LN");
  EXPECT_EQ(ln["start_s"], 9.0);
  EXPECT_EQ(ln["finish_s"], 11.0);
  EXPECT_EQ(ln["parallel"], false);
  EXPECT_TRUE(ln["tensor_core"].is_null());
  EXPECT_EQ(ln["vector_core"], 0);
  EXPECT_EQ(out["ops"][0]["parallel"], true);
  EXPECT_TRUE(out["ops"][0]["tensor_core"].is_null());

  s.feasible = false;
  const json none = json::parse(schedule_output_json(p, s, "ilp").dump());
  EXPECT_EQ(none["feasible"], false);
  EXPECT_TRUE(none["makespan_s"].is_null());
  EXPECT_EQ(none["proven_optimal"], false);
}

}  // namespace
