#include "megatron/plan_search.h"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>
#include <utility>
#include <variant>

#include "megatron/plan_space.h"

namespace phaze::megatron {

namespace {

using megatron::TrainingPlan;

/// The layout of a configuration: its degrees, experts, micro-batch and chunks. Configurations of one layout
/// differ only in recomputation, ZeRO stage, sequence parallelism, precision or pipeline split.
auto layout_of(const TrainingPlan& p) {
  return std::tuple(p.tp, p.cp, p.pp, p.dp, p.ep, p.etp, p.micro_batch, p.vp);
}

/// Keeps the `top` fastest fitting predictions, earlier ones first among equal times; with `distinct`, only
/// the fastest of each layout (the first of equals).
class TopList {
 public:
  TopList(size_t top, bool distinct) : top_(top), distinct_(distinct) {}
  void offer(megatron::StepPrediction p) {
    const auto at =
        std::upper_bound(list_.begin(), list_.end(), p.time.iteration_s,
                         [](double t, const megatron::StepPrediction& q) { return t < q.time.iteration_s; });
    if (static_cast<size_t>(at - list_.begin()) >= top_) return;
    if (distinct_) {
      // A variant of a layout listed: kept only when faster, in place of the one listed (which lies after
      // `at`). A layout pushed off the list had a variant faster than anything offered of it since.
      const auto same = [&](const megatron::StepPrediction& q) { return layout_of(q.plan) == layout_of(p.plan); };
      if (std::any_of(list_.begin(), at, same)) return;
      const auto slower = std::find_if(at, list_.end(), same);
      if (slower != list_.end()) list_.erase(slower);
    }
    list_.insert(at, std::move(p));
    if (list_.size() > top_) list_.pop_back();
  }
  std::vector<megatron::StepPrediction> take() { return std::move(list_); }

 private:
  size_t top_;
  bool distinct_;
  std::vector<megatron::StepPrediction> list_;
};

}  // namespace

GpuPlanAnswer search_gpu_plans(const model::ModelSpec& spec, const hw::System& system, const GpuPlanQuestion& q,
                               const DevicePricer& pricer) {
  GpuPlanAnswer answer;
  const StepDevice device = pricer.step_device(system);
  TopList top(q.top, q.distinct);
  PlanSpace space;
  space.devices = q.gpus;
  space.global_batch = q.global_batch;
  space.seq = q.seq;
  space.features = q.features;
  space.zero_stages = q.zero_stages;
  space.try_fp8 = q.try_fp8;
  space.try_split_accounting = q.try_split_accounting;
  space.context_widths = q.context_widths;
  space.expert_widths = q.expert_widths;
  space.expert_tensor_widths = q.expert_tensor_widths;
  space.widths = q.widths;
  space.pipelines = q.pipelines;
  space.replicas = q.replicas;
  space.micro_batches = q.micro_batches;
  space.chunks = q.chunks;
  if (!q.recomputes.empty()) space.recomputes = q.recomputes;
  // Context parallelism is a GPU feature: an accelerator system tries c = 1 alone.
  const bool gpu = std::holds_alternative<hw::Gpu>(system.device);
  if (space.context_widths.empty())
    for (int64_t c = 1; c <= (gpu ? 64 : 1) && q.gpus % c == 0; c *= 2) space.context_widths.push_back(c);
  // The layer costs depend on t, c, ep, etp, b, sequence parallelism and FP8 alone (the other settings are the
  // space's). The space is walked with t and c in the outer loops, so only the costs of the present t and c
  // are kept: a mixture of experts has thousands of layouts of the others for each.
  std::optional<std::pair<int64_t, int64_t>> widths;
  std::map<std::tuple<int64_t, int64_t, int64_t, bool, bool>, megatron::LayerCosts> costs;
  bool fits_without_context_parallelism = false;
  for_each_megatron_plan(spec, space, [&](const TrainingPlan& plan) {
    if (widths != std::pair{plan.tp, plan.cp}) {
      costs.clear();
      widths = std::pair{plan.tp, plan.cp};
    }
    const auto key = std::tuple(plan.ep, plan.etp, plan.micro_batch, plan.sequence_parallel, plan.fp8);
    auto at = costs.find(key);
    if (at == costs.end()) at = costs.emplace(key, pricer.layer_costs(spec, system, plan)).first;
    megatron::StepPrediction prediction = megatron::predict_step(spec, device, system.network, plan, at->second);
    ++answer.evaluated;
    if (!prediction.memory.fits) {
      if (answer.fitting == 0 &&
          (!answer.least_memory || prediction.memory.peak_bytes < answer.least_memory->memory.peak_bytes))
        answer.least_memory = std::move(prediction);
      return;
    }
    ++answer.fitting;
    if (q.faster_than_s && prediction.time.iteration_s < *q.faster_than_s) ++answer.faster;
    fits_without_context_parallelism = fits_without_context_parallelism || plan.cp == 1;
    top.offer(std::move(prediction));
  });
  const bool tried_without =
      std::find(space.context_widths.begin(), space.context_widths.end(), 1) != space.context_widths.end();
  answer.fits_only_with_context_parallelism = tried_without && answer.fitting > 0 && !fits_without_context_parallelism;
  answer.best = top.take();
  if (answer.fitting > 0) answer.least_memory.reset();
  return answer;
}

}  // namespace phaze::megatron
