#include "megatron/assumptions.h"

#include <fmt/format.h>

#include <string>
#include <utility>

namespace phaze::megatron {

namespace {

constexpr double kGib = 1 << 30;

/// Where the GPU's software figures come from, when that deserves a warning; "" when fitted on its own
/// generation.
std::string software_caveat(const hw::Gpu& gpu) {
  if (gpu.software_fitted_on.empty())
    return fmt::format("; {}'s software figures come from its file, not from a fit phaze made", gpu.name);
  if (gpu.generation.empty() || gpu.software_fitted_on != gpu.generation)
    return fmt::format("; {}'s software figures were fitted on {} measurements, not on its own generation{}", gpu.name,
                       gpu.software_fitted_on, gpu.generation.empty() ? "" : fmt::format(" ({})", gpu.generation));
  return "";
}

/// Which communication the plan overlaps with computation.
std::string overlapped(const TrainingPlan& plan) {
  std::string out;
  for (auto [on, what] : {std::pair{plan.tp_comm_overlap, "tensor-parallel collectives"},
                          std::pair{plan.overlap_dp, "the gradient reduction"},
                          std::pair{plan.overlap_param_gather, "the parameter all-gather"},
                          std::pair{plan.overlap_moe_comm, "the expert all-to-alls (steady state)"},
                          std::pair{plan.shared_expert_overlap, "the shared expert with the all-to-alls"}})
    if (on) out += (out.empty() ? "" : ", ") + std::string(what);
  return out.empty() ? "no communication overlapped" : out + " overlapped";
}

/// How a mixture of experts' token copies fall on its experts.
std::string routing_text(const TrainingPlan& plan) {
  const std::string balance =
      plan.moe_load_imbalance == 1
          ? std::string("routing balanced (the same number of token copies to each expert)")
          : fmt::format(
                "the busiest expert-parallel rank taking {:g} times the mean of the token copies (at most "
                "ep times)",
                plan.moe_load_imbalance);
  if (plan.moe_capacity_factor == 0) return "dropless, " + balance;
  if (plan.moe_pad_to_capacity)
    return fmt::format("copies beyond a capacity factor of {:g} dropped and every expert padded to its capacity",
                       plan.moe_capacity_factor);
  return fmt::format("{}, copies beyond a capacity factor of {:g} dropped", balance, plan.moe_capacity_factor);
}

}  // namespace

std::string assumptions_line(const TrainingPlan& plan, const hw::Gpu& gpu, const model::ModelSpec& spec) {
  return fmt::format(
      "assumptions: {}{} with mixed-precision Adam ({} bytes per parameter), {} attention, {}, {}; memory with {:.2f} "
      "GiB of driver reserve, CUDA context and libraries, {:.2f} GiB per NCCL communicator, {:.0f} % allocator "
      "overhead, {:.2f} GiB kept free; model FLOPs count the attention scores a causal model needs (half of "
      "s²){}{}",
      plan.fp8 ? fmt::format("FP8 GEMMs ({} scaling), ", to_string(plan.fp8_recipe)) : "",
      !plan.bf16            ? "FP16 weights and gradients"
      : plan.bf16_gradients ? "BF16 weights and gradients"
                            : "BF16 weights, FP32 gradients",
      !plan.bf16            ? "2 + 2 + 16"
      : plan.bf16_gradients ? "2 + 2 + 12"
                            : "2 + 4 + 12",
      !plan.flash_attention                                    ? "materialised"
      : plan.attention_library == hw::AttentionLibrary::Flash2 ? "FlashAttention-2"
                                                               : "fused (flash)",
      plan.unfused_loss ? "Megatron-LM's unfused FP32 cross-entropy" : "a fused cross-entropy", overlapped(plan),
      static_cast<double>(gpu.runtime_memory_bytes) / kGib, static_cast<double>(gpu.communicator_memory_bytes) / kGib,
      100 * gpu.allocator_overhead, static_cast<double>(plan.memory_reserve_bytes) / kGib, software_caveat(gpu),
      spec.moe() ? fmt::format("; {} of {} experts per token, {}, the experts split over the expert-parallel groups "
                               "(ep) and each expert's "
                               "columns over the tensor-parallel group, the all-to-alls {}{}",
                               spec.experts_per_token, spec.experts, routing_text(plan),
                               plan.overlap_moe_comm ? "overlapped in 1F1B's steady state, each under the other "
                                                       "micro-batch's computation"
                                                     : "not overlapped",
                               plan.moe_dispatcher == MoeDispatcher::Flex
                                   ? ", dispatched by DeepEP (a token's copies for one node cross the scale-out "
                                     "network once)"
                                   : "")
                 : "");
}

}  // namespace phaze::megatron
