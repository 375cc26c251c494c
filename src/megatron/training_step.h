#pragma once

// One training iteration of Megatron-LM on a GPU cluster: its time on the critical path with a breakdown,
// its throughput and the memory of each GPU (docs/gpu.md, "Execution").

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "hw/system.h"
#include "megatron/layer_time.h"
#include "megatron/training_plan.h"
#include "model/layer_graph.h"
#include "model/model_spec.h"

namespace phaze::megatron {

/// Seconds of one iteration on the critical path. forward_s .. pp_comm_s are those of the busiest stage's
/// micro-batches; bubble_s is the pipeline fill and drain beyond them; dp_comm_s and optimizer_s follow
/// the last backward pass, with ZeRO-2/3's exposed collectives of every micro-batch. They sum to iteration_s.
struct StepTime {
  double forward_s = 0;    ///< forward kernels
  double backward_s = 0;   ///< backward kernels
  double recompute_s = 0;  ///< recomputed forward kernels
  double tp_comm_s = 0;    ///< tensor-parallel collectives (forward, recomputation, backward)
  double cp_comm_s = 0;    ///< context-parallel key/value exchange left exposed
  double ep_comm_s = 0;    ///< expert-parallel all-to-alls (dispatch and combine)
  double pp_comm_s = 0;    ///< pipeline sends of the busiest stage
  double bubble_s = 0;     ///< pipeline fill and drain
  double dp_comm_s = 0;    ///< exposed gradient reduction (and parameter gathering), tied embeddings
  double optimizer_s = 0;  ///< the optimizer step
  double iteration_s = 0;
};

/// Bytes on the GPU of the stage that needs most.
struct StepMemory {
  int64_t stage = 0;           ///< that stage (0 = first)
  double weights_bytes = 0;    ///< 16-bit parameters (a shard and two gathered layers with ZeRO-3), FP8 copies
  double gradients_bytes = 0;  ///< gradients: FP32 with BF16 (16-bit with --grad-reduce-in-bf16), 16-bit with FP16
  double optimizer_bytes = 0;  ///< FP32 master weights, Adam's two moments (and an FP32 gradient copy with FP16)
  double activations_bytes = 0;
  double allocator_bytes = 0;  ///< the caching allocator's overhead on the tensors above
  double runtime_bytes = 0;    ///< outside the tensors: driver reserve, CUDA context, libraries, NCCL
  double peak_bytes = 0;       ///< the sum
  int64_t capacity_bytes = 0;  ///< the GPU's HBM
  int64_t reserve_bytes = 0;   ///< headroom the plan asked to keep free
  bool fits = false;           ///< peak + reserve ≤ capacity
};

struct StepPrediction {
  TrainingPlan plan;
  int64_t micro_batches = 0;  ///< per pipeline per iteration
  StepTime time;
  StepMemory memory;
  double tokens_per_s = 0;
  double model_flop = 0;     ///< FLOP of one iteration without recomputation (whole cluster)
  double hardware_flop = 0;  ///< FLOP executed, recomputation included (whole cluster)
  /// model_flop with attention over every s × s block, as Megatron-LM counted until 2025 and NeMo 24.07
  double model_full_attention_flop = 0;
  double flop_per_s_per_gpu = 0;  ///< hardware_flop / (iteration_s · GPUs), Megatron-LM's figure
  double mfu = 0;                 ///< model_flop / (iteration_s · GPUs · dense 16-bit peak), FP8 runs too
  double mfu_ceiling = 1;         ///< the device's bound on mfu at the plan's precision (hw::mfu_ceiling)
};

/// What a prediction needs of the layers. It depends on the plan's t, c, ep, etp, b, s, sequence parallelism,
/// flash attention and its library, FP8, the token dispatcher, the shared expert's overlap and the multi-token
/// prediction modules only, so
/// a search over the other choices builds it once. The layers are one rank's: s / c tokens of each sequence.
struct LayerCosts {
  model::LayerGraph graph;  ///< at the plan's t, b and s
  LayerTime embedding, transformer, head;
  LayerTime dense_transformer;  ///< a mixture of experts' first dense layers (graph.dense_transformer)
  /// The projection of each multi-token prediction module (TrainingPlan::mtp_layers > 0), and its time.
  model::Layer mtp_projection;
  LayerTime mtp;
  /// GEMM FLOPs of the transformer layer's attention core (model::in_attention_core) in the layer graph,
  /// every s × s block, forward and backward: read by every prediction's FLOP counts.
  double attention_core_forward_flops = 0, attention_core_backward_flops = 0;
  /// Activation bytes of one transformer layer that every tensor-parallel rank stores whole without sequence
  /// parallelism (norm inputs, dropout masks, inputs of the first GEMM of each block); computed only for a
  /// plan with sequence parallelism.
  double replicated_activation_bytes = 0;
  double dense_replicated_activation_bytes = 0;  ///< the same of a dense first layer
  /// Logits of the head's cross-entropy on one rank (b · s/c tokens × its vocabulary rows): what Megatron-LM's
  /// unfused loss keeps in FP32 (TrainingPlan::unfused_loss).
  double loss_logits = 0;
  /// Weights of the transformer layer's GEMMs that Transformer Engine runs in FP8 (model::runs_in_fp8), per rank.
  double fp8_parameters = 0;
  double dense_fp8_parameters = 0;  ///< the same of a dense first layer
  /// GEMM FLOPs (forward and backward) the plan's expert load adds to one expert layer over balanced routing
  /// (TrainingPlan::expert_load; negative when tokens are dropped): executed, but not the model's.
  double expert_load_flops = 0;
};

/// Activation bytes of one transformer layer (`graph`'s, at the plan's t > 1, b and s) that every
/// tensor-parallel rank stores whole without sequence parallelism: act(t) = R + S/t and act(1) = R + S give
/// R (InputError when the layer at t = 1 overflows).
double replicated_activation_bytes(const model::ModelSpec& spec, const model::LayerGraph& graph,
                                   const TrainingPlan& plan);
/// Both of a plan with sequence parallelism into `costs` (the dense first layers' too), nothing otherwise.
void set_replicated_activation_bytes(LayerCosts& costs, const model::ModelSpec& spec, const TrainingPlan& plan);

/// What an iteration needs of a device besides its layer times: a GPU's (step_device) or a synthesized
/// accelerator's, so that both are priced by one execution model.
struct StepDevice {
  int64_t memory_bytes = 0;       ///< HBM capacity
  double peak_flop_per_s = 0;     ///< dense 16-bit tensor FLOP/s (for the MFU)
  double stream_bytes_per_s = 0;  ///< HBM bytes/s a streaming kernel sustains (the optimizer step)
  double dispatch_s = 0;          ///< least seconds of any kernel or transfer the host dispatches
  double runtime_bytes = 0;       ///< held outside the tensors by the driver, runtime and libraries
  double communicator_bytes = 0;  ///< held by each communicator of a group of more than one device
  double allocator_overhead = 0;  ///< the allocator's reserve beyond its tensors, as a fraction of them
  double mfu_ceiling = 1;         ///< no kernel runs its FLOPs faster than this share of the peak
  double fp8_mfu_ceiling = 1;     ///< the same with FP8 GEMMs (hw::mfu_ceiling with FP8)
  double fp8_weight_copies = 2;   ///< FP8 copies kept of each FP8 GEMM weight: it and its transpose on Hopper
};
StepDevice step_device(const hw::Gpu& gpu);

/// The layer costs of a plan (validated first) on the system's GPU.
LayerCosts layer_costs(const model::ModelSpec& spec, const hw::System& system, const TrainingPlan& plan);
/// The LayerCosts of `graph` with what depends on the graph alone filled in (the attention core's FLOPs);
/// the caller fills the times. Every LayerCosts starts here.
LayerCosts graph_costs(model::LayerGraph graph);

/// How a system's device prices the layers of a plan: a GPU by its kernels (gpu_pricer), an accelerator of the
/// template by the exact schedules of its layers (search/accelerator_prediction.h). The one seam through which
/// `predict` and `validate` reach a device's model of a layer; the iteration around the layers is this file's.
struct DevicePricer {
  /// The layer costs of a plan (validated first; InputError naming the option) on the system's device.
  std::function<LayerCosts(const model::ModelSpec&, const hw::System&, const TrainingPlan&)> layer_costs;
  /// What the iteration needs of the system's device besides its layers.
  std::function<StepDevice(const hw::System&)> step_device;
};
/// The GPU's: layer_costs and step_device of the system's GPU (InputError when it has none).
DevicePricer gpu_pricer();

/// Predicts one iteration; validates the plan first (InputError naming the option). The system's device
/// must be a GPU.
StepPrediction predict_step(const model::ModelSpec& spec, const hw::System& system, const TrainingPlan& plan);
/// The same with the layer costs given (built by layer_costs for a plan of the same t, c, b, s, sequence
/// parallelism, flash attention and FP8 settings).
StepPrediction predict_step(const model::ModelSpec& spec, const hw::System& system, const TrainingPlan& plan,
                            const LayerCosts& costs);
/// The same on any system whose device `pricer` prices.
StepPrediction predict_step(const model::ModelSpec& spec, const hw::System& system, const TrainingPlan& plan,
                            const DevicePricer& pricer);
/// The same on any device: its figures, the network joining the devices and the layer costs on it.
StepPrediction predict_step(const model::ModelSpec& spec, const StepDevice& device, const hw::Network& network,
                            const TrainingPlan& plan, const LayerCosts& costs);

}  // namespace phaze::megatron
