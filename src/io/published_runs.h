#pragma once

// Published training runs as a JSON file (docs/gpu.md, "Published runs"):
//   {"source": "...", "system": "dgx-h100", "runs": [{...}, ...]}
// Each run: "label"; "model" (a preset, or a Hugging Face config.json path relative to the file);
// "system" (a preset or system file; default the file's); "gpus", "global_batch" (sequences); "tp", "pp",
// "cp" (default 1), "ep" (default 1), "etp" (default 0: tp), "dp" (default gpus / (tp·pp·cp), else it must match);
// "seq" (default the model's); "mbs", "vp", "recompute" (none | selective | full), each left out when the source does
// not give it (phaze then takes its fastest choice that fits); "sequence_parallel", "distributed_optimizer",
// "overlap_grad_reduce", "overlap_param_gather", "tp_comm_overlap",
// "overlap_moe_expert_parallel_comm", "moe_shared_expert_overlap" (default false), "mtp_num_layers" (default 0),
// "flash_attention" (default true); "attention_backend" (fused | flash | unfused, Megatron-LM's names; instead of
// "flash_attention"); "cross_entropy_loss_fusion" (default true; false: Megatron-LM's unfused FP32 loss); "precision"
// (bf16 | fp16 | fp8, default bf16), "fp8_recipe" (delayed | tensorwise), "fp8_param_gather", "grad_reduce_in_fp32"
// (default true); "cp_comm_type" (p2p | all_gather); "moe_token_dispatcher_type"
// (alltoall | flex); "moe_expert_capacity_factor" (default 0: dropless), "moe_pad_expert_input_to_capacity",
// "moe_load_imbalance" (default 1); "zero" (0-3) and "zero_group";
// "decoder_first_pipeline_num_layers", "decoder_last_pipeline_num_layers", "account_for_embedding_in_pipeline_split",
// "account_for_loss_in_pipeline_split", "pipeline_model_parallel_layout" (Megatron-LM's syntax; sets vp unless
// given); and exactly one published figure: "tflops_per_gpu" with "flop_count" (model |
// model-full-attention | hardware | narayanan), "iteration_s", or "tokens_per_s_per_gpu". A run that trained keeps no
// memory reserve. Unknown keys are refused; at most kMaxPublishedRuns runs. Errors name the file, the run and the
// field.

#include <cstdint>
#include <string>
#include <vector>

#include "megatron/published_run.h"

namespace phaze::io {

inline constexpr int64_t kMaxPublishedRuns = 100000;

std::vector<megatron::PublishedRun> read_published_runs(const std::string& path);

}  // namespace phaze::io
