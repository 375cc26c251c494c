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

namespace phaze::megatron {

struct PassTime {
  double compute_s = 0;         ///< kernels on the GPU
  double tp_comm_s = 0;         ///< tensor-parallel collectives
  double attention_core_s = 0;  ///< of compute_s: the attention core (what selective recomputation re-runs)
  double total_s() const { return compute_s + tp_comm_s; }
};

struct LayerTime {
  PassTime forward;
  PassTime backward;
};

/// The layer (built at the plan's t, b and s) on `gpu`, its tensor-parallel group of t consecutive GPUs on
/// `network`.
LayerTime gpu_layer_time(const model::Layer& layer, const model::ModelSpec& spec, const TrainingPlan& plan,
                         const hw::Gpu& gpu, const hw::Network& network);

}  // namespace phaze::megatron
