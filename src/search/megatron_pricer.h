#pragma once

// Megatron-LM's execution (megatron_execution.h, docs/gpu.md 7): per point and model the fastest Megatron-LM
// configuration that fits, its iteration priced by megatron::predict_step on the design's exact layer
// schedules.

#include <functional>
#include <vector>

#include "search/pricer.h"

namespace phaze::search {

class MegatronPricer : public Pricer {
 public:
  /// Fills workload.megatron_fitting too: the configurations that fit at each point, on every design.
  void find_fitting(Workload& workload) override;
  std::vector<PointOutcome> price_points(const Workload& workload, Scheduling& scheduling, const hw::Design& design,
                                         const std::function<bool(const std::string&)>& wanted,
                                         const LeaveOutTest& leave_out, std::vector<LeftOutPoint>* left_out) override;
  /// v = 1, no sequence parallelism, full recomputation when the point recomputes, no distributed optimizer
  /// (the classic configuration the method's table plans were run with).
  PlanPrice price_hand_set(const SearchQuestion& question, const ModelCase& model, const model::LayerGraph& graph,
                           const placement::HandSetPlan& plan, const std::vector<placement::Stage>& stages,
                           const hw::Architecture& design, bool recompute, Scheduling& scheduling) override;
  void describe(const SearchQuestion& question, nlohmann::ordered_json& settings) const override;
  std::string description(const SearchQuestion& question) const override;
  std::string hand_set_rule() const override;
};

}  // namespace phaze::search
