// Piper's input format as the original's files write it (mbsInBatch, sync maps keyed by neighbour, any
// number of TMPCs, unknown keys ignored), the refusals that name the item, and the answer's JSON.

#include "io/piper_json.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "util/input_error.h"

namespace {

using nlohmann::json;
using phaze::InputError;

json tmpc(const std::string& id, double p, json fw, json bw) {
  return {{"id", id},           {"timePerSample", p}, {"parameterSize", 10}, {"memoryUsageA", 100},
          {"memoryUsageB", 50}, {"syncTimeFw", fw},   {"syncTimeBw", bw}};
}

/// Nodes 7 → 3 → 5 (ids out of order on purpose), three TMPCs on node 3 at width 1.
json sample() {
  json j = {
      {"maxMemoryPerDevice", 1000}, {"maxDevices", 8}, {"bandwidth", 100}, {"mbsInBatch", 4}, {"comment", "ignored"}};
  j["nodes"] = json::array(
      {{{"id", 7}, {"name", "embedding"}, {"TMPCs", {{"1", {tmpc("vanilla", 1, json::object(), {{"3", 0}})}}}}},
       {{"id", 3},
        {"TMPCs",
         {{"1",
           {tmpc("vanilla", 2, {{"7", 0}}, {{"5", 0}}), tmpc("activation recomp", 3, {{"7", 0}}, {{"5", 0}}),
            tmpc("third", 4, {{"7", 1}}, {{"5", 1}})}},
          {"2", json::array()}}}},
       {{"id", 5}, {"TMPCs", {{"1", {tmpc("vanilla", 1, {{"3", 0}}, json::object())}}}}}});
  j["edges"] = json::array({{{"sourceId", 7}, {"destId", 3}, {"communicationCost", 8}},
                            {{"sourceId", 3}, {"destId", 5}, {"communicationCost", 8}}});
  return j;
}

std::string error_of(const json& j) {
  try {
    phaze::io::read_piper_problem(j.dump(), "in.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(PiperJson, ReadsTheOriginalsFormat) {
  const auto p = phaze::io::read_piper_problem(sample().dump(), "in.json");
  EXPECT_EQ(p.micro_batches, 4);
  EXPECT_EQ(p.widths, (std::vector<int64_t>{1, 2}));
  ASSERT_EQ(p.nodes.size(), 3u);
  EXPECT_EQ(p.nodes[1].id, 3);
  EXPECT_EQ(p.nodes[1].tmpcs[0].size(), 3u);  // more than two TMPCs per width
  EXPECT_TRUE(p.nodes[1].tmpcs[1].empty());   // width 2 not supported
  EXPECT_EQ(p.nodes[1].tmpcs[0][2].sync_in_bytes, std::vector<double>{1});
  // The README's name of the micro-batch count is read too.
  json alias = sample();
  alias.erase("mbsInBatch");
  alias["maxBatchSize"] = 6;
  EXPECT_EQ(phaze::io::read_piper_problem(alias.dump(), "in.json").micro_batches, 6);
}

TEST(PiperJson, RefusalsNameTheItem) {
  json j = sample();
  j["nodes"][1]["TMPCs"]["1"][0]["syncTimeFw"] = json::object();
  EXPECT_EQ(error_of(j),
            "in.json: nodes[1].TMPCs[\"1\"][0].syncTimeFw has no entry for predecessor 7: it must name every "
            "predecessor exactly once");
  j = sample();
  j["nodes"][1]["TMPCs"]["1"][0]["syncTimeBw"]["7"] = 0;
  EXPECT_EQ(error_of(j),
            "in.json: nodes[1].TMPCs[\"1\"][0].syncTimeBw has the key \"7\", which is not the id of a successor of "
            "the node");
  j = sample();
  j["nodes"][0]["TMPCs"]["2x"] = json::array();
  EXPECT_EQ(
      error_of(j),
      "in.json: nodes[0].TMPCs has the width key \"2x\": must be an integer from 1 to 1048576 written in decimal");
  j = sample();
  j["nodes"][2]["id"] = 7;
  EXPECT_EQ(error_of(j), "in.json: nodes[2].id = 7: another node has this id");
  j = sample();
  j["edges"][1]["destId"] = 9;
  EXPECT_EQ(error_of(j), "in.json: edges[1].destId = 9: no node has this id");
  j = sample();
  j["edges"].push_back({{"sourceId", 5}, {"destId", 7}, {"communicationCost", 1}});
  EXPECT_NE(error_of(j).find("the edges form a cycle"), std::string::npos) << error_of(j);
  j = sample();
  j["nodes"][1]["TMPCs"]["1"][1]["timePerSample"] = -1;
  EXPECT_EQ(error_of(j),
            "in.json: nodes[1].TMPCs[\"1\"][1].timePerSample = -1: must be a number ≥ 0 and at most 1e+12");
  j = sample();
  j["nodes"][1]["TMPCs"]["1"][2]["id"] = "vanilla";
  EXPECT_EQ(error_of(j),
            "in.json: nodes[1].TMPCs[\"1\"][2].id = \"vanilla\": another TMPC of this node and width has this id");
  j = sample();
  j.erase("mbsInBatch");
  EXPECT_EQ(error_of(j), "in.json: missing field mbsInBatch");
  j = sample();
  j["maxBatchSize"] = 5;
  EXPECT_NE(error_of(j).find("mbsInBatch = 4 and maxBatchSize = 5 disagree"), std::string::npos);
  j = sample();
  j["nodes"][2]["TMPCs"] = {{"1", json::array()}};
  EXPECT_EQ(error_of(j), "in.json: nodes[2].TMPCs: node 5 has no TMPC at any width");
  j = sample();
  j["maxDevices"] = 0;
  EXPECT_EQ(error_of(j), "in.json: maxDevices = 0: must be an integer from 1 to 1048576");
  j = sample();
  j["edges"].push_back(j["edges"][0]);
  EXPECT_EQ(error_of(j), "in.json: edges[2] repeats the edge 7 -> 3");
  EXPECT_EQ(error_of(json::array()), "in.json: the file = []: must be an object");
}

TEST(PiperJson, AnswerUsesTheInputsIds) {
  const auto p = phaze::io::read_piper_problem(sample().dump(), "in.json");
  const auto a = phaze::piper::plan_piper(p);
  ASSERT_TRUE(a.feasible) << a.reason;
  const auto j = phaze::io::piper_answer_json(p, a);
  EXPECT_EQ(j.at("timePerSample").get<double>(), a.time_per_sample_s);
  std::vector<int64_t> ids;
  for (const auto& s : j.at("stages")) {
    for (const auto& id : s.at("nodes")) {
      ids.push_back(id.get<int64_t>());
      EXPECT_TRUE(s.at("tmpcs").contains(std::to_string(id.get<int64_t>())));
    }
    EXPECT_GE(s.at("dataParallelDegree").get<int64_t>(), 1);
    EXPECT_EQ(s.at("tensorParallelDegree").get<int64_t>(), 1);
  }
  EXPECT_EQ(ids, (std::vector<int64_t>{7, 3, 5}));  // first stage first, input order inside a stage
  phaze::piper::PiperAnswer none;
  EXPECT_EQ(phaze::io::piper_answer_json(p, none).dump(), R"({"timePerSample":null,"stages":[]})");
}

}  // namespace
