#include "megatron/assumptions.h"

#include <fmt/format.h>

namespace phaze::megatron {

namespace {

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

}  // namespace

std::string assumptions_line(const TrainingPlan& plan, const hw::Gpu& gpu) {
  return fmt::format(
      "assumptions: 16-bit weights and gradients with mixed-precision Adam (2 + 2 + 16 bytes per parameter), "
      "{} attention, {}; memory without CUDA context, library workspaces or allocator fragmentation{}",
      plan.flash_attention ? "fused (flash)" : "materialised",
      plan.overlap_dp ? "only the gradient reduction overlapped" : "no communication overlapped", software_caveat(gpu));
}

}  // namespace phaze::megatron
