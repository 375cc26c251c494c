#include "cli/feature_options.h"

#include "cli/memory_reserve_option.h"
#include "cli/option_values.h"

namespace phaze::cli {

void add_feature_options(CLI::App* cmd, megatron::TrainingPlan& features) {
  cmd->add_flag("--overlap-grad-reduce,--overlap-dp", features.overlap_dp,
                "Reduce gradients in buckets during the last micro-batch's backward pass");
  cmd->add_flag("--overlap-param-gather", features.overlap_param_gather,
                "Gather the distributed optimizer's parameters during the next forward pass");
  cmd->add_flag("--tp-comm-overlap", features.tp_comm_overlap,
                "Pipeline tensor-parallel collectives with their GEMMs (with sequence parallelism)");
  cmd->add_flag("--moe-shared-expert-overlap", features.shared_expert_overlap,
                "Run a mixture of experts' shared expert while its token all-to-alls are in flight");
  cmd->add_flag("--overlap-moe-expert-parallel-comm", features.overlap_moe_comm,
                "Run each steady-state forward pass merged with an earlier backward pass, so that the expert "
                "all-to-alls of one run under the other's computation (with --ep > 1, not with full recomputation)");
  cmd->add_flag("--flash-attention,!--no-flash-attention", features.flash_attention,
                "Fused (flash) attention kernels (the default; --no-flash-attention materialises the scores)");
  cmd->add_flag("--bf16,!--fp16", features.bf16,
                "BF16 with FP32 gradients (the default), or FP16 with 16-bit gradients (--fp16)");
  cmd->add_flag("--grad-reduce-in-bf16", features.bf16_gradients,
                "With BF16: accumulate and reduce gradients in BF16 (NeMo's grad_reduce_in_fp32 = False)");
  cmd->add_option_function<std::string>(
         "--attention-backend",
         [&features](const std::string& v) { megatron::set_attention_backend(features, v, "--attention-backend"); },
         "Attention kernel, Megatron-LM's names: fused (the GPU's own fused attention, cuDNN on Hopper; the "
         "default), flash (FlashAttention-2) or unfused (the scores materialised)")
      ->type_name("TEXT");
  cmd->add_flag_function(
      "--cross-entropy-loss-fusion,!--no-cross-entropy-loss-fusion",
      [&features](int64_t count) { features.unfused_loss = count < 0; },
      "The loss in fused kernels on 16-bit logits (the default), or Megatron-LM's unfused FP32 loss "
      "(--no-cross-entropy-loss-fusion)");
  cmd->add_flag("--fp8", features.fp8,
                "FP8 GEMMs as Transformer Engine runs them (Megatron-LM's --fp8-format hybrid; needs BF16)");
  cmd->add_option_function<std::string>(
         "--fp8-recipe",
         [&features](const std::string& v) { features.fp8_recipe = megatron::parse_fp8_recipe(v, "--fp8-recipe"); },
         "FP8 scaling: delayed (the default) or tensorwise (current scaling)")
      ->type_name("TEXT");
  cmd->add_flag("--fp8-param-gather", features.fp8_param_gather,
                "Keep the FP8 GEMMs' parameters in FP8 and gather them in FP8");
  cmd->add_option_function<std::string>(
         "--cp-comm-type",
         [&features](const std::string& v) { features.cp_comm = megatron::parse_cp_comm(v, "--cp-comm-type"); },
         "Context parallelism's key/value exchange: p2p (the default) or all_gather")
      ->type_name("TEXT");
  cmd->add_option_function<std::string>(
         "--moe-token-dispatcher-type",
         [&features](const std::string& v) {
           features.moe_dispatcher = megatron::parse_moe_dispatcher(v, "--moe-token-dispatcher-type");
         },
         "How a mixture of experts' tokens reach their experts: alltoall (every copy by one all-to-all; the "
         "default) or flex (DeepEP: one copy a node across the scale-out network)")
      ->type_name("TEXT");
  add_number_option(cmd, "--moe-expert-capacity-factor,--moe-capacity-factor", features.moe_capacity_factor, 0, 4096,
                    true,
                    "Each expert takes at most ⌈T·k/E · c⌉ of a rank's T·k token copies, the rest dropped (at most "
                    "the experts over the experts per token; dropless when not given)");
  cmd->add_flag("--moe-pad-expert-input-to-capacity", features.moe_pad_to_capacity,
                "Every expert computes its whole capacity (with --moe-expert-capacity-factor)");
  add_number_option(cmd, "--moe-load-imbalance", features.moe_load_imbalance, 1, 4096, false,
                    "The busiest expert-parallel rank's token copies over the mean (1: balanced routing, as "
                    "NVIDIA's benchmarks force it)");
  add_integer_option(cmd, "--mtp-num-layers", features.mtp_layers, 0, megatron::plan_limits::kMtpLayers,
                     "Multi-token prediction modules on the last stage (DeepSeek-V3 trains with 1)");
  add_integer_option(cmd, "--zero-group", features.zero_group, 0, megatron::plan_limits::kGpus,
                     "GPUs of one ZeRO sharding group (HYBRID_SHARD; 0: every data- and context-parallel GPU)");
  add_memory_reserve_option(cmd, features.memory_reserve_bytes);
}

}  // namespace phaze::cli
