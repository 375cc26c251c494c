#pragma once

// Megatron-LM's own command line (pretrain_gpt.py's arguments), read into a model and a training plan
// (docs/gpu.md, "Megatron-LM's command line"): `phaze predict --system S [--gpus N] -- <arguments>`.
//
// Read: the model's shape (--num-layers, --hidden-size, --num-attention-heads, --group-query-attention with
// --num-query-groups, --ffn-hidden-size, --kv-channels, --seq-length, --max-position-embeddings,
// --vocab-size, --swiglu, --normalization, --position-embedding-type, --use-rotary-position-embeddings,
// --untie-embeddings-and-output-weights, --disable-bias-linear, --add-bias-linear, --attention-dropout,
// --hidden-dropout), the batch (--micro-batch-size, --global-batch-size), the parallel layout
// (--tensor-model-parallel-size, --pipeline-model-parallel-size, --context-parallel-size,
// --virtual-pipeline-model-parallel-size or --num-layers-per-virtual-pipeline-stage,
// --decoder-first-pipeline-num-layers, --decoder-last-pipeline-num-layers, --sequence-parallel), precision
// (--bf16, --fp16, --fp8-format), recomputation (--recompute-activations, --recompute-granularity), the
// attention kernel (--use-flash-attn, --attention-backend) and overlap (--use-distributed-optimizer,
// --overlap-grad-reduce, --overlap-param-gather, --tp-comm-overlap), a mixture of experts (--num-experts,
// --moe-router-topk, --moe-ffn-hidden-size, --moe-shared-expert-intermediate-size, --moe-layer-freq as 1 or
// "([0]*K+[1]*N)", --moe-router-score-function, --moe-router-num-groups, --moe-router-group-topk,
// --expert-model-parallel-size, --expert-tensor-parallel-size) and latent attention
// (--multi-latent-attention, --q-lora-rank, --kv-lora-rank, --qk-head-dim, --qk-pos-emb-head-dim,
// --v-head-dim). Megatron-LM's defaults apply to what
// is not given (dropout 0.1, LayerNorm, learned positions, tied embeddings, biases, FFN 4h, or for SwiGLU
// 4h·2/3 rounded down to a multiple of 64). Every other flag is kept, with its value, in `not_modelled`,
// never dropped in silence. What would change the answer but is not modelled yet (FP32 training, dense
// layers among the expert layers) is an InputError naming the flag. --mtp-num-layers gives the plan's
// multi-token prediction modules.

#include <cstdint>
#include <string>
#include <vector>

#include "megatron/training_plan.h"
#include "model/model_spec.h"

namespace phaze::io {

struct MegatronRun {
  model::ModelSpec spec;
  megatron::TrainingPlan plan;
  std::vector<std::string> not_modelled;  ///< flags read but not modelled, each with its value
  std::vector<std::string> assumed;       ///< what phaze took for a value the arguments do not give
};

/// Reads `args` (one flag or value per element; "--flag=value" accepted) for a run on `gpus` GPUs (0: the
/// run's tensor × pipeline size, one data-parallel replica).
MegatronRun parse_megatron_args(const std::vector<std::string>& args, int64_t gpus);

}  // namespace phaze::io
