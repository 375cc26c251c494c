#pragma once

// The time of one layer's forward and backward pass for one micro-batch on one GPU of a tensor-parallel
// group (docs/gpu.md, "A layer on a GPU"). The GPU runs the layer's operators one kernel after another
// (one stream, as Megatron-LM does): each GEMM, fused GEMM and vector operator of the layer graph is one
// kernel priced by cost/gpu_kernel.h; each tensor-parallel collective is a ring on the tier the group spans
// (cost/collective_time.h) and holds the stream. Sequence parallelism turns each all-reduce into a
// reduce-scatter and an all-gather (the same ring time) and runs the operators outside the tensor-parallel
// region (norms, bias-dropout-residual) on s/t of the tokens. A flash kernel replaces the attention core.

#include "hw/gpu.h"
#include "hw/network.h"
#include "megatron/training_plan.h"
#include "model/layer.h"
#include "model/model_spec.h"

namespace phaze::megatron {

struct PassTime {
  double compute_s = 0;         ///< kernels on the GPU
  double tp_comm_s = 0;         ///< tensor-parallel collectives
  double attention_core_s = 0;  ///< of compute_s: the attention core (what selective recomputation re-runs)
  double cp_comm_s = 0;         ///< context-parallel key/value exchange left exposed (part of the attention core)
  double ep_comm_s = 0;         ///< expert-parallel all-to-alls (a mixture of experts' dispatch and combine)
  double total_s() const { return compute_s + tp_comm_s + cp_comm_s + ep_comm_s; }
};

/// The attention core of one micro-batch on one GPU of a context-parallel group of c (docs/gpu.md,
/// "Context parallelism"): its kernels' seconds and the exchange they leave exposed.
struct ContextAttention {
  double compute_s = 0;
  double exposed_comm_s = 0;
};

/// Causal attention over s tokens split into 2c chunks, rank r holding chunks r and 2c − 1 − r, so every
/// rank does 1/c of the work. p2p: step 0 is causal attention over the rank's own s/c tokens, each of the
/// c − 1 later steps an unmasked block of half of (s/c)², while the next rank's keys and values (and, in
/// the backward pass, their gradients) pass around the ring on the tier the group spans; a step's transfer
/// hides behind the previous step's block. Bidirectional attention: every step a whole (s/c)² block.
/// all_gather: the keys and values gathered first (exposed), the same blocks computed, and in the backward
/// pass their gradients reduce-scattered (exposed). `kv_bytes`: one rank's keys and values.
ContextAttention context_parallel_attention_s(const hw::Gpu& gpu, const hw::Network& network, const TrainingPlan& plan,
                                              int64_t batch_heads, int64_t head_dim, double kv_bytes,
                                              model::Direction direction, bool causal);

struct LayerTime {
  PassTime forward;
  PassTime backward;
};

/// The layer (built at the plan's t, b and s) on `gpu`, its tensor-parallel group of t consecutive GPUs on
/// `network`.
LayerTime gpu_layer_time(const model::Layer& layer, const model::ModelSpec& spec, const TrainingPlan& plan,
                         const hw::Gpu& gpu, const hw::Network& network);

}  // namespace phaze::megatron
