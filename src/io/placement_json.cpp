#include "io/placement_json.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "placement/links.h"
#include "util/input_error.h"
#include "util/json_input.h"

namespace phaze::io {

namespace {

using nlohmann::json;
using nlohmann::ordered_json;
using namespace phaze::placement;

/// Reads typed fields of one JSON object; errors name the source, the item and the key.
class Fields {
 public:
  Fields(const json& object, std::string source, std::string item)
      : j_(object), source_(std::move(source)), item_(std::move(item)) {
    if (!j_.is_object()) fail(fmt::format("{} must be an object", item_.empty() ? "the input" : item_));
  }

  const json& get(const char* key) const {
    if (!j_.contains(key)) fail(fmt::format("{}missing key '{}'", where(), key));
    return j_.at(key);
  }
  bool has(const char* key) const { return j_.contains(key) && !j_.at(key).is_null(); }

  double number(const char* key) const {
    const json& v = get(key);
    if (!v.is_number()) fail(fmt::format("{}'{}' = {} must be a number", where(), key, v.dump()));
    const double x = v.get<double>();
    if (!std::isfinite(x)) fail(fmt::format("{}'{}' = {} must be finite", where(), key, v.dump()));
    return x;
  }

  double non_negative(const char* key) const {
    const double x = number(key);
    if (x < 0) fail(fmt::format("{}'{}' = {} must not be negative", where(), key, get(key).dump()));
    return x;
  }

  int64_t integer(const char* key) const {
    const json& v = get(key);
    if (v.is_number_integer()) return v.get<int64_t>();
    if (v.is_number_float()) {
      const double x = v.get<double>();
      if (std::isfinite(x) && x == std::floor(x) && std::abs(x) < 9e15) return static_cast<int64_t>(x);
    }
    fail(fmt::format("{}'{}' = {} must be an integer", where(), key, v.dump()));
  }

  int64_t integer_in(const char* key, int64_t lo, int64_t hi) const {
    const int64_t x = integer(key);
    if (x < lo || x > hi) fail(fmt::format("{}'{}' = {} must lie in [{}, {}]", where(), key, x, lo, hi));
    return x;
  }

  bool boolean(const char* key) const {
    const json& v = get(key);
    if (!v.is_boolean()) fail(fmt::format("{}'{}' = {} must be true or false", where(), key, v.dump()));
    return v.get<bool>();
  }

  [[noreturn]] void fail(const std::string& message) const {
    throw InputError(fmt::format("{}: {}", source_, message));
  }

 private:
  std::string where() const { return item_.empty() ? "" : item_ + ": "; }

  const json& j_;
  std::string source_;
  std::string item_;
};

struct RawNode {
  int64_t id;
  ChainNode node;
};

struct RawEdge {
  int64_t from, to;
  double bytes;
};

/// Orders the node ids topologically and requires the order to be unique (every stage must be a chain).
std::vector<int64_t> unique_topological_order(const std::vector<int64_t>& ids, const std::vector<RawEdge>& edges,
                                              const Fields& top) {
  std::map<int64_t, int> indegree;
  std::map<int64_t, std::vector<int64_t>> successors;
  for (int64_t id : ids) indegree[id] = 0;
  for (const RawEdge& e : edges) {
    ++indegree[e.to];
    successors[e.from].push_back(e.to);
  }
  std::vector<int64_t> ready, order;
  for (const auto& [id, degree] : indegree)
    if (degree == 0) ready.push_back(id);
  while (!ready.empty()) {
    if (ready.size() > 1)
      top.fail(
          fmt::format("the layer graph must be a chain (unique topological order): nodes {} and {} are not "
                      "ordered by any path",
                      ready[0], ready[1]));
    const int64_t id = ready.back();
    ready.pop_back();
    order.push_back(id);
    for (int64_t next : successors[id])
      if (--indegree[next] == 0) ready.push_back(next);
  }
  if (order.size() != ids.size()) {
    for (const auto& [id, degree] : indegree)
      if (degree > 0) top.fail(fmt::format("the layer graph has a cycle through node {}", id));
  }
  return order;
}

std::vector<RawNode> parse_nodes(const json& list, const std::string& width_key, int64_t width, const Fields& top,
                                 const std::string& source) {
  if (!list.is_array() || list.empty()) top.fail(fmt::format("nodes[\"{}\"] must be a non-empty array", width_key));
  if (list.size() > static_cast<size_t>(placement_limits::kNodes))
    top.fail(fmt::format("nodes[\"{}\"] has {} nodes, at most {} allowed", width_key, list.size(),
                         placement_limits::kNodes));
  std::vector<RawNode> nodes;
  std::set<int64_t> seen;
  for (size_t k = 0; k < list.size(); ++k) {
    const Fields f(list[k], source, fmt::format("nodes[\"{}\"][{}]", width_key, k));
    RawNode raw;
    raw.id = f.integer("id");
    if (!seen.insert(raw.id).second) f.fail(fmt::format("nodes[\"{}\"]: duplicate node id {}", width_key, raw.id));
    raw.node.parameter_bytes = f.non_negative("parameterSize");
    raw.node.activation_bytes = f.non_negative("activationSize");
    raw.node.forward_time = f.non_negative("optimalLatencyFw");
    raw.node.backward_time = f.non_negative("optimalLatencyBw");
    raw.node.tensor_parallel = f.boolean("isTensorParallelized");
    if (raw.node.tensor_parallel && width == 1)
      f.fail(fmt::format("nodes[\"1\"][{}] (id {}): isTensorParallelized is true under width 1", k, raw.id));
    nodes.push_back(raw);
  }
  return nodes;
}

std::vector<RawEdge> parse_edges(const json& list, const std::string& width_key, const std::set<int64_t>& ids,
                                 const Fields& top, const std::string& source) {
  if (!list.is_array()) top.fail(fmt::format("edges[\"{}\"] must be an array", width_key));
  if (list.size() > static_cast<size_t>(placement_limits::kEdges))
    top.fail(fmt::format("edges[\"{}\"] has {} edges, at most {} allowed", width_key, list.size(),
                         placement_limits::kEdges));
  std::vector<RawEdge> edges;
  std::set<std::pair<int64_t, int64_t>> seen;
  for (size_t k = 0; k < list.size(); ++k) {
    const std::string item = fmt::format("edges[\"{}\"][{}]", width_key, k);
    const Fields f(list[k], source, item);
    RawEdge e{f.integer("sourceId"), f.integer("destId"), f.non_negative("communicationCost")};
    if (!ids.count(e.from)) f.fail(fmt::format("{}: sourceId {} names no node", item, e.from));
    if (!ids.count(e.to)) f.fail(fmt::format("{}: destId {} names no node", item, e.to));
    if (e.from == e.to) f.fail(fmt::format("{}: self-loop on node {}", item, e.from));
    if (!seen.insert({e.from, e.to}).second) f.fail(fmt::format("{}: duplicate edge {} -> {}", item, e.from, e.to));
    edges.push_back(e);
  }
  return edges;
}

std::set<std::pair<int64_t, int64_t>> edge_set(const std::vector<RawEdge>& edges) {
  std::set<std::pair<int64_t, int64_t>> out;
  for (const RawEdge& e : edges) out.insert({e.from, e.to});
  return out;
}

/// Refuses times that could overflow. A stage's load is at most its forward pass twice (once more under
/// recomputation) plus its backward pass, each at most the sum of its node times and transfers; a plan runs
/// at most N + n − 1 loads, one reference synchronisation, one ring all-reduce of every parameter byte (2·(K − 1)
/// ring steps) and one optimizer step. When that bound is finite every time per batch is; when it is not, the
/// planner would compare infinities and report no plan, so the file is refused with the reason instead.
void require_finite_times(const Chain& chain, const Cluster& c, const Fields& top) {
  double work_s = 0, transfer_s = 0, parameter_bytes = 0;
  for (const ChainNode& n : chain.nodes) {
    work_s += n.forward_time + n.backward_time;
    parameter_bytes += n.parameter_bytes;
  }
  // The placement format's networks are one link each: every send and ring runs on it.
  const cost::GroupLink send = pipeline_link(c, chain.width), ring = reference_link(c);
  for (const ChainEdge& e : chain.edges) transfer_s += cost::transfer_s(send, e.bytes);
  const double load_s = 3 * (work_s + transfer_s);
  const double slots = static_cast<double>(c.micro_batches) + static_cast<double>(chain.nodes.size());
  const double sync_s = 4 * parameter_bytes / send.bandwidth + 2 * parameter_bytes / ring.bandwidth +
                        2 * static_cast<double>(c.devices) * ring.latency_s +
                        parameter_bytes * c.corrected.optimizer_seconds_per_byte;
  const double bound_s = load_s * slots + sync_s;
  if (!std::isfinite(bound_s))
    top.fail(fmt::format(
        "times are not finite: under width {} the node latencies ({:g} s), transfers ({:g} s), synchronisation and "
        "optimizer terms ({:g} s) can add up to more than a double holds; give times far below 1e300 s",
        chain.width, work_s, transfer_s, sync_s));
}

/// The cluster's fields: devices, the one bandwidth of every transfer, memory, micro-batches, recomputation,
/// optimizer.
void read_cluster(const Fields& top, Cluster& c) {
  c.devices = top.integer_in("maxDevices", 1, placement_limits::kDevices);
  // placement.md's one bandwidth carries every transfer; correctedTerms may give the data-parallel link its own.
  const double bandwidth = top.number("bandwidth");
  if (!(bandwidth > 0)) top.fail(fmt::format("'bandwidth' = {} must be positive", bandwidth));
  c.pipeline_network = hw::one_tier_network(bandwidth);
  c.data_parallel_network = hw::one_tier_network(bandwidth);
  c.memory_bytes = top.number("maxMemoryPerDevice");
  if (!(c.memory_bytes > 0)) top.fail(fmt::format("'maxMemoryPerDevice' = {} must be positive", c.memory_bytes));
  c.micro_batches = top.integer_in("mbsInBatch", 1, placement_limits::kMicroBatches);
  c.recompute = top.boolean("activationRecomputation");
  const json& optimizer = top.get("optimizerAlgorithm");
  if (optimizer == "SGD") {
    c.optimizer = Optimizer::Sgd;
  } else if (optimizer == "Adam") {
    c.optimizer = Optimizer::Adam;
  } else {
    top.fail(fmt::format("'optimizerAlgorithm' = {} must be \"SGD\" or \"Adam\"", optimizer.dump()));
  }
}

/// The widths keyed in `nodes`, each an integer in range and given once, and `edges` keyed by the same.
std::map<int64_t, std::string> read_widths(const json& nodes, const json& edges, const Fields& top) {
  std::map<int64_t, std::string> widths;  // numeric width → its key
  for (const auto& [key, value] : nodes.items()) {
    const bool digits = !key.empty() && key.size() <= 5 &&
                        std::all_of(key.begin(), key.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
    const int64_t t = digits ? std::stoll(key) : 0;
    if (t < 1 || t > placement_limits::kDevices)
      top.fail(fmt::format("nodes: width \"{}\" must be an integer in [1, {}]", key, placement_limits::kDevices));
    if (!widths.emplace(t, key).second) top.fail(fmt::format("nodes: width {} appears twice", t));
  }
  for (const auto& [key, value] : edges.items())
    if (!nodes.contains(key)) top.fail(fmt::format("edges: width \"{}\" has no nodes", key));
  for (const auto& [t, key] : widths)
    if (!edges.contains(key)) top.fail(fmt::format("edges: width \"{}\" is missing", key));

  return widths;
}

/// One chain per width, in ascending width: the same node ids and edges at every width, positions in the
/// unique topological order of the first.
void read_chains(const json& nodes, const json& edges, const std::map<int64_t, std::string>& widths, const Fields& top,
                 const std::string& source, PlacementInput& input) {
  std::set<int64_t> reference_ids;
  std::set<std::pair<int64_t, int64_t>> reference_edges;
  bool first = true;
  for (const auto& [t, key] : widths) {
    std::vector<RawNode> raw_nodes = parse_nodes(nodes.at(key), key, t, top, source);
    std::set<int64_t> ids;
    for (const RawNode& r : raw_nodes) ids.insert(r.id);
    std::vector<RawEdge> raw_edges = parse_edges(edges.at(key), key, ids, top, source);
    if (first) {
      reference_ids = ids;
      reference_edges = edge_set(raw_edges);
      std::vector<int64_t> id_list(ids.begin(), ids.end());
      input.node_ids = unique_topological_order(id_list, raw_edges, top);
      first = false;
    } else {
      if (ids != reference_ids)
        top.fail(fmt::format("nodes[\"{}\"]: node ids differ from those of width {}", key, widths.begin()->first));
      if (edge_set(raw_edges) != reference_edges)
        top.fail(fmt::format("edges[\"{}\"]: edge set differs from that of width {}", key, widths.begin()->first));
    }
    std::map<int64_t, int> position;
    for (size_t p = 0; p < input.node_ids.size(); ++p) position[input.node_ids[p]] = static_cast<int>(p);
    Chain chain;
    chain.width = t;
    chain.nodes.resize(raw_nodes.size());
    for (const RawNode& r : raw_nodes) chain.nodes[position[r.id]] = r.node;
    for (const RawEdge& e : raw_edges) chain.edges.push_back(ChainEdge{position[e.from], position[e.to], e.bytes});
    input.chains.push_back(std::move(chain));
  }
}

/// correctedTerms: our time-per-batch terms switched on, with the data-parallel link's latency and bandwidth
/// and the optimizer's seconds per byte where given.
void read_corrected_terms(const Fields& top, const std::string& source, Cluster& c) {
  const Fields f(top.get("correctedTerms"), source, "correctedTerms");
  static const std::set<std::string> kKnown = {"ringLatency", "dataParallelBandwidth", "optimizerTimePerByte"};
  for (const auto& [key, value] : top.get("correctedTerms").items())
    if (!kKnown.count(key))
      f.fail(
          fmt::format("correctedTerms: unknown key '{}' (known: ringLatency, dataParallelBandwidth, "
                      "optimizerTimePerByte)",
                      key));
  CorrectedTerms& terms = c.corrected;
  terms.enabled = true;
  hw::NetworkTier& ring = c.data_parallel_network.tiers.front();  // the format's one data-parallel link
  if (f.has("ringLatency")) ring.latency_s = f.non_negative("ringLatency");
  if (f.has("dataParallelBandwidth")) {
    ring.bandwidth = f.number("dataParallelBandwidth");
    if (!(ring.bandwidth > 0))
      f.fail(fmt::format("correctedTerms: 'dataParallelBandwidth' = {} must be positive", ring.bandwidth));
  }
  if (f.has("optimizerTimePerByte")) terms.optimizer_seconds_per_byte = f.non_negative("optimizerTimePerByte");
}

/// The hand-set strategy (fixedPP, fixedTMPC, fixedDP, numTransformerLayers).
void read_hand_set(const Fields& top, PlacementInput& input) {
  // Each degree at most the largest cluster: their product stays below 10^12, far inside int64_t.
  HandSetPlan hand;
  hand.pipeline = top.integer_in("fixedPP", 1, placement_limits::kDevices);
  hand.width = top.integer_in("fixedTMPC", 1, placement_limits::kDevices);
  hand.data_parallel = top.integer_in("fixedDP", 1, placement_limits::kDevices);
  input.hand_set_layers = top.integer_in("numTransformerLayers", 0, placement_limits::kTransformerLayers);
  input.hand_set = hand;
}

}  // namespace

PlacementInput parse_placement_input(const std::string& text, const std::string& source) {
  const json j = parse_json_input(text, source);
  const Fields top(j, source, "");
  PlacementInput input;
  Cluster& c = input.cluster;
  read_cluster(top, c);

  const json& nodes = top.get("nodes");
  const json& edges = top.get("edges");
  if (!nodes.is_object() || nodes.empty()) top.fail("'nodes' must be an object with at least one width");
  if (nodes.size() > static_cast<size_t>(placement_limits::kWidths))
    top.fail(fmt::format("'nodes' has {} widths, at most {} allowed", nodes.size(), placement_limits::kWidths));
  if (!edges.is_object()) top.fail("'edges' must be an object keyed by width");
  read_chains(nodes, edges, read_widths(nodes, edges, top), top, source, input);

  if (top.has("correctedTerms")) read_corrected_terms(top, source, c);
  for (const Chain& chain : input.chains) require_finite_times(chain, c, top);

  if (top.has("fixedPP") || top.has("fixedTMPC") || top.has("fixedDP") || top.has("numTransformerLayers"))
    read_hand_set(top, input);
  return input;
}

ordered_json placement_input_json(const PlacementInput& input) {
  const Cluster& c = input.cluster;
  ordered_json out{{"maxMemoryPerDevice", c.memory_bytes},
                   {"maxDevices", c.devices},
                   {"bandwidth", c.pipeline_network.tiers.front().bandwidth},
                   {"mbsInBatch", c.micro_batches},
                   {"activationRecomputation", c.recompute},
                   {"optimizerAlgorithm", c.optimizer == Optimizer::Adam ? "Adam" : "SGD"}};
  if (c.corrected.enabled) {
    const hw::NetworkTier& ring = c.data_parallel_network.tiers.front();
    ordered_json terms{{"ringLatency", ring.latency_s},
                       {"optimizerTimePerByte", c.corrected.optimizer_seconds_per_byte}};
    if (ring.bandwidth != c.pipeline_network.tiers.front().bandwidth) terms["dataParallelBandwidth"] = ring.bandwidth;
    out["correctedTerms"] = terms;
  }
  if (input.hand_set) {
    out["fixedPP"] = input.hand_set->pipeline;
    out["fixedTMPC"] = input.hand_set->width;
    out["fixedDP"] = input.hand_set->data_parallel;
    out["numTransformerLayers"] = input.hand_set_layers;
  }
  ordered_json nodes = ordered_json::object(), edges = ordered_json::object();
  for (const Chain& chain : input.chains) {
    ordered_json node_list = ordered_json::array(), edge_list = ordered_json::array();
    for (size_t p = 0; p < chain.nodes.size(); ++p) {
      const ChainNode& n = chain.nodes[p];
      node_list.push_back({{"id", input.node_ids[p]},
                           {"parameterSize", n.parameter_bytes},
                           {"activationSize", n.activation_bytes},
                           {"optimalLatencyFw", n.forward_time},
                           {"optimalLatencyBw", n.backward_time},
                           {"isTensorParallelized", n.tensor_parallel}});
    }
    for (const ChainEdge& e : chain.edges)
      edge_list.push_back(
          {{"sourceId", input.node_ids[e.from]}, {"destId", input.node_ids[e.to]}, {"communicationCost", e.bytes}});
    nodes[std::to_string(chain.width)] = node_list;
    edges[std::to_string(chain.width)] = edge_list;
  }
  out["nodes"] = nodes;
  out["edges"] = edges;
  return out;
}

namespace {

ordered_json parts_json(const BatchTimeParts& parts) {
  return ordered_json{{"pipelineSteadyState", parts.steady_state},
                      {"pipelineFillDrain", parts.fill_drain},
                      {"dataParallelSync", parts.data_parallel_sync},
                      {"optimizerStep", parts.optimizer_step}};
}

}  // namespace

ordered_json placement_output_json(const PlacementInput& input, const Plan& plan, const PlanCheck& hand_set) {
  ordered_json out;
  ordered_json stages = ordered_json::array();
  if (plan.feasible) {
    for (const Stage& stage : plan.stages) {
      ordered_json ids = ordered_json::array();
      for (int p = stage.first; p < stage.last; ++p) ids.push_back(input.node_ids[p]);
      stages.push_back({{"nodes", ids}, {"devicesForStage", stage.devices}});
    }
  }
  out["stages"] = stages;
  out["dataParallelDegree"] = plan.feasible ? ordered_json(plan.data_parallel) : ordered_json(nullptr);
  out["tensorParallelDegree"] = plan.feasible ? ordered_json(plan.width) : ordered_json(nullptr);
  out["finalTimePerBatch"] = plan.feasible ? ordered_json(plan.time_per_batch) : ordered_json(nullptr);
  out["fixedStrategyTimePerBatch"] = hand_set.feasible ? ordered_json(hand_set.time_per_batch) : ordered_json(nullptr);
  if (!hand_set.feasible) out["fixedStrategyInfeasibleReason"] = hand_set.reason;
  if (input.cluster.corrected.enabled) {  // only then: the reference output stays exactly placement.md's
    out["timePerBatchParts"] = plan.feasible ? parts_json(plan.parts) : ordered_json(nullptr);
    out["fixedStrategyTimePerBatchParts"] = hand_set.feasible ? parts_json(hand_set.parts) : ordered_json(nullptr);
  }
  return out;
}

}  // namespace phaze::io
