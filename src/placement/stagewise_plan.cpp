#include "placement/stagewise_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "placement/batch_time.h"
#include "placement/links.h"
#include "placement/stage_costs.h"
#include "placement/stage_memory.h"

namespace phaze::placement {

int64_t StagewisePlan::devices() const {
  int64_t total = 0;
  for (const StagewiseStage& s : stages) total += s.devices * s.data_parallel;
  return total;
}

namespace {

/// The check of one stage's layout; empty when it is sound.
std::string stage_layout_error(const std::vector<Chain>& chains, const StagewiseStage& s, int expected_first,
                               const Cluster& cluster) {
  if (s.chain >= chains.size()) return fmt::format("chain {} does not exist", s.chain);
  const Chain& chain = chains[s.chain];
  const int n = static_cast<int>(chain.nodes.size());
  if (s.first != expected_first || s.last <= s.first || s.last > n)
    return fmt::format("positions [{}, {}) do not continue the stages before it", s.first, s.last);
  if (s.width != chain.width) return fmt::format("width {} is not its chain's {}", s.width, chain.width);
  bool tp = false;
  for (int v = s.first; v < s.last; ++v) tp = tp || chain.nodes[static_cast<size_t>(v)].tensor_parallel;
  if (s.devices != (tp && chain.width > 1 ? chain.width : 1))
    return fmt::format("{} devices per replica, its layers need {}", s.devices,
                       tp && chain.width > 1 ? chain.width : 1);
  if (s.data_parallel < 1 || s.data_parallel > cluster.micro_batches)
    return fmt::format("data-parallel degree {} is outside 1..{}", s.data_parallel, cluster.micro_batches);
  if (!s.recomputed.empty() && !cluster.recompute) return "recomputes layers with recomputation off";
  for (size_t k = 0; k < s.recomputed.size(); ++k)
    if (s.recomputed[k] < s.first || s.recomputed[k] >= s.last || (k > 0 && s.recomputed[k] <= s.recomputed[k - 1]))
      return fmt::format("recomputed position {} is not an ascending position of the stage", s.recomputed[k]);
  return {};
}

}  // namespace

StagewiseCheck evaluate_stagewise(const std::vector<Chain>& chains, const std::vector<StagewiseStage>& stages,
                                  const Cluster& cluster) {
  StagewiseCheck out;
  if (stages.empty()) {
    out.reason = "no stages";
    return out;
  }
  const auto p = static_cast<int64_t>(stages.size());
  int64_t devices = 0;
  int expected_first = 0;
  for (size_t k = 0; k < stages.size(); ++k) {
    const std::string error = stage_layout_error(chains, stages[k], expected_first, cluster);
    if (!error.empty()) {
      out.reason = fmt::format("stage {}: {}", k, error);
      return out;
    }
    expected_first = stages[k].last;
    devices += stages[k].devices * stages[k].data_parallel;
  }
  if (static_cast<size_t>(expected_first) != chains[stages.back().chain].nodes.size()) {
    out.reason = "the stages do not cover the chain";
    return out;
  }
  if (devices > cluster.devices) {
    out.reason = fmt::format("the plan needs {} devices, the cluster has {}", devices, cluster.devices);
    return out;
  }

  const StageSyncModel sync_model(cluster);
  double steady_max = -1, sync_max = -1;
  std::vector<std::optional<StageCosts>> costs_of(chains.size());
  for (size_t k = 0; k < stages.size(); ++k) {
    const StagewiseStage& s = stages[k];
    const Chain& chain = chains[s.chain];
    if (!costs_of[s.chain]) costs_of[s.chain].emplace().compute(chain, cluster);
    const StageCosts& costs = *costs_of[s.chain];
    // The sums in position order, as the planner's sweep adds them.
    double reforward = 0, acts = 0, stash = 0;
    size_t r = 0;
    bool previous_recomputed = false;
    for (int v = s.first; v < s.last; ++v) {
      const ChainNode& node = chain.nodes[static_cast<size_t>(v)];
      const bool recomputed = r < s.recomputed.size() && s.recomputed[r] == v;
      acts += node.activation_bytes;
      if (recomputed) {
        ++r;
        reforward += node.forward_time;
        if (!previous_recomputed) stash += input_bytes(chain, v);
      } else {
        stash += node.activation_bytes;
      }
      previous_recomputed = recomputed;
    }
    const double params = costs.parameter_bytes(s.first, s.last);
    const int64_t in_flight = p - static_cast<int64_t>(k);
    const StageFootprint footprint{params, acts, stash};
    out.memory_bytes.push_back(stage_memory_bytes(footprint, in_flight, cluster));
    if (max_in_flight(footprint, cluster) < in_flight) {
      out.reason = fmt::format("stage {} does not fit in {} bytes with {} micro-batches in flight", k,
                               cluster.memory_bytes, in_flight);
      return out;
    }
    const double load =
        costs.forward_finish(s.first, s.last) +
        std::max(costs.backward_finish(s.first, s.last), costs.backward_sum(s.first, s.last) + reforward);
    out.loads_s.push_back(load);
    const double steady = static_cast<double>(pipeline_slots(cluster.micro_batches, s.data_parallel, p)) * load;
    if (steady > steady_max) {
      steady_max = steady;
      out.parts.steady_state =
          static_cast<double>(replica_micro_batches(cluster.micro_batches, s.data_parallel)) * load;
      out.parts.fill_drain = static_cast<double>(p - 1) * load;
    }
    const double sync = StageSyncModel::sync_s(params, s.data_parallel, ring_link(cluster, s.data_parallel, s.devices));
    const double update = sync_model.optimizer_s(params);
    if (sync + update > sync_max) {
      sync_max = sync + update;
      out.parts.data_parallel_sync = sync;
      out.parts.optimizer_step = update;
    }
  }
  out.feasible = true;
  out.time_per_batch = steady_max + sync_max;
  return out;
}

}  // namespace phaze::placement
