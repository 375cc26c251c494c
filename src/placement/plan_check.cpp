#include "placement/plan_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "placement/batch_time.h"
#include "placement/stage_memory.h"

namespace phaze::placement {

PlanCheck check_plan(const StageCosts& costs, const std::vector<Stage>& stages, int64_t data_parallel,
                     const Cluster& cluster) {
  PlanCheck result;
  const int64_t p = static_cast<int64_t>(stages.size());
  if (p == 0) {
    result.reason = "no stages";
    return result;
  }
  if (data_parallel < 1 || data_parallel > cluster.micro_batches) {
    result.reason =
        fmt::format("data-parallel degree {} is not in 1..{} (micro-batches)", data_parallel, cluster.micro_batches);
    return result;
  }
  int64_t devices = 0;
  PipelineShape shape{0, p, 0, 0};
  for (int64_t q = 0; q < p; ++q) {
    const Stage& stage = stages[q];
    if (stage.first >= stage.last) {
      result.reason = fmt::format("stage {} is empty", q + 1);
      return result;
    }
    const int64_t stages_from_here = p - q;  // 1F1B: the micro-batches in flight on stage q
    if (costs.max_in_flight(stage.first, stage.last) < stages_from_here) {
      result.reason =
          fmt::format("stage {} does not fit in memory with {} micro-batches in flight", q + 1, stages_from_here);
      return result;
    }
    devices += stage.devices;
    shape.max_stage_load = std::max(shape.max_stage_load, costs.load(stage.first, stage.last, stages_from_here));
    shape.max_stage_parameter_bytes =
        std::max(shape.max_stage_parameter_bytes, costs.parameter_bytes(stage.first, stage.last));
  }
  if (devices * data_parallel > cluster.devices) {
    result.reason =
        fmt::format("the plan needs {} devices, {} are available", devices * data_parallel, cluster.devices);
    return result;
  }
  shape.first_stage_parameter_bytes = costs.parameter_bytes(stages.front().first, stages.front().last);
  const BatchTime time = BatchTimeModel(cluster, data_parallel, devices).batch_time(shape);
  result.feasible = true;
  result.time_per_batch = time.total;
  result.parts = time.parts;
  return result;
}

PlanCheck evaluate_hand_set(const std::vector<Chain>& chains, const Cluster& cluster, const HandSetPlan& hand,
                            int64_t transformer_layers) {
  PlanCheck result;
  const auto it = std::find_if(chains.begin(), chains.end(), [&](const Chain& c) { return c.width == hand.width; });
  if (it == chains.end()) {
    result.reason = fmt::format("width {} is not in the input", hand.width);
    return result;
  }
  if (hand.pipeline * hand.width * hand.data_parallel > cluster.devices) {
    result.reason = fmt::format("p·t·d = {}·{}·{} exceeds the {} devices", hand.pipeline, hand.width,
                                hand.data_parallel, cluster.devices);
    return result;
  }
  if (hand.data_parallel > cluster.micro_batches) {
    result.reason = fmt::format("d = {} exceeds the {} micro-batches", hand.data_parallel, cluster.micro_batches);
    return result;
  }
  const int n = static_cast<int>(it->nodes.size());
  const int64_t per_stage = (transformer_layers + hand.pipeline - 1) / hand.pipeline;  // ⌈L/p⌉
  std::vector<Stage> stages(static_cast<size_t>(hand.pipeline), Stage{n, 0, hand.width});
  for (int i = 0; i < n; ++i) {
    const int64_t q = i < transformer_layers ? i / per_stage : hand.pipeline - 1;
    stages[q].first = std::min(stages[q].first, i);
    stages[q].last = std::max(stages[q].last, i + 1);
  }
  StageCosts costs;
  costs.compute(*it, cluster);
  return check_plan(costs, stages, hand.data_parallel, cluster);
}

std::vector<Stage> hand_set_stages(int64_t layers, const HandSetPlan& plan) {
  const int64_t p = std::max<int64_t>(plan.pipeline, 1);
  const int64_t per_stage = (layers + p - 1) / p;
  std::vector<Stage> stages;
  for (int64_t k = 0; k < p; ++k) {
    // Stage k holds transformer layers k·c + 1 .. (k + 1)·c (chain positions), cut at L; the first stage
    // also holds the embedding (position 0), the last every remaining layer and the head (position L + 1).
    const int64_t first = k == 0 ? 0 : std::min(k * per_stage + 1, layers + 1);
    const int64_t last = k == p - 1 ? layers + 2 : std::min((k + 1) * per_stage + 1, layers + 1);
    stages.push_back({static_cast<int>(first), static_cast<int>(std::max(first, last)), plan.width});
  }
  return stages;
}

namespace {

/// The footprint of each stage of `stages`, as StageCosts sums it.
std::vector<StageFootprint> stage_footprints(const Chain& chain, const std::vector<Stage>& stages,
                                             const Cluster& cluster) {
  std::vector<StageFootprint> out;
  for (const Stage& stage : stages) {
    // Summed in StageCosts' order (positions in turn, each one's entering edges in the chain's order), so that
    // the figures are the same to the bit.
    StageFootprint footprint;
    double boundary_bytes = 0;
    for (int v = stage.first; v < stage.last; ++v) {
      const ChainNode& node = chain.nodes[static_cast<size_t>(v)];
      for (const ChainEdge& e : chain.edges)
        if (e.to == v && e.from < stage.first) boundary_bytes += e.bytes;
      footprint.parameter_bytes += node.parameter_bytes;
      footprint.activation_bytes += node.activation_bytes;
    }
    footprint.stash_bytes = whole_stage_stash_bytes(footprint.activation_bytes, boundary_bytes, cluster);
    out.push_back(footprint);
  }
  return out;
}

}  // namespace

bool stages_fit_memory(const Chain& chain, const std::vector<Stage>& stages, const Cluster& cluster) {
  const std::vector<StageFootprint> footprints = stage_footprints(chain, stages, cluster);
  const auto p = static_cast<int64_t>(stages.size());
  for (int64_t q = 0; q < p; ++q)
    if (max_in_flight(footprints[static_cast<size_t>(q)], cluster) < p - q) return false;  // 1F1B: p − q in flight
  return true;
}

std::vector<double> stage_peak_bytes(const Chain& chain, const std::vector<Stage>& stages, const Cluster& cluster) {
  const std::vector<StageFootprint> footprints = stage_footprints(chain, stages, cluster);
  const auto p = static_cast<int64_t>(stages.size());
  std::vector<double> out;
  for (int64_t q = 0; q < p; ++q) out.push_back(stage_memory_bytes(footprints[static_cast<size_t>(q)], p - q, cluster));
  return out;
}

bool differ_only_in_memory(const Cluster& a, const Cluster& b) {
  return a.devices == b.devices && a.pipeline_network == b.pipeline_network &&
         a.data_parallel_network == b.data_parallel_network && a.micro_batches == b.micro_batches &&
         a.recompute == b.recompute && a.optimizer == b.optimizer && a.corrected.enabled == b.corrected.enabled &&
         a.corrected.optimizer_seconds_per_byte == b.corrected.optimizer_seconds_per_byte;
}

PlanCheck recheck_plan(const StageCosts& costs, const Plan& plan, const Cluster& cluster) {
  PlanCheck check = check_plan(costs, plan.stages, plan.data_parallel, cluster);
  const double tolerance = 1e-9 * std::max(1.0, std::abs(plan.time_per_batch));
  if (!check.feasible || std::abs(check.time_per_batch - plan.time_per_batch) > tolerance)
    throw std::logic_error(fmt::format("placement: reconstructed plan disagrees with the search ({} vs {}{})",
                                       check.time_per_batch, plan.time_per_batch,
                                       check.feasible ? "" : ", " + check.reason));
  return check;
}

}  // namespace phaze::placement
