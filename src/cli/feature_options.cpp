#include "cli/feature_options.h"

#include "cli/memory_reserve_option.h"

namespace phaze::cli {

void add_feature_options(CLI::App* cmd, megatron::TrainingPlan& features) {
  cmd->add_flag("--overlap-grad-reduce,--overlap-dp", features.overlap_dp,
                "Reduce gradients in buckets during the last micro-batch's backward pass");
  cmd->add_flag("--overlap-param-gather", features.overlap_param_gather,
                "Gather the distributed optimizer's parameters during the next forward pass");
  cmd->add_flag("--tp-comm-overlap", features.tp_comm_overlap,
                "Pipeline tensor-parallel collectives with their GEMMs (with sequence parallelism)");
  cmd->add_flag("--flash-attention,!--no-flash-attention", features.flash_attention,
                "Fused (flash) attention kernels (the default; --no-flash-attention materialises the scores)");
  cmd->add_flag("--bf16,!--fp16", features.bf16,
                "BF16 with FP32 gradients (the default), or FP16 with 16-bit gradients (--fp16)");
  add_memory_reserve_option(cmd, features.memory_reserve_bytes);
}

}  // namespace phaze::cli
