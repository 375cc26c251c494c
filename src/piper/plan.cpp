#include "piper/plan.h"

#include <fmt/format.h>

#include <algorithm>

namespace phaze::piper {

int width_index(const Problem& problem, int64_t t) {
  const auto at = std::lower_bound(problem.widths.begin(), problem.widths.end(), t);
  return at != problem.widths.end() && *at == t ? static_cast<int>(at - problem.widths.begin()) : -1;
}

double cut_bytes(const Problem& problem, const Node& node, const Tmpc& c, const std::vector<char>& in_stage) {
  double cut = 0;
  for (size_t j = 0; j < node.in_edges.size(); ++j) {
    const Edge& e = problem.edges[static_cast<size_t>(node.in_edges[j])];
    if (!in_stage[static_cast<size_t>(e.from)]) cut += 2 * (e.bytes + c.sync_in_bytes[j]);
  }
  for (size_t j = 0; j < node.out_edges.size(); ++j) {
    const Edge& e = problem.edges[static_cast<size_t>(node.out_edges[j])];
    if (!in_stage[static_cast<size_t>(e.to)]) cut += 2 * (e.bytes + c.sync_out_bytes[j]);
  }
  return cut;
}

PlanEvaluation evaluate_plan(const Problem& problem, const std::vector<StagePlan>& stages) {
  PlanEvaluation out;
  const size_t n = problem.nodes.size();
  std::vector<int> stage_of(n, -1);
  int64_t devices = 0, degrees = 0;
  for (size_t i = 0; i < stages.size(); ++i) {
    const StagePlan& s = stages[i];
    if (s.nodes.empty()) return out.reason = fmt::format("stage {} has no node", i + 1), out;
    if (s.tmpc.size() != s.nodes.size())
      return out.reason = fmt::format("stage {} names {} TMPCs for {} nodes", i + 1, s.tmpc.size(), s.nodes.size()),
             out;
    if (s.data_parallel < 1 || problem.micro_batches % s.data_parallel != 0)
      return out.reason =
                 fmt::format("stage {}: d = {} does not divide N = {}", i + 1, s.data_parallel, problem.micro_batches),
             out;
    if (width_index(problem, s.width) < 0)
      return out.reason = fmt::format("stage {}: no node has width t = {}", i + 1, s.width), out;
    for (int v : s.nodes) {
      if (v < 0 || static_cast<size_t>(v) >= n || stage_of[static_cast<size_t>(v)] >= 0)
        return out.reason = fmt::format("stage {}: node index {} is unknown or in two stages", i + 1, v), out;
      stage_of[static_cast<size_t>(v)] = static_cast<int>(i);
    }
    devices += s.data_parallel * s.width;
    degrees += s.data_parallel;
  }
  for (size_t v = 0; v < n; ++v)
    if (stage_of[v] < 0) return out.reason = fmt::format("node {} is in no stage", problem.nodes[v].id), out;
  for (const Edge& e : problem.edges)
    if (stage_of[static_cast<size_t>(e.from)] > stage_of[static_cast<size_t>(e.to)])
      return out.reason = fmt::format("edge {} -> {} goes back from stage {} to stage {}", problem.nodes[e.from].id,
                                      problem.nodes[e.to].id, stage_of[static_cast<size_t>(e.from)] + 1,
                                      stage_of[static_cast<size_t>(e.to)] + 1),
             out;
  if (devices > problem.devices)
    return out.reason = fmt::format("the stages use {} devices, more than K = {}", devices, problem.devices), out;
  if (degrees > problem.micro_batches)
    return out.reason = fmt::format("the degrees sum to {}, more than N = {}", degrees, problem.micro_batches), out;

  const double B = problem.bandwidth_bytes_per_s, N = static_cast<double>(problem.micro_batches);
  int64_t sigma = degrees;  // Σ d over this stage and the later ones
  for (size_t i = 0; i < stages.size(); ++i) {
    const StagePlan& s = stages[i];
    const auto w = static_cast<size_t>(width_index(problem, s.width));
    const double d = static_cast<double>(s.data_parallel);
    const double y = static_cast<double>((sigma + s.data_parallel - 1) / s.data_parallel);
    std::vector<char> in_stage(n, 0);
    for (int v : s.nodes) in_stage[static_cast<size_t>(v)] = 1;
    double time = 0, memory = 0;
    for (size_t k = 0; k < s.nodes.size(); ++k) {
      const Node& node = problem.nodes[static_cast<size_t>(s.nodes[k])];
      const std::vector<Tmpc>& options = node.tmpcs[w];
      if (s.tmpc[k] < 0 || static_cast<size_t>(s.tmpc[k]) >= options.size())
        return out.reason =
                   fmt::format("stage {}: node {} has no TMPC number {} at t = {}", i + 1, node.id, s.tmpc[k], s.width),
               out;
      const Tmpc& c = options[static_cast<size_t>(s.tmpc[k])];
      const double cut = cut_bytes(problem, node, c, in_stage);
      time += (cut / d + 4 * (d - 1) * c.parameter_bytes / (d * N)) / B + c.time_per_sample_s / d;
      memory += c.memory_per_in_flight_bytes * y + c.memory_fixed_bytes;
    }
    if (memory > problem.memory_per_device_bytes)
      return out.reason = fmt::format(
                 "stage {} needs {} bytes per device with {} micro-batches in flight, more than "
                 "M = {}",
                 i + 1, memory, static_cast<int64_t>(y), problem.memory_per_device_bytes),
             out;
    out.stage_s.push_back(time);
    out.time_per_sample_s = std::max(out.time_per_sample_s, time);
    sigma -= s.data_parallel;
  }
  out.valid = true;
  return out;
}

}  // namespace phaze::piper
