#include "io/piper_json.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>

#include "util/input_error.h"
#include "util/json_input.h"

namespace phaze::io {

namespace {

using nlohmann::json;
using piper::Edge;
using piper::Node;
using piper::Problem;
using piper::Tmpc;
namespace limits = piper::piper_limits;

/// Reads fields of one JSON object; every message names the file and the place.
class Fields {
 public:
  Fields(const json& j, std::string place, const std::string& source)
      : j_(j), place_(std::move(place)), source_(source) {
    if (!j_.is_object()) fail(place_, j_, "an object");
  }
  [[noreturn]] void fail(const std::string& place, const json& value, const std::string& what) const {
    throw InputError(
        fmt::format("{}: {} = {}: must be {}", source_, place.empty() ? "the file" : place, value.dump(), what));
  }
  std::string at(const std::string& key) const { return place_.empty() ? key : place_ + "." + key; }
  bool has(const std::string& key) const { return j_.contains(key); }
  const json& get(const std::string& key) const {
    if (!j_.contains(key)) throw InputError(fmt::format("{}: missing field {}", source_, at(key)));
    return j_.at(key);
  }
  double number(const std::string& key, double lo, double hi, bool open_low = false) const {
    const json& v = get(key);
    if (!v.is_number()) fail(at(key), v, "a number");
    const double x = v.get<double>();
    if (!(std::isfinite(x) && (open_low ? x > lo : x >= lo) && x <= hi))
      fail(at(key), v, fmt::format("a number {} {:g} and at most {:g}", open_low ? ">" : "≥", lo, hi));
    return x;
  }
  int64_t integer(const std::string& key, int64_t lo, int64_t hi) const {
    const json& v = get(key);
    if (!v.is_number_integer() || v.get<int64_t>() < lo || v.get<int64_t>() > hi)
      fail(at(key), v, fmt::format("an integer from {} to {}", lo, hi));
    return v.get<int64_t>();
  }
  const json& array(const std::string& key, size_t most) const {
    const json& v = get(key);
    if (!v.is_array()) fail(at(key), v, "an array");
    if (v.size() > most)
      throw InputError(fmt::format("{}: {} has {} items, at most {} allowed", source_, at(key), v.size(), most));
    return v;
  }
  const json& object(const std::string& key) const {
    const json& v = get(key);
    if (!v.is_object()) fail(at(key), v, "an object");
    return v;
  }

 private:
  const json& j_;
  std::string place_;
  const std::string& source_;
};

constexpr double kMaxBytes = 1e18;    // 1 EB: any real memory or message
constexpr double kMaxSeconds = 1e12;  // any real time per sample
constexpr double kMaxBandwidth = 1e18;

/// A width key: a decimal integer as a string ("2"), nothing else.
int64_t width_of(const std::string& key, const std::string& place, const std::string& source) {
  int64_t t = 0;
  const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), t);
  if (ec != std::errc() || end != key.data() + key.size() || t < 1 || t > limits::kWidth)
    throw InputError(fmt::format("{}: {} has the width key \"{}\": must be an integer from 1 to {} written in decimal",
                                 source, place, key, limits::kWidth));
  return t;
}

/// A sync map keyed by neighbour ids: exactly `neighbours`' ids, bytes ≥ 0, in the order of `neighbours`.
std::vector<double> sync_map(const Fields& f, const std::string& key, const std::vector<int64_t>& neighbours,
                             const char* which, const std::string& source) {
  const json& m = f.object(key);
  std::vector<double> out;
  for (int64_t id : neighbours) {
    const std::string k = std::to_string(id);
    if (!m.contains(k))
      throw InputError(fmt::format("{}: {} has no entry for {} {}: it must name every {} exactly once", source,
                                   f.at(key), which, id, which));
    const json& v = m.at(k);
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0 || v.get<double>() > kMaxBytes)
      f.fail(f.at(key) + "[\"" + k + "\"]", v, fmt::format("a number of bytes from 0 to {:g}", kMaxBytes));
    out.push_back(v.get<double>());
  }
  for (const auto& [k, v] : m.items()) {
    int64_t id = 0;
    const auto [end, ec] = std::from_chars(k.data(), k.data() + k.size(), id);
    if (ec != std::errc() || end != k.data() + k.size() ||
        std::find(neighbours.begin(), neighbours.end(), id) == neighbours.end())
      throw InputError(fmt::format("{}: {} has the key \"{}\", which is not the id of a {} of the node", source,
                                   f.at(key), k, which));
  }
  return out;
}

/// The nodes' ids and names, in the file's order; the index of each id. The edges and the sync maps refer to
/// the ids.
std::map<int64_t, int> read_node_ids(const json& nodes, const std::string& source, Problem& p) {
  std::map<int64_t, int> index;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Fields f(nodes[i], fmt::format("nodes[{}]", i), source);
    const int64_t id = f.integer("id", INT64_MIN + 1, INT64_MAX);
    if (!index.emplace(id, static_cast<int>(i)).second)
      throw InputError(fmt::format("{}: nodes[{}].id = {}: another node has this id", source, i, id));
    Node n;
    n.id = id;
    if (f.has("name")) {
      if (!f.get("name").is_string()) f.fail(f.at("name"), f.get("name"), "a string");
      n.name = f.get("name").get<std::string>();
    }
    p.nodes.push_back(std::move(n));
  }
  return index;
}

/// The edges, each between two known nodes, none from a node to itself, none twice.
void read_edges(const json& edges, const std::map<int64_t, int>& index, const std::string& source, Problem& p) {
  std::set<std::pair<int, int>> seen;
  for (size_t i = 0; i < edges.size(); ++i) {
    const Fields f(edges[i], fmt::format("edges[{}]", i), source);
    auto endpoint = [&](const char* key) {
      const int64_t id = f.integer(key, INT64_MIN + 1, INT64_MAX);
      const auto at = index.find(id);
      if (at == index.end()) throw InputError(fmt::format("{}: {} = {}: no node has this id", source, f.at(key), id));
      return at->second;
    };
    Edge e;
    e.from = endpoint("sourceId");
    e.to = endpoint("destId");
    e.bytes = f.number("communicationCost", 0, kMaxBytes);
    if (e.from == e.to)
      throw InputError(fmt::format("{}: edges[{}] joins node {} to itself", source, i, p.nodes[e.from].id));
    if (!seen.emplace(e.from, e.to).second)
      throw InputError(
          fmt::format("{}: edges[{}] repeats the edge {} -> {}", source, i, p.nodes[e.from].id, p.nodes[e.to].id));
    p.nodes[static_cast<size_t>(e.from)].out_edges.push_back(static_cast<int>(i));
    p.nodes[static_cast<size_t>(e.to)].in_edges.push_back(static_cast<int>(i));
    p.edges.push_back(e);
  }
}

/// Refuses edges that form a cycle: Kahn's order must take every node.
void check_acyclic(const Problem& p, const std::string& source) {
  std::vector<int> waiting(p.nodes.size(), 0), ready;
  for (const Edge& e : p.edges) ++waiting[static_cast<size_t>(e.to)];
  for (size_t v = 0; v < p.nodes.size(); ++v)
    if (waiting[v] == 0) ready.push_back(static_cast<int>(v));
  size_t taken = 0;
  while (!ready.empty()) {
    const int v = ready.back();
    ready.pop_back();
    ++taken;
    for (int e : p.nodes[static_cast<size_t>(v)].out_edges)
      if (--waiting[static_cast<size_t>(p.edges[static_cast<size_t>(e)].to)] == 0)
        ready.push_back(p.edges[static_cast<size_t>(e)].to);
  }
  if (taken != p.nodes.size()) {
    const auto v = std::find_if(waiting.begin(), waiting.end(), [](int w) { return w > 0; }) - waiting.begin();
    throw InputError(fmt::format("{}: the edges form a cycle (through node {})", source, p.nodes[v].id));
  }
}

/// The TMPCs of every node, per width key; each node has one at some width.
void read_tmpcs(const json& nodes, const std::string& source, Problem& p) {
  std::map<int64_t, std::vector<std::vector<Tmpc>>> by_width;  // width → per node
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Fields f(nodes[i], fmt::format("nodes[{}]", i), source);
    Node& node = p.nodes[i];
    std::vector<int64_t> predecessors, successors;
    for (int e : node.in_edges) predecessors.push_back(p.nodes[p.edges[static_cast<size_t>(e)].from].id);
    for (int e : node.out_edges) successors.push_back(p.nodes[p.edges[static_cast<size_t>(e)].to].id);
    const json& widths = f.object("TMPCs");
    bool any = false;
    for (const auto& [key, list] : widths.items()) {
      const std::string place = f.at("TMPCs") + "[\"" + key + "\"]";
      const int64_t t = width_of(key, f.at("TMPCs"), source);
      if (!list.is_array()) f.fail(place, list, "an array of TMPCs");
      if (static_cast<int64_t>(list.size()) > limits::kTmpcsPerWidth)
        throw InputError(
            fmt::format("{}: {} has {} TMPCs, at most {} allowed", source, place, list.size(), limits::kTmpcsPerWidth));
      auto& per_node = by_width[t];
      if (per_node.empty()) per_node.resize(nodes.size());
      if (!per_node[i].empty()) throw InputError(fmt::format("{}: {} gives width {} twice", source, f.at("TMPCs"), t));
      std::set<std::string> ids;
      for (size_t k = 0; k < list.size(); ++k) {
        const Fields c(list[k], fmt::format("{}[{}]", place, k), source);
        Tmpc tmpc;
        const json& id = c.get("id");
        if (!id.is_string() || id.get<std::string>().empty()) c.fail(c.at("id"), id, "a non-empty string");
        tmpc.id = id.get<std::string>();
        if (!ids.insert(tmpc.id).second)
          throw InputError(fmt::format("{}: {} = \"{}\": another TMPC of this node and width has this id", source,
                                       c.at("id"), tmpc.id));
        tmpc.time_per_sample_s = c.number("timePerSample", 0, kMaxSeconds);
        tmpc.parameter_bytes = c.number("parameterSize", 0, kMaxBytes);
        tmpc.memory_per_in_flight_bytes = c.number("memoryUsageA", 0, kMaxBytes);
        tmpc.memory_fixed_bytes = c.number("memoryUsageB", 0, kMaxBytes);
        tmpc.sync_in_bytes = sync_map(c, "syncTimeFw", predecessors, "predecessor", source);
        tmpc.sync_out_bytes = sync_map(c, "syncTimeBw", successors, "successor", source);
        per_node[i].push_back(std::move(tmpc));
      }
      any = any || !list.empty();
    }
    if (!any) throw InputError(fmt::format("{}: {}: node {} has no TMPC at any width", source, f.at("TMPCs"), node.id));
  }
  for (auto& [t, per_node] : by_width) {
    p.widths.push_back(t);
    for (size_t i = 0; i < p.nodes.size(); ++i) p.nodes[i].tmpcs.push_back(std::move(per_node[i]));
  }
}

}  // namespace

Problem read_piper_problem(const std::string& text, const std::string& source) {
  const json j = parse_json_input(text, source);
  const Fields top(j, "", source);
  Problem p;
  p.memory_per_device_bytes = top.number("maxMemoryPerDevice", 0, kMaxBytes, true);
  p.devices = top.integer("maxDevices", 1, limits::kDevices);
  p.bandwidth_bytes_per_s = top.number("bandwidth", 0, kMaxBandwidth, true);
  if (top.has("mbsInBatch") && top.has("maxBatchSize") && top.get("mbsInBatch") != top.get("maxBatchSize"))
    throw InputError(
        fmt::format("{}: mbsInBatch = {} and maxBatchSize = {} disagree: give one (they are two names of "
                    "the micro-batches per batch)",
                    source, top.get("mbsInBatch").dump(), top.get("maxBatchSize").dump()));
  p.micro_batches = top.integer(top.has("mbsInBatch") || !top.has("maxBatchSize") ? "mbsInBatch" : "maxBatchSize", 1,
                                limits::kMicroBatches);

  const json& nodes = top.array("nodes", limits::kNodes);
  if (nodes.empty()) throw InputError(fmt::format("{}: nodes is empty: give at least one node", source));
  const json& edges = top.array("edges", limits::kEdges);

  const std::map<int64_t, int> index = read_node_ids(nodes, source, p);
  read_edges(edges, index, source, p);
  check_acyclic(p, source);
  read_tmpcs(nodes, source, p);
  return p;
}

nlohmann::ordered_json piper_answer_json(const piper::Problem& problem, const piper::PiperAnswer& answer) {
  nlohmann::ordered_json out;
  out["timePerSample"] = answer.feasible ? nlohmann::ordered_json(answer.time_per_sample_s) : nullptr;
  out["stages"] = nlohmann::ordered_json::array();
  for (const piper::StagePlan& s : answer.stages) {
    nlohmann::ordered_json stage, ids = nlohmann::ordered_json::array(), tmpcs = nlohmann::ordered_json::object();
    const int w = piper::width_index(problem, s.width);
    for (size_t k = 0; k < s.nodes.size(); ++k) {
      const Node& node = problem.nodes[static_cast<size_t>(s.nodes[k])];
      ids.push_back(node.id);
      tmpcs[std::to_string(node.id)] = node.tmpcs[static_cast<size_t>(w)][static_cast<size_t>(s.tmpc[k])].id;
    }
    stage["nodes"] = ids;
    stage["dataParallelDegree"] = s.data_parallel;
    stage["tensorParallelDegree"] = s.width;
    stage["tmpcs"] = tmpcs;
    out["stages"].push_back(stage);
  }
  return out;
}

}  // namespace phaze::io
