#include "search/accelerator_prediction.h"

#include <fmt/format.h>

#include <memory>
#include <utility>

#include "hw/network.h"
#include "model/layer_graph.h"
#include "schedule/problem.h"
#include "search/layer_scheduling.h"
#include "search/megatron_execution.h"
#include "search/schedule_cache.h"
#include "util/input_error.h"

namespace phaze::search {

megatron::LayerCosts accelerator_layer_costs(const model::ModelSpec& spec, const hw::System& system,
                                             const megatron::TrainingPlan& plan, ScheduleCache& cache) {
  megatron::validate(plan, spec);
  const hw::Architecture& chip = hw::accelerator_of(system);
  if (plan.fp8) throw InputError(fmt::format("--fp8: {} has no FP8 tensor cores in phaze's template", chip.name));
  if (plan.cp > 1)
    throw InputError(fmt::format("--cp = {}: context parallelism is priced on GPU systems only", plan.cp));
  if (plan.mtp_layers > 0)
    throw InputError(
        fmt::format("--mtp-num-layers = {}: multi-token prediction is priced on GPU systems only", plan.mtp_layers));
  const hw::Network network =
      hw::sized_network(system.network, plan.gpus(), fmt::format("system '{}' with --devices", system.name));
  model::Shape shape = plan.layer_shape();
  shape.fused_attention = plan.flash_attention;
  const model::LayerGraph graph = model::build_layer_graph(spec, shape, model::Precision{}, spec.name);

  Scheduling scheduling;
  scheduling.estimator = cost::Estimator(cost::CostParams{}, network);
  scheduling.solver = schedule::make_exact_solver(kSearchScheduleNodes);
  scheduling.cache = &cache;
  std::optional<MegatronWidth> width = megatron_width(graph, chip, scheduling);
  if (!width) throw InputError(fmt::format("{}: an operator of {} has no finite estimate on it", chip.name, spec.name));
  if (!plan.sequence_parallel) return std::move(width->costs);
  if (!width->sequence_parallel_costs)
    throw InputError(
        fmt::format("--sequence-parallel: the sequence ({}) does not split over t = {}", plan.seq, plan.tp));
  return std::move(*width->sequence_parallel_costs);
}

megatron::DevicePricer system_pricer() {
  const megatron::DevicePricer gpu = megatron::gpu_pricer();
  const auto cache = std::make_shared<ScheduleCache>();
  return megatron::DevicePricer{
      [gpu, cache](const model::ModelSpec& spec, const hw::System& system, const megatron::TrainingPlan& plan) {
        if (std::holds_alternative<hw::Gpu>(system.device)) return gpu.layer_costs(spec, system, plan);
        return accelerator_layer_costs(spec, system, plan, *cache);
      },
      [gpu](const hw::System& system) {
        if (std::holds_alternative<hw::Gpu>(system.device)) return gpu.step_device(system);
        return accelerator_step_device(hw::accelerator_of(system));
      }};
}

std::string accelerator_assumptions(const megatron::TrainingPlan& plan, const hw::System& system) {
  const hw::Architecture& chip = hw::accelerator_of(system);
  const hw::Network network = hw::sized_network(system.network, plan.gpus(), "system '" + system.name + "'");
  std::string slice = "every collective on its tier";
  if (const auto& torus = network.tiers.front().torus) {
    const int64_t pods = plan.gpus() / hw::torus_devices(torus->slice);
    slice =
        fmt::format("the {} × {} × {} slice of the '{}' torus{}{} (collectives per torus axis)", torus->slice[0],
                    torus->slice[1], torus->slice[2], network.tiers.front().name,
                    hw::torus_wraps(*torus, torus->slice) ? " with wraparound" : " without wraparound",
                    pods > 1 ? fmt::format(" in each of {} pods, joined by '{}'", pods, network.tiers[1].name) : "");
  }
  std::string overlap;
  for (auto [on, what] : {std::pair{plan.overlap_dp, "the gradient reduction"},
                          std::pair{plan.overlap_param_gather, "the parameter all-gather"}})
    if (on) overlap += (overlap.empty() ? "" : ", ") + std::string(what);
  return fmt::format(
      "assumptions: each layer's operators scheduled exactly on {}'s cores at {:g} GHz (tensor-parallel collectives "
      "inside the schedule), {} attention, {} with mixed-precision Adam ({} bytes per parameter), {}; {}; no host or "
      "runtime memory, {:.2f} GiB kept free",
      chip.name, chip.clock_hz / 1e9, plan.flash_attention ? "fused" : "materialised",
      plan.bf16_gradients ? "BF16 weights and gradients" : "BF16 weights, FP32 gradients",
      plan.bf16_gradients ? "2 + 2 + 12" : "2 + 4 + 12",
      overlap.empty() ? "no communication overlapped" : overlap + " overlapped", slice,
      static_cast<double>(plan.memory_reserve_bytes) / 1073741824.0);
}

}  // namespace phaze::search
