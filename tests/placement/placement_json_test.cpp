// Parsing and validation of the PHAZE placement format (placement.md, "Input" and "Output"): every
// validation failure throws phaze::InputError with a one-line message naming the source and the item;
// valid inputs come out in topological order with their original ids.

#include "io/placement_json.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "placement/planner.h"
#include "util/input_error.h"

namespace {

using nlohmann::json;
using phaze::InputError;
using phaze::io::parse_placement_input;
using phaze::io::PlacementInput;
using phaze::placement::make_planner;
using phaze::placement::Optimizer;
using phaze::placement::Plan;
using phaze::placement::PlanCheck;

const char* const kSource = "in.json";

json make_node(int64_t id, double params = 10, double acts = 5, double fw = 1, double bw = 2, bool tp = false) {
  return json{{"id", id},
              {"parameterSize", params},
              {"activationSize", acts},
              {"optimalLatencyFw", fw},
              {"optimalLatencyBw", bw},
              {"isTensorParallelized", tp}};
}

json make_edge(int64_t from, int64_t to, double bytes = 10) {
  return json{{"sourceId", from}, {"destId", to}, {"communicationCost", bytes}};
}

/// The worked example (planner_examples_test.cpp): ids 10, 11, 12 in a chain, widths 1 and 2.
json base_input() {
  json j;
  j["maxMemoryPerDevice"] = 100;
  j["maxDevices"] = 4;
  j["bandwidth"] = 10;
  j["mbsInBatch"] = 8;
  j["activationRecomputation"] = false;
  j["optimizerAlgorithm"] = "SGD";
  j["fixedPP"] = 2;
  j["fixedTMPC"] = 1;
  j["fixedDP"] = 2;
  j["numTransformerLayers"] = 2;
  j["nodes"]["1"] = json::array({make_node(10), make_node(11), make_node(12)});
  j["nodes"]["2"] = json::array(
      {make_node(10, 5, 5, 0.5, 1, true), make_node(11, 5, 5, 0.5, 1, true), make_node(12, 10, 5, 1, 2, false)});
  j["edges"]["1"] = json::array({make_edge(10, 11), make_edge(11, 12)});
  j["edges"]["2"] = json::array({make_edge(10, 11), make_edge(11, 12)});
  return j;
}

/// Expects parse_placement_input to throw InputError with a one-line message holding every needle.
void expect_rejected(const json& input, std::initializer_list<std::string> needles, const std::string& what) {
  SCOPED_TRACE(what);
  try {
    parse_placement_input(input.dump(), kSource);
    ADD_FAILURE() << what << ": accepted";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_FALSE(message.empty());
    EXPECT_EQ(message.find('\n'), std::string::npos) << "not one line: " << message;
    EXPECT_NE(message.find(kSource), std::string::npos) << "does not name the source: " << message;
    for (const std::string& needle : needles)
      EXPECT_NE(message.find(needle), std::string::npos) << "lacks '" << needle << "': " << message;
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": threw something other than InputError: " << e.what();
  }
}

PlacementInput accepted(const json& input) {
  try {
    return parse_placement_input(input.dump(), kSource);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "rejected: " << e.what();
    return {};
  }
}

TEST(PlacementJson, BaseInputParses) {
  const PlacementInput in = accepted(base_input());
  EXPECT_EQ(in.cluster.devices, 4);
  EXPECT_DOUBLE_EQ(in.cluster.memory_bytes, 100);
  EXPECT_DOUBLE_EQ(in.cluster.pipeline_network.tiers[0].bandwidth, 10);
  EXPECT_DOUBLE_EQ(in.cluster.data_parallel_network.tiers[0].bandwidth, 10);
  EXPECT_EQ(in.cluster.micro_batches, 8);
  EXPECT_FALSE(in.cluster.recompute);
  EXPECT_EQ(in.cluster.optimizer, Optimizer::Sgd);
  ASSERT_EQ(in.chains.size(), 2u);
  EXPECT_EQ(in.chains[0].width, 1);
  EXPECT_EQ(in.chains[1].width, 2);
  EXPECT_EQ(in.node_ids, (std::vector<int64_t>{10, 11, 12}));
  ASSERT_EQ(in.chains[1].nodes.size(), 3u);
  EXPECT_TRUE(in.chains[1].nodes[0].tensor_parallel);
  EXPECT_FALSE(in.chains[1].nodes[2].tensor_parallel);
  EXPECT_DOUBLE_EQ(in.chains[1].nodes[0].forward_time, 0.5);
  EXPECT_DOUBLE_EQ(in.chains[1].nodes[2].parameter_bytes, 10);
  ASSERT_EQ(in.chains[0].edges.size(), 2u);
  ASSERT_TRUE(in.hand_set.has_value());
  EXPECT_EQ(in.hand_set->pipeline, 2);
  EXPECT_EQ(in.hand_set->width, 1);
  EXPECT_EQ(in.hand_set->data_parallel, 2);
  EXPECT_EQ(in.hand_set_layers, 2);
}

TEST(PlacementJson, RecomputeAdamAndFloatMicroBatches) {
  json j = base_input();
  j["activationRecomputation"] = true;
  j["optimizerAlgorithm"] = "Adam";
  j["mbsInBatch"] = 8.0;  // a JSON float with an integral value is accepted
  ASSERT_TRUE(j["mbsInBatch"].is_number_float());
  const PlacementInput in = accepted(j);
  EXPECT_EQ(in.cluster.micro_batches, 8);
  EXPECT_TRUE(in.cluster.recompute);
  EXPECT_EQ(in.cluster.optimizer, Optimizer::Adam);
}

TEST(PlacementJson, ClusterValidation) {
  auto with = [](const char* key, const json& value) {
    json j = base_input();
    j[key] = value;
    return j;
  };
  expect_rejected(with("maxDevices", 0), {"maxDevices"}, "K = 0");
  expect_rejected(with("maxDevices", 10001), {"maxDevices"}, "K = 10001");
  expect_rejected(with("maxDevices", -3), {"maxDevices"}, "K = -3");
  expect_rejected(with("maxDevices", 2.5), {"maxDevices"}, "K = 2.5");
  accepted(with("maxDevices", 10000));
  accepted(with("maxDevices", 1));
  expect_rejected(with("bandwidth", 0), {"bandwidth"}, "bandwidth 0");
  expect_rejected(with("bandwidth", -1.5), {"bandwidth"}, "bandwidth < 0");
  expect_rejected(with("bandwidth", "fast"), {"bandwidth"}, "bandwidth string");
  expect_rejected(with("maxMemoryPerDevice", 0), {"maxMemoryPerDevice"}, "memory 0");
  expect_rejected(with("maxMemoryPerDevice", -100), {"maxMemoryPerDevice"}, "memory < 0");
  expect_rejected(with("mbsInBatch", 0), {"mbsInBatch"}, "N = 0");
  expect_rejected(with("mbsInBatch", -2), {"mbsInBatch"}, "N < 0");
  expect_rejected(with("mbsInBatch", 8.5), {"mbsInBatch"}, "N = 8.5");
  expect_rejected(with("optimizerAlgorithm", "RMSProp"), {"optimizerAlgorithm"}, "RMSProp");
  expect_rejected(with("optimizerAlgorithm", "adam"), {"optimizerAlgorithm"}, "lower-case adam");
  expect_rejected(with("optimizerAlgorithm", 1), {"optimizerAlgorithm"}, "optimizer number");
  expect_rejected(with("activationRecomputation", "yes"), {"activationRecomputation"}, "recompute string");
}

TEST(PlacementJson, MissingKeysAreNamed) {
  for (const char* key : {"maxMemoryPerDevice", "maxDevices", "bandwidth", "mbsInBatch", "nodes", "edges",
                          "activationRecomputation", "optimizerAlgorithm"}) {
    json j = base_input();
    j.erase(key);
    expect_rejected(j, {key}, std::string("missing ") + key);
  }
  for (const char* key :
       {"id", "parameterSize", "activationSize", "optimalLatencyFw", "optimalLatencyBw", "isTensorParallelized"}) {
    json j = base_input();
    j["nodes"]["1"][1].erase(key);
    expect_rejected(j, {key}, std::string("node missing ") + key);
  }
  for (const char* key : {"sourceId", "destId", "communicationCost"}) {
    json j = base_input();
    j["edges"]["1"][0].erase(key);
    expect_rejected(j, {key}, std::string("edge missing ") + key);
  }
}

TEST(PlacementJson, MalformedJsonAndWrongShapes) {
  for (const std::string text : {"{", "", "[1, 2", "{\"maxDevices\": 4,}", "not json"}) {
    try {
      parse_placement_input(text, kSource);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const InputError& e) {
      const std::string message = e.what();
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
      EXPECT_NE(message.find(kSource), std::string::npos) << message;
    }
  }
  EXPECT_THROW(parse_placement_input("[1, 2, 3]", kSource), InputError);
  EXPECT_THROW(parse_placement_input("42", kSource), InputError);
  json j = base_input();
  j["nodes"] = json::array();
  expect_rejected(j, {"nodes"}, "nodes is an array");
  j = base_input();
  j["nodes"]["1"] = json::object();
  expect_rejected(j, {"1"}, "node list is an object");
  j = base_input();
  j["nodes"]["1"][0] = 5;
  expect_rejected(j, {"nodes"}, "node is a number");
}

TEST(PlacementJson, WidthValidation) {
  json j = base_input();
  j["nodes"] = json::object();
  j["edges"] = json::object();
  expect_rejected(j, {"nodes"}, "no widths");

  for (const std::string bad : {"abc", "0", "10001", "1.5", "-1", "2x", "", " 2", "+1", "02x"}) {
    j = base_input();
    j["nodes"][bad] = j["nodes"]["1"];
    j["edges"][bad] = j["edges"]["1"];
    expect_rejected(j, {"\"" + bad + "\""}, "width key '" + bad + "'");
  }

  // Width 10000 is allowed (one device per stage when no layer is split).
  j = base_input();
  j["nodes"]["10000"] = j["nodes"]["1"];
  j["edges"]["10000"] = j["edges"]["1"];
  {
    const PlacementInput in = accepted(j);
    ASSERT_EQ(in.chains.size(), 3u);
    EXPECT_EQ(in.chains.back().width, 10000);
  }

  // Node widths and edge widths must be the same set.
  j = base_input();
  j["edges"].erase("2");
  expect_rejected(j, {"edges", "2"}, "edge width missing");
  j = base_input();
  j["edges"]["3"] = j["edges"]["1"];
  expect_rejected(j, {"edges", "3"}, "extra edge width");
}

TEST(PlacementJson, NodeValidation) {
  json j = base_input();
  j["nodes"]["1"][2]["id"] = 11;
  expect_rejected(j, {"11", "duplicate"}, "duplicate node id");

  j = base_input();
  j["nodes"]["2"][2]["id"] = 13;
  j["edges"]["2"][1]["destId"] = 13;
  expect_rejected(j, {"nodes", "2"}, "node ids differ across widths");

  j = base_input();
  j["nodes"]["2"].push_back(make_node(13));
  j["edges"]["2"].push_back(make_edge(12, 13));
  expect_rejected(j, {"nodes", "2"}, "extra node in width 2");

  for (const char* key : {"parameterSize", "activationSize", "optimalLatencyFw", "optimalLatencyBw"}) {
    j = base_input();
    j["nodes"]["2"][1][key] = -1;
    expect_rejected(j, {key}, std::string("negative ") + key);
  }

  j = base_input();
  j["nodes"]["1"][1]["isTensorParallelized"] = true;
  expect_rejected(j, {"isTensorParallelized", "11"}, "tensor-parallel node under width 1");

  j = base_input();
  j["nodes"]["1"][0]["id"] = "ten";
  expect_rejected(j, {"id"}, "string id");

  // Zero sizes and latencies are fine.
  j = base_input();
  for (auto& node : j["nodes"]["1"]) {
    node["parameterSize"] = 0;
    node["activationSize"] = 0;
    node["optimalLatencyFw"] = 0;
    node["optimalLatencyBw"] = 0;
  }
  accepted(j);
}

TEST(PlacementJson, EdgeValidation) {
  json j = base_input();
  j["edges"]["1"][0]["sourceId"] = 99;
  j["edges"]["2"][0]["sourceId"] = 99;
  expect_rejected(j, {"99"}, "unknown source");

  j = base_input();
  j["edges"]["1"][1]["destId"] = 98;
  expect_rejected(j, {"98"}, "unknown destination");

  j = base_input();
  j["edges"]["1"].push_back(make_edge(11, 11));
  expect_rejected(j, {"11"}, "self-loop");

  j = base_input();
  j["edges"]["1"].push_back(make_edge(10, 11, 3));
  expect_rejected(j, {"10", "11"}, "duplicate edge");

  j = base_input();
  j["edges"]["1"][0]["communicationCost"] = -5;
  expect_rejected(j, {"communicationCost"}, "negative communication cost");

  j = base_input();
  j["edges"]["2"].push_back(make_edge(10, 12));
  expect_rejected(j, {"edges", "2"}, "edge sets differ across widths");

  j = base_input();
  j["edges"]["2"][1] = make_edge(10, 12);
  expect_rejected(j, {"edges", "2"}, "edge sets of the same size differ");

  // Communication costs may differ across widths: only the edge set must be the same.
  j = base_input();
  j["edges"]["2"][0]["communicationCost"] = 3;
  {
    const PlacementInput in = accepted(j);
    ASSERT_EQ(in.chains.size(), 2u);
    double bytes = -1;
    for (const auto& e : in.chains[1].edges)
      if (e.from == 0 && e.to == 1) bytes = e.bytes;
    EXPECT_DOUBLE_EQ(bytes, 3);
  }
}

TEST(PlacementJson, GraphShapeValidation) {
  // A cycle 10 -> 11 -> 12 -> 10.
  json j = base_input();
  for (const char* w : {"1", "2"}) j["edges"][w].push_back(make_edge(12, 10));
  expect_rejected(j, {"cycle"}, "cycle through all nodes");

  // A cycle 11 <-> 12 behind a source.
  j = base_input();
  for (const char* w : {"1", "2"}) j["edges"][w].push_back(make_edge(12, 11));
  expect_rejected(j, {"cycle"}, "cycle after a source");

  // A fork 10 -> 11, 10 -> 12: 11 and 12 are not ordered.
  j = base_input();
  for (const char* w : {"1", "2"}) j["edges"][w] = json::array({make_edge(10, 11), make_edge(10, 12)});
  expect_rejected(j, {"11", "12"}, "fork");

  // A join 10 -> 12, 11 -> 12.
  j = base_input();
  for (const char* w : {"1", "2"}) j["edges"][w] = json::array({make_edge(10, 12), make_edge(11, 12)});
  expect_rejected(j, {"10", "11"}, "join");

  // Two nodes and no edge between them.
  j = base_input();
  for (const char* w : {"1", "2"}) {
    j["nodes"][w] = json::array({make_node(10), make_node(11)});
    j["edges"][w] = json::array();
  }
  expect_rejected(j, {"10", "11"}, "two unconnected nodes");

  // A single node with no edges is a chain.
  j = base_input();
  for (const char* w : {"1", "2"}) {
    j["nodes"][w] = json::array({make_node(7)});
    j["edges"][w] = json::array();
  }
  {
    const PlacementInput in = accepted(j);
    EXPECT_EQ(in.node_ids, (std::vector<int64_t>{7}));
  }

  // A chain with a skip edge 10 -> 12 still has a unique order.
  j = base_input();
  for (const char* w : {"1", "2"}) j["edges"][w].push_back(make_edge(10, 12, 4));
  {
    const PlacementInput in = accepted(j);
    EXPECT_EQ(in.node_ids, (std::vector<int64_t>{10, 11, 12}));
    EXPECT_EQ(in.chains[0].edges.size(), 3u);
  }
}

// Nodes listed out of order, with negative ids: chain -5 -> 3 -> -7 -> 0, listed as 0, -7, -5, 3, edges
// listed backwards. The chain comes out in topological order (told apart by their parameter sizes).
TEST(PlacementJson, FileOrderAndNegativeIds) {
  json j = base_input();
  j["nodes"].erase("2");
  j["edges"].erase("2");
  j["fixedTMPC"] = 1;
  j["nodes"]["1"] = json::array({make_node(0, 4), make_node(-7, 3), make_node(-5, 1), make_node(3, 2)});
  j["edges"]["1"] = json::array({make_edge(-7, 0, 30), make_edge(3, -7, 20), make_edge(-5, 3, 10)});
  const PlacementInput in = accepted(j);
  EXPECT_EQ(in.node_ids, (std::vector<int64_t>{-5, 3, -7, 0}));
  ASSERT_EQ(in.chains.size(), 1u);
  ASSERT_EQ(in.chains[0].nodes.size(), 4u);
  for (int p = 0; p < 4; ++p) EXPECT_DOUBLE_EQ(in.chains[0].nodes[p].parameter_bytes, p + 1) << p;
  // Edges by position: 0->1 (10 bytes), 1->2 (20), 2->3 (30).
  ASSERT_EQ(in.chains[0].edges.size(), 3u);
  for (const auto& e : in.chains[0].edges) {
    EXPECT_EQ(e.to, e.from + 1);
    EXPECT_DOUBLE_EQ(e.bytes, 10.0 * (e.from + 1));
  }
}

// Widths keyed in descending order come out ascending.
TEST(PlacementJson, WidthsComeOutAscending) {
  // nlohmann::json sorts object keys, so use a string to keep "2" before "1" in the file text.
  const std::string text = R"({"maxMemoryPerDevice": 100, "maxDevices": 4, "bandwidth": 10, "mbsInBatch": 8,
    "activationRecomputation": false, "optimizerAlgorithm": "SGD",
    "nodes": {"4": [)" + make_node(1, 1, 1, 1, 1, true).dump() +
                           "," + make_node(2).dump() + R"(],
              "1": [)" + make_node(1).dump() +
                           "," + make_node(2).dump() + R"(]},
    "edges": {"4": [)" + make_edge(1, 2).dump() +
                           R"(], "1": [)" + make_edge(1, 2).dump() + "]}}";
  try {
    const PlacementInput in = parse_placement_input(text, kSource);
    ASSERT_EQ(in.chains.size(), 2u);
    EXPECT_EQ(in.chains[0].width, 1);
    EXPECT_EQ(in.chains[1].width, 4);
    EXPECT_TRUE(in.chains[1].nodes[0].tensor_parallel);
    EXPECT_FALSE(in.hand_set.has_value());  // no fixed* keys in this file
  } catch (const std::exception& e) {
    FAIL() << e.what();
  }
}

// The documented output for the worked example: one stage of all three nodes on d = 4, time 27; the
// hand-set p = 2, t = 1, d = 2, L = 2 gives 37 (see planner_examples_test.cpp for the arithmetic).
TEST(PlacementJson, OutputOfTheWorkedExample) {
  json j = base_input();
  j["nodes"].erase("2");
  j["edges"].erase("2");
  const PlacementInput in = accepted(j);
  ASSERT_TRUE(in.hand_set.has_value());
  const Plan plan = make_planner(in.cluster)->solve(in.chains, in.cluster);
  const PlanCheck hand = evaluate_hand_set(in.chains, in.cluster, *in.hand_set, in.hand_set_layers);
  const json out = json::parse(phaze::io::placement_output_json(in, plan, hand).dump());
  ASSERT_TRUE(out.contains("stages"));
  ASSERT_EQ(out["stages"].size(), 1u);
  EXPECT_EQ(out["stages"][0]["nodes"], json::array({10, 11, 12}));
  EXPECT_EQ(out["stages"][0]["devicesForStage"], 1);
  EXPECT_EQ(out["dataParallelDegree"], 4);
  EXPECT_EQ(out["tensorParallelDegree"], 1);
  EXPECT_DOUBLE_EQ(out["finalTimePerBatch"].get<double>(), 27.0);
  EXPECT_DOUBLE_EQ(out["fixedStrategyTimePerBatch"].get<double>(), 37.0);
}

// Output ids for a shuffled, negative-id input: the stages list the original ids in topological order.
// Chain -5 -> 3 -> -7 with the example's sizes (fw 1, bw 2, 10 parameter bytes, 5 activation bytes, 10-byte
// edges, bandwidth 10) and M = 35: one stage (75) and two-node stages (2*20 + 10 = 50) do not fit, a single
// node needs 25 (+5 per further micro-batch in flight; the first of three stages needs 25 + 2*5 = 35), so the plan is
// three stages {-5}, {3}, {-7}: loads 4, 5, 4 (see planner_examples_test.cpp), d = 1 (3 devices of K = 4): 5 * (8 + 2)
// = 50.
TEST(PlacementJson, OutputUsesOriginalIds) {
  json j = base_input();
  j["nodes"].erase("2");
  j["edges"].erase("2");
  j["maxMemoryPerDevice"] = 35;
  j["nodes"]["1"] = json::array({make_node(-7), make_node(3), make_node(-5)});
  j["edges"]["1"] = json::array({make_edge(3, -7), make_edge(-5, 3)});
  const PlacementInput in = accepted(j);
  const Plan plan = make_planner(in.cluster)->solve(in.chains, in.cluster);
  ASSERT_TRUE(plan.feasible);
  PlanCheck no_hand;
  const json out = json::parse(phaze::io::placement_output_json(in, plan, no_hand).dump());
  ASSERT_EQ(out["stages"].size(), 3u);
  EXPECT_EQ(out["stages"][0]["nodes"], json::array({-5}));
  EXPECT_EQ(out["stages"][1]["nodes"], json::array({3}));
  EXPECT_EQ(out["stages"][2]["nodes"], json::array({-7}));
  EXPECT_EQ(out["dataParallelDegree"], 1);
  EXPECT_DOUBLE_EQ(out["finalTimePerBatch"].get<double>(), 50.0);
  EXPECT_TRUE(out["fixedStrategyTimePerBatch"].is_null());
}

TEST(PlacementJson, OutputWhenNothingFits) {
  json j = base_input();
  j["maxMemoryPerDevice"] = 1;
  const PlacementInput in = accepted(j);
  const Plan plan = make_planner(in.cluster)->solve(in.chains, in.cluster);
  ASSERT_FALSE(plan.feasible);
  const PlanCheck hand = evaluate_hand_set(in.chains, in.cluster, *in.hand_set, in.hand_set_layers);
  EXPECT_FALSE(hand.feasible);
  const json out = json::parse(phaze::io::placement_output_json(in, plan, hand).dump());
  ASSERT_TRUE(out.contains("stages"));
  EXPECT_TRUE(out["stages"].is_array());
  EXPECT_TRUE(out["stages"].empty());
  ASSERT_TRUE(out.contains("finalTimePerBatch"));
  EXPECT_TRUE(out["finalTimePerBatch"].is_null());
  ASSERT_TRUE(out.contains("fixedStrategyTimePerBatch"));
  EXPECT_TRUE(out["fixedStrategyTimePerBatch"].is_null());
}

// ---------------------------------------------------------------------------------------------------------
// Corrected terms (optional `correctedTerms` object)
// ---------------------------------------------------------------------------------------------------------

TEST(PlacementJson, CorrectedTermsAreOffUnlessGiven) {
  EXPECT_FALSE(accepted(base_input()).cluster.corrected.enabled);
  json j = base_input();
  j["correctedTerms"] = nullptr;
  EXPECT_FALSE(accepted(j).cluster.corrected.enabled);

  j["correctedTerms"] = json::object();  // on, every field at its default
  const PlacementInput empty = accepted(j);
  EXPECT_TRUE(empty.cluster.corrected.enabled);
  EXPECT_EQ(empty.cluster.data_parallel_network.tiers[0].latency_s, 0.0);
  EXPECT_EQ(empty.cluster.data_parallel_network.tiers[0].bandwidth,
            empty.cluster.pipeline_network.tiers[0].bandwidth);  // the common one
  EXPECT_EQ(empty.cluster.corrected.optimizer_seconds_per_byte, 0.0);

  j["correctedTerms"] = {{"ringLatency", 5e-6}, {"dataParallelBandwidth", 4e9}, {"optimizerTimePerByte", 2.5e-12}};
  const PlacementInput full = accepted(j);
  EXPECT_TRUE(full.cluster.corrected.enabled);
  EXPECT_EQ(full.cluster.data_parallel_network.tiers[0].latency_s, 5e-6);
  EXPECT_EQ(full.cluster.data_parallel_network.tiers[0].bandwidth, 4e9);
  EXPECT_EQ(full.cluster.corrected.optimizer_seconds_per_byte, 2.5e-12);

  // Written back and read again, the settings survive.
  const PlacementInput again = accepted(json::parse(phaze::io::placement_input_json(full).dump()));
  EXPECT_TRUE(again.cluster.corrected.enabled);
  EXPECT_EQ(again.cluster.data_parallel_network.tiers[0].latency_s, 5e-6);
  EXPECT_EQ(again.cluster.data_parallel_network.tiers[0].bandwidth, 4e9);
  EXPECT_EQ(again.cluster.corrected.optimizer_seconds_per_byte, 2.5e-12);
  EXPECT_FALSE(json::parse(phaze::io::placement_input_json(accepted(base_input())).dump()).contains("correctedTerms"));
}

TEST(PlacementJson, CorrectedTermsValidation) {
  auto with = [](const json& terms) {
    json j = base_input();
    j["correctedTerms"] = terms;
    return j;
  };
  expect_rejected(with(json::array()), {"correctedTerms", "object"}, "not an object");
  expect_rejected(with({{"ringLatency", -1e-6}}), {"correctedTerms", "ringLatency", "negative"}, "negative latency");
  expect_rejected(with({{"ringLatency", "5us"}}), {"correctedTerms", "ringLatency", "number"}, "string latency");
  expect_rejected(with({{"optimizerTimePerByte", -1}}), {"correctedTerms", "optimizerTimePerByte", "negative"},
                  "negative optimizer cost");
  expect_rejected(with({{"dataParallelBandwidth", 0}}), {"correctedTerms", "dataParallelBandwidth", "positive"},
                  "zero bandwidth");
  expect_rejected(with({{"dataParallelBandwidth", -4}}), {"correctedTerms", "dataParallelBandwidth", "positive"},
                  "negative bandwidth");
  expect_rejected(with({{"ringLatancy", 1}}), {"correctedTerms", "ringLatancy", "unknown"}, "misspelt key");

  // JSON has no literal for infinity: a number beyond the double range is how a file spells one.
  std::string text = with({{"ringLatency", 12345}}).dump();
  text.replace(text.find("12345"), 5, "1e999");
  try {
    parse_placement_input(text, kSource);
    ADD_FAILURE() << "accepted an infinite ringLatency";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(kSource), std::string::npos) << message;
    EXPECT_NE(message.find("ringLatency"), std::string::npos) << message;
    EXPECT_NE(message.find("finite"), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

// The reference output has exactly placement.md's keys; the parts appear only with corrected terms.
TEST(PlacementJson, ReferenceOutputHasNoParts) {
  const PlacementInput in = accepted(base_input());
  const Plan plan = make_planner(in.cluster)->solve(in.chains, in.cluster);
  const PlanCheck hand = evaluate_hand_set(in.chains, in.cluster, *in.hand_set, in.hand_set_layers);
  ASSERT_TRUE(hand.feasible);
  const json out = json::parse(phaze::io::placement_output_json(in, plan, hand).dump());
  std::vector<std::string> keys;
  for (const auto& [key, value] : out.items()) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(keys, (std::vector<std::string>{"dataParallelDegree", "finalTimePerBatch", "fixedStrategyTimePerBatch",
                                            "stages", "tensorParallelDegree"}));
}

// Two nodes (fw 1, bw 1, 8 parameter bytes, no activations, a 0-byte edge), K = 4, N = 8, bandwidth 2,
// α = 0.25, data-parallel links at 4 bytes/s: the best plan is one node per stage on d = 2,
// 2*(4 + 1) + 2*(1/2)*8/4 + 2*1*0.25 = 8 + 2 + 2.5 = 12.5 (planner_examples_test.cpp enumerates the others);
// the hand-set p = 2, t = 1, d = 2, L = 2 is the same plan.
TEST(PlacementJson, OutputWithCorrectedTermsHasTheParts) {
  json j = base_input();
  j["nodes"].erase("2");
  j["edges"].erase("2");
  j["maxMemoryPerDevice"] = 1000;
  j["bandwidth"] = 2;
  j["nodes"]["1"] = json::array({make_node(10, 8, 0, 1, 1), make_node(11, 8, 0, 1, 1)});
  j["edges"]["1"] = json::array({make_edge(10, 11, 0)});
  j["correctedTerms"] = {{"ringLatency", 0.25}, {"dataParallelBandwidth", 4}};
  const PlacementInput in = accepted(j);
  const Plan plan = make_planner(in.cluster)->solve(in.chains, in.cluster);
  const PlanCheck hand = evaluate_hand_set(in.chains, in.cluster, *in.hand_set, in.hand_set_layers);
  const json out = json::parse(phaze::io::placement_output_json(in, plan, hand).dump());
  EXPECT_DOUBLE_EQ(out["finalTimePerBatch"].get<double>(), 12.5);
  EXPECT_EQ(out["dataParallelDegree"], 2);
  for (const char* key : {"timePerBatchParts", "fixedStrategyTimePerBatchParts"}) {
    SCOPED_TRACE(key);
    ASSERT_TRUE(out.contains(key)) << out.dump();
    const json& parts = out[key];
    EXPECT_DOUBLE_EQ(parts["pipelineSteadyState"].get<double>(), 8.0);
    EXPECT_DOUBLE_EQ(parts["pipelineFillDrain"].get<double>(), 2.0);
    EXPECT_DOUBLE_EQ(parts["dataParallelSync"].get<double>(), 2.5);
    EXPECT_DOUBLE_EQ(parts["optimizerStep"].get<double>(), 0.0);
  }

  // Nothing fits: both parts are null.
  j["maxMemoryPerDevice"] = 1;
  const PlacementInput tight = accepted(j);
  const json none =
      json::parse(phaze::io::placement_output_json(
                      tight, make_planner(tight.cluster)->solve(tight.chains, tight.cluster),
                      evaluate_hand_set(tight.chains, tight.cluster, *tight.hand_set, tight.hand_set_layers))
                      .dump());
  EXPECT_TRUE(none["timePerBatchParts"].is_null());
  EXPECT_TRUE(none["fixedStrategyTimePerBatchParts"].is_null());
}

}  // namespace

namespace {

// Hardening: sizes beyond placement_limits and numbers JSON cannot hold are refused, naming the item.
TEST(PlacementJson, SizesBeyondTheLimitsAreRefused) {
  using namespace phaze::io::placement_limits;
  auto with = [](const char* key, const json& value) {
    json j = base_input();
    j[key] = value;
    return j;
  };
  expect_rejected(with("mbsInBatch", kMicroBatches + 1), {"mbsInBatch", std::to_string(kMicroBatches + 1)}, "N");
  accepted(with("mbsInBatch", kMicroBatches));
  // Without the bounds p·t·d = 2^62 · 4 · 4 wraps to 0 and passes the device check.
  expect_rejected(with("fixedPP", int64_t{1} << 62), {"fixedPP"}, "p = 2^62");
  expect_rejected(with("fixedTMPC", kDevices + 1), {"fixedTMPC"}, "t");
  expect_rejected(with("fixedDP", kDevices + 1), {"fixedDP"}, "d");
  expect_rejected(with("numTransformerLayers", kTransformerLayers + 1), {"numTransformerLayers"}, "layers");
  accepted(with("fixedPP", kDevices));

  json many = base_input();
  many["nodes"].erase("2");
  many["edges"].erase("2");
  many["nodes"]["1"] = json::array();
  many["edges"]["1"] = json::array();
  for (int64_t id = 0; id <= kNodes; ++id) {
    many["nodes"]["1"].push_back(make_node(id));
    if (id > 0) many["edges"]["1"].push_back(make_edge(id - 1, id));
  }
  expect_rejected(many, {"nodes[\"1\"]", std::to_string(kNodes + 1)}, "too many nodes");
  many["nodes"]["1"].erase(many["nodes"]["1"].size() - 1);
  many["edges"]["1"].erase(many["edges"]["1"].size() - 1);
  EXPECT_EQ(accepted(many).node_ids.size(), static_cast<size_t>(kNodes));

  json widths = base_input();
  for (int t = 3; t <= kWidths + 1; ++t) {
    widths["nodes"][std::to_string(t)] = widths["nodes"]["2"];
    widths["edges"][std::to_string(t)] = widths["edges"]["2"];
  }
  expect_rejected(widths, {"'nodes'", std::to_string(kWidths + 1)}, "too many widths");
}

TEST(PlacementJson, IntegersBeyondSixtyFourBitsAreNotReadAsNegative) {
  json j = base_input();
  j["nodes"].erase("2");
  j["edges"].erase("2");
  std::string text = j.dump();
  // 2^64 − 1 as a node id: once read as −1.
  const std::string id = "\"id\":12";
  ASSERT_NE(text.find(id), std::string::npos);
  text.replace(text.find(id), id.size(), "\"id\":18446744073709551615");
  try {
    parse_placement_input(text, kSource);
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(kSource), std::string::npos) << message;
    EXPECT_NE(message.find("18446744073709551615"), std::string::npos) << message;
    EXPECT_NE(message.find("id"), std::string::npos) << message;
  }
}

// Times that add up beyond the double range made every plan's time infinite and the answer "no partition
// fits in memory"; the file is refused and the reason given.
TEST(PlacementJson, TimesThatCannotBeFiniteAreRefused) {
  json latency = base_input();
  latency["nodes"]["1"][0]["optimalLatencyFw"] = 1e308;
  expect_rejected(latency, {"times are not finite", "width 1"}, "latency 1e308");

  json ring = base_input();
  ring["correctedTerms"] = json{{"ringLatency", 1e308}};
  expect_rejected(ring, {"times are not finite"}, "ring latency 1e308");

  json transfer = base_input();
  transfer["bandwidth"] = 1e-307;
  expect_rejected(transfer, {"times are not finite"}, "transfers at 1e-307 bytes/s");

  // Large but finite times are still answered.
  json large = base_input();
  for (json& node : large["nodes"]["1"]) node["optimalLatencyFw"] = 1e200;
  EXPECT_EQ(accepted(large).chains.size(), 2u);
}

TEST(PlacementJson, DuplicateKeysAndNonFiniteNumbersAreNamed) {
  const std::string base = base_input().dump();
  std::string twice = base;
  twice.insert(1, "\"maxDevices\":8,");
  try {
    parse_placement_input(twice, kSource);
    ADD_FAILURE() << "accepted a duplicate key";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("maxDevices"), std::string::npos) << e.what();
  }
  std::string huge = base;
  const std::string key = "\"bandwidth\":10";
  ASSERT_NE(huge.find(key), std::string::npos);
  huge.replace(huge.find(key), key.size(), "\"bandwidth\":1e999");
  try {
    parse_placement_input(huge, kSource);
    ADD_FAILURE() << "accepted 1e999";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bandwidth"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("1e999"), std::string::npos) << e.what();
  }
}

}  // namespace
