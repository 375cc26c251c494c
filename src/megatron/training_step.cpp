#include "megatron/training_step.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "cost/adam_bytes.h"
#include "cost/collective_time.h"
#include "cost/gpu_kernel.h"
#include "model/operator_roles.h"
#include "util/checked_int.h"
#include "util/input_error.h"

namespace phaze::megatron {

namespace {

/// Bytes per parameter of the plan's precision (cost/adam_bytes.h).
cost::AdamBytes parameter_bytes(const TrainingPlan& plan) {
  return cost::adam_bytes(plan.bf16, plan.bf16_gradients);
}
double optimizer_traffic_bytes(const TrainingPlan& plan) {
  return cost::adam_step_bytes(parameter_bytes(plan));
}

/// Megatron-Core's gradient buckets: max(40 M, 1 M · d) parameters (--ddp-bucket-size's default).
double bucket_parameters(const TrainingPlan& plan) {
  return std::max(40e6, 1e6 * static_cast<double>(plan.dp));
}

/// One stage's per-micro-batch times and its parameters per GPU.
struct Stage {
  PassTime forward, backward, recompute;
  double send_s = 0;           ///< pipeline sends on its critical path
  double data_parallel_s = 0;  ///< ZeRO-2/3 collectives of each micro-batch left exposed
  double parameters = 0;
  double fp8_parameters = 0;     ///< of those, the FP8 GEMMs' weights
  double expert_parameters = 0;  ///< of those, the routed experts' (E/ep experts of each layer)
  /// The largest unit ZeRO-2/3 holds whole: a transformer layer, or the embedding or head on its stage.
  double largest_unit_parameters = 0;
  double busy_s() const {
    return forward.total_s() + backward.total_s() + recompute.total_s() + send_s + data_parallel_s;
  }
};

PassTime scaled(const PassTime& t, double k) {
  return PassTime{t.compute_s * k, t.tp_comm_s * k, t.attention_core_s * k, t.cp_comm_s * k, t.ep_comm_s * k};
}

void add(PassTime& to, const PassTime& t) {
  to.compute_s += t.compute_s;
  to.tp_comm_s += t.tp_comm_s;
  to.attention_core_s += t.attention_core_s;
  to.cp_comm_s += t.cp_comm_s;
  to.ep_comm_s += t.ep_comm_s;
}

/// Bytes of `parameters` as the optimizer hands them out (what ZeRO shards and all-gathers): 2 each, or 1 for
/// the FP8 GEMMs' weights (`fp8_parameters` of them) with --fp8-param-gather.
double gathered_bytes(const TrainingPlan& plan, double parameters, double fp8_parameters) {
  const double weight = parameter_bytes(plan).weights;
  return plan.fp8_param_gather ? weight * parameters - fp8_parameters : weight * parameters;
}

/// Bytes of `parameters` held whole for the GEMMs: their gathered bytes, and beside them the device's FP8
/// copies of each FP8 GEMM weight (the copy and, on Hopper, its transpose: StepDevice::fp8_weight_copies),
/// of which --fp8-param-gather's FP8 parameters are one.
double held_weight_bytes(const TrainingPlan& plan, const StepDevice& device, double parameters, double fp8_parameters) {
  if (!plan.fp8) return gathered_bytes(plan, parameters, fp8_parameters);
  const double copies = device.fp8_weight_copies - (plan.fp8_param_gather ? 1 : 0);
  return gathered_bytes(plan, parameters, fp8_parameters) + copies * fp8_parameters;
}

/// HBM bytes of casting FP8 GEMM weights for the GEMMs: read the 16-bit weight and write its FP8 copies
/// (4 bytes each on Hopper), or with --fp8-param-gather read the FP8 parameter and write the copies it is
/// not (its transpose on Hopper: 2; nothing where the GEMMs read both layouts).
double weight_cast_bytes(const TrainingPlan& plan, const StepDevice& device, double fp8_parameters) {
  if (!plan.fp8_param_gather) return (parameter_bytes(plan).weights + device.fp8_weight_copies) * fp8_parameters;
  const double others = device.fp8_weight_copies - 1;
  return others > 0 ? (1 + others) * fp8_parameters : 0;
}

/// Seconds of a streaming kernel (or kernels) moving `bytes` bytes of HBM: at least one dispatch.
double stream_s(const StepDevice& device, double bytes) {
  return std::max(bytes / device.stream_bytes_per_s, device.dispatch_s);
}

/// The transfer of one micro-batch's activation (or gradient) between stages: with t > 1 each rank of the
/// group sends 1/t of it and the receivers all-gather it over their group (Megatron's scatter/gather); with
/// sequence parallelism the tensor is already split and stays so.
double stage_send_s(const model::LayerGraph& g, const TrainingPlan& plan, const StepDevice& device,
                    const hw::Network& network) {
  if (plan.pp == 1) return 0;
  const double bytes = static_cast<double>(g.transformer.output_bytes);
  const double t = static_cast<double>(plan.tp);
  // Each transfer is one more operation the host dispatches: it takes at least the launch time.
  double s = std::max(device.dispatch_s, cost::send_s(network, plan.tp * plan.cp * plan.dp, bytes / t));
  if (plan.tp > 1 && !plan.sequence_parallel)
    s += std::max(device.dispatch_s, cost::reduce_scatter_s(network, cost::DeviceGroup{plan.tp, 1}, bytes));
  return s;
}

/// Activation bytes one transformer layer keeps per micro-batch until its backward pass, and the bytes it
/// holds while it is recomputed and run backward (Korthikanti et al. 2022, Table 2; docs/gpu.md).
struct LayerActivations {
  double stored = 0;
  double working = 0;
};

/// `dense`: of a mixture of experts' dense first layer.
LayerActivations layer_activations(const LayerCosts& c, const model::ModelSpec& spec, const TrainingPlan& plan,
                                   bool dense) {
  const double t = static_cast<double>(plan.tp), s = static_cast<double>(plan.local_seq()),
               b = static_cast<double>(plan.micro_batch), h = static_cast<double>(spec.hidden);
  const bool moe = spec.moe() && !dense;
  double all =
      static_cast<double>(dense ? c.graph.dense_transformer.activation_bytes : c.graph.transformer.activation_bytes);
  if (plan.sequence_parallel)
    all -= (dense ? c.dense_replicated_activation_bytes : c.replicated_activation_bytes) * (1 - 1 / t);
  if (plan.fp8) {
    // Transformer Engine keeps the inputs its FP8 GEMMs need for their weight gradients in FP8, one byte
    // where the 16-bit layer keeps two: the QKV and FC1 inputs (split by the sequence with sequence
    // parallelism) and the FC2 input save a byte each; the attention output projection's input saves one
    // too, unless a fused attention kernel keeps that tensor (its output) in 16 bits anyway, when its FP8
    // copy is a byte more.
    // A mixture of experts keeps each token's k permuted copies for its experts' FC1 (and the shared
    // expert's input) and k expert FC2 inputs (and the shared expert's).
    const double tokens = b * s, rows = plan.sequence_parallel ? t : 1;
    const double projection_in = tokens * static_cast<double>(spec.heads * spec.v_head_dim()) / t;
    const double k = static_cast<double>(spec.experts_per_token);
    const double fc1_copies = moe ? k + (spec.shared_expert_ffn > 0 ? 1 : 0) : 1;
    const double fc2_width =
        moe ? k * static_cast<double>(spec.expert_ffn) + static_cast<double>(spec.shared_expert_ffn)
            : static_cast<double>(spec.ffn);
    all -= tokens * h / rows + (moe ? fc1_copies * tokens * h : tokens * h / rows) + tokens * fc2_width / t;
    all += plan.flash_attention ? projection_in : -projection_in;
  }
  // The attention core's s × s tensors: softmax output, dropout mask and output (5 bytes per score with
  // dropout, the softmax output's 2 without). A flash kernel never stores them, nor does a layer graph whose
  // attention core is already one fused kernel (an accelerator's, model::Shape::fused_attention).
  const double core = c.graph.shape.fused_attention
                          ? 0
                          : (spec.attention_dropout > 0 ? 5 : 2) * b * (static_cast<double>(spec.heads) / t) * s * s;
  const double kept = plan.flash_attention ? all - core : all;  // what the layer stores without recomputation
  const double input = 2 * s * b * h / (plan.sequence_parallel ? t : 1);
  switch (plan.recompute) {
    case Recompute::None: return LayerActivations{kept, 0};
    case Recompute::Selective: return LayerActivations{all - core, kept - (all - core)};
    case Recompute::Full: return LayerActivations{input, kept};
  }
  return {};
}

/// What Megatron-LM's unfused loss keeps beyond the layer graph's head: its softmax in FP32 (4 bytes per
/// logit) where the graph keeps it in the logits' 16 bits.
double unfused_loss_extra_bytes(const LayerCosts& costs, const TrainingPlan& plan) {
  constexpr double kFp32Bytes = 4;
  if (!plan.unfused_loss) return 0;
  return costs.loss_logits * (kFp32Bytes - static_cast<double>(costs.graph.precision.activation_bytes));
}

/// Stage i's micro-batches in flight at the peak: min(m, p − i) under 1F1B, times (1 + (p − 1)/(p·v)) when
/// interleaved (Korthikanti et al. 2022, 4.2.3).
double in_flight(const TrainingPlan& plan, int64_t stage) {
  const double p = static_cast<double>(plan.pp), v = static_cast<double>(plan.vp);
  const double base = static_cast<double>(std::min(plan.micro_batches(), plan.pp - stage));
  return plan.vp > 1 ? base * (1 + (p - 1) / (p * v)) : base;
}

/// GEMM FLOPs of one micro-batch on one rank: what the model needs, and what the kernels execute.
struct IterationFlops {
  double model = 0;                 ///< forward and backward, attention over the blocks the model needs
  double hardware = 0;              ///< as executed: recomputation included, attention as its kernels compute it
  double model_full_attention = 0;  ///< forward and backward, attention over every s × s block
};

/// The model counts a causal model's attention products over the causal half of the s × s scores (the
/// blocks a token needs), a bidirectional model's over all of them (docs/gpu.md, "FLOPs"). A materialised
/// attention core executes every block; a fused kernel executes the model's share, and its backward pass
/// recomputes Q·Kᵀ (five products where the layer graph has four): cost::flash_attention_flops, the count
/// its time is priced on. So the model's FLOPs never exceed what
/// the kernels run, and MFU stays at most the kernels' own efficiency.
/// GEMM FLOPs of a layer's forward and backward passes.
double pass_flops(const model::Layer& layer) {
  return static_cast<double>(layer.forward_flops()) + static_cast<double>(layer.backward_flops());
}

IterationFlops iteration_flops(const LayerCosts& costs, const model::ModelSpec& spec, const TrainingPlan& plan) {
  const model::LayerGraph& g = costs.graph;
  const double core_forward = costs.attention_core_forward_flops, core_backward = costs.attention_core_backward_flops;
  const double share = cost::attention_score_share(spec.causal(), plan.seq, spec.sliding_window);
  const int64_t batch_heads = plan.micro_batch * (spec.heads / plan.tp);
  // With context parallelism the graph is one rank's s/c tokens and its attention core covers (s/c)² of
  // the scores; the rank's share of all s² is c times that.
  const double c = static_cast<double>(plan.cp);
  auto fused = [&](model::Direction direction) {
    return c * cost::flash_attention_flops(batch_heads, plan.local_seq(), spec.attention_head_dim(), direction,
                                           spec.causal(), spec.sliding_window);
  };
  const double ran_forward = plan.flash_attention ? fused(model::Direction::Forward) : core_forward;
  const double ran_backward = plan.flash_attention ? fused(model::Direction::Backward) : core_backward;
  // The multi-token prediction modules' transformer layers count with the model's.
  const double mtp = static_cast<double>(plan.mtp_layers);
  const double L = static_cast<double>(spec.num_layers) + mtp;
  double module = 0;  // one multi-token prediction module's
  if (plan.mtp_layers > 0)
    for (const model::Layer* layer : {&g.transformer, &g.head, &costs.mtp_projection}) module += pass_flops(*layer);
  const double graph = static_cast<double>(g.forward_flops() + g.backward_flops()) + mtp * module;
  const double core = core_forward + core_backward;
  // The model counts the experts' work at balanced routing, whatever is padded or dropped.
  const double load_flops = (static_cast<double>(g.main_layers()) + mtp) * costs.expert_load_flops;
  IterationFlops out;
  out.model = graph - load_flops - L * core + L * share * c * core;
  out.model_full_attention = graph - load_flops - L * core + L * c * core;
  out.hardware = graph + L * (ran_forward - core_forward + ran_backward - core_backward);
  if (plan.recompute == Recompute::Full)
    out.hardware += (static_cast<double>(g.main_layers()) + mtp) * static_cast<double>(g.transformer.forward_flops()) +
                    static_cast<double>(g.dense_layers()) * static_cast<double>(g.dense_transformer.forward_flops()) +
                    L * (ran_forward - core_forward);
  if (plan.recompute == Recompute::Selective) out.hardware += L * ran_forward;
  return out;
}

/// The group ZeRO shards over: shard_size GPUs of the data- and context-parallel group, t apart.
cost::DeviceGroup shard_group(const TrainingPlan& plan) {
  return cost::DeviceGroup{plan.shard_size(), plan.tp};
}

/// The GPUs that hold the same routed experts: t·c·d / (etp · ep) of them, etp · ep apart (Megatron-Core's
/// expert data-parallel group); the shard group itself when the experts are laid out as the dense layers.
cost::DeviceGroup expert_shard_group(const TrainingPlan& plan) {
  if (plan.ep == 1 && plan.expert_tp() == plan.tp) return shard_group(plan);
  const int64_t width = plan.expert_tp() * plan.ep;
  return cost::DeviceGroup{plan.tp * plan.cp * plan.dp / width, width};
}

/// A stage's bytes of one kind split into its dense parameters' and its routed experts'.
struct SplitBytes {
  double dense = 0, experts = 0;
};

/// Seconds of a ring collective (`ring`: all-reduce or reduce-scatter) of a stage's bytes: the dense
/// parameters' over the shard group, the routed experts' over their own group when it is another (the two
/// one after the other).
double stage_ring_s(const TrainingPlan& plan, const hw::Network& network, SplitBytes bytes,
                    double (*ring)(const hw::Network&, cost::DeviceGroup, double)) {
  const cost::DeviceGroup group = shard_group(plan), experts = expert_shard_group(plan);
  if (experts.size == group.size && experts.stride == group.stride)
    return ring(network, group, bytes.dense + bytes.experts);
  return ring(network, group, bytes.dense) + ring(network, experts, bytes.experts);
}

/// A stage's gradient bytes, dense and routed experts'.
SplitBytes gradient_bytes(const TrainingPlan& plan, const Stage& st) {
  const double per = parameter_bytes(plan).gradients;
  return {(st.parameters - st.expert_parameters) * per, st.expert_parameters * per};
}

/// The bytes ZeRO gathers (gathered_bytes), dense and routed experts' (all FP8 GEMM weights under --fp8).
SplitBytes gathered_split(const TrainingPlan& plan, const Stage& st) {
  const double expert_fp8 = plan.fp8 ? st.expert_parameters : 0;
  return {gathered_bytes(plan, st.parameters - st.expert_parameters, st.fp8_parameters - expert_fp8),
          gathered_bytes(plan, st.expert_parameters, expert_fp8)};
}

/// Exposed seconds of a stage's data-parallel synchronisation after its last backward pass (docs/gpu.md,
/// "Execution"), over the d · c GPUs that hold the same layers. ZeRO 0: an all-reduce of the gradients.
/// ZeRO 1 (the distributed optimizer): a reduce-scatter of the gradients and an all-gather of the updated
/// 16-bit parameters, each half a ring all-reduce of its bytes. ZeRO 2 reduce-scatters the gradients during
/// each backward pass (zero_micro_batch_s), ZeRO 3 gathers the parameters layer by layer too, so neither is
/// left for the end. With a sharding group smaller than d · c the groups all-reduce their gradient shards.
/// --overlap-grad-reduce hides the gradient reduction behind the last micro-batch's backward pass, bucket
/// by bucket, all but the last bucket; --overlap-param-gather hides the all-gather behind the next
/// iteration's first forward pass, all but the first bucket.
double data_parallel_sync_s(const TrainingPlan& plan, const hw::Network& network, const Stage& st) {
  const double bucket_share = std::min(1.0, bucket_parameters(plan) / std::max(st.parameters, 1.0));
  // ZeRO 0's group is every GPU holding the stage's layers: shard_group without a sharding group; the
  // routed experts' gradients go over the GPUs holding the same experts.
  const int64_t replicas = plan.dp * plan.cp / plan.shard_size();
  double gradients_s = plan.zero == 0   ? stage_ring_s(plan, network, gradient_bytes(plan, st), cost::all_reduce_s)
                       : plan.zero == 1 ? stage_ring_s(plan, network, gradient_bytes(plan, st), cost::reduce_scatter_s)
                                        : 0;
  if (replicas > 1)
    gradients_s +=
        cost::all_reduce_s(network, cost::DeviceGroup{replicas, plan.tp * plan.shard_size()},
                           st.parameters * parameter_bytes(plan).gradients / static_cast<double>(plan.shard_size()));
  double parameters_s = plan.zero == 1 || plan.zero == 2
                            ? stage_ring_s(plan, network, gathered_split(plan, st), cost::reduce_scatter_s)
                            : 0;
  if (plan.overlap_dp) gradients_s = cost::exposed_s(gradients_s, st.backward.total_s(), bucket_share * gradients_s);
  if (plan.overlap_param_gather)
    parameters_s = cost::exposed_s(parameters_s, st.forward.total_s(), bucket_share * parameters_s);
  return gradients_s + parameters_s;
}

/// Exposed seconds of ZeRO-2/3's collectives in one micro-batch of a stage of `layers` layers: ZeRO 2
/// reduce-scatters the gradients during every backward pass; ZeRO 3 also all-gathers each layer's
/// parameters before its forward and again before its backward pass. --overlap-grad-reduce and
/// --overlap-param-gather overlap them with the pass, layer by layer, so one layer's share stays exposed
/// (the first gather, the last reduction); without them they are exposed whole. In the backward pass the
/// overlapped collectives share what the pass hides: first the gather (when --overlap-param-gather), then
/// the reduction (when --overlap-grad-reduce).
double zero_micro_batch_s(const TrainingPlan& plan, const hw::Network& network, const Stage& st, double layers) {
  if (plan.zero < 2) return 0;
  const double one_layer = 1 / std::max(layers, 1.0);
  auto hidden = [&](double collective_s, double pass_s, bool overlapped) {
    return overlapped ? cost::exposed_s(collective_s, pass_s, one_layer * collective_s) : collective_s;
  };
  const double reduce_s = stage_ring_s(plan, network, gradient_bytes(plan, st), cost::reduce_scatter_s);
  if (plan.zero == 2) return hidden(reduce_s, st.backward.total_s(), plan.overlap_dp);
  const double gather_s = stage_ring_s(plan, network, gathered_split(plan, st), cost::reduce_scatter_s);
  const double backward_s = st.backward.total_s();
  const double gather_exposed = hidden(gather_s, backward_s, plan.overlap_param_gather);
  const double left_s = std::max(0.0, backward_s - (gather_s - gather_exposed));
  return hidden(gather_s, st.forward.total_s(), plan.overlap_param_gather) + gather_exposed +
         hidden(reduce_s, left_s, plan.overlap_dp);
}

/// Adds `count` transformer layers of one kind to a stage: their passes (and what recomputation reruns of
/// them: the whole forward pass, or the attention core), their parameters, routed experts' parameters and
/// FP8 GEMM weights (`fp8_parameters` a layer), and the layer as a unit ZeRO-2/3 holds whole.
void add_layers(Stage& st, const TrainingPlan& plan, double count, const model::Layer& layer, const LayerTime& time,
                double fp8_parameters) {
  if (count <= 0) return;
  add(st.forward, scaled(time.forward, count));
  add(st.backward, scaled(time.backward, count));
  if (plan.recompute == Recompute::Full) add(st.recompute, scaled(time.forward, count));
  if (plan.recompute == Recompute::Selective)
    add(st.recompute, PassTime{count * time.forward.attention_core_s, 0, count * time.forward.attention_core_s,
                               count * time.forward.cp_comm_s});
  st.parameters += count * static_cast<double>(layer.parameters);
  st.expert_parameters += count * static_cast<double>(layer.routed_expert_parameters);
  if (plan.fp8) st.fp8_parameters += count * fp8_parameters;
  st.largest_unit_parameters = std::max(st.largest_unit_parameters, static_cast<double>(layer.parameters));
}

/// Seconds of the busiest stage's expert all-to-alls that --overlap-moe-expert-parallel-comm hides (docs/gpu.md,
/// "Expert parallelism"): in 1F1B's steady state a micro-batch's forward pass runs merged with an earlier
/// one's backward pass, so the forward's all-to-alls run under the backward's computation and the backward's
/// under the forward's, each up to the other's length. At least m − p of the m micro-batches are paired so
/// (the first stage's warm-up holds p − 1 forward passes alone, its cool-down as many backward passes, and a
/// lone stage starts with one forward pass and ends with one backward pass).
double hidden_expert_comm_s(const TrainingPlan& plan, const Stage& top) {
  if (!plan.overlap_moe_comm) return 0;
  const double pairs = static_cast<double>(std::max<int64_t>(0, plan.micro_batches() - plan.pp));
  return pairs * (std::min(top.forward.ep_comm_s, top.backward.compute_s) +
                  std::min(top.backward.ep_comm_s, top.forward.compute_s));
}

/// The activation bytes of `at_t` (a layer at the plan's t) that every rank keeps whole: act(t) = R + S/t and
/// act(1) = R + S, the layer at t = 1 made by `build`.
double replicated_bytes(const model::ModelSpec& spec, const model::Layer& at_t, const model::Precision& precision,
                        const TrainingPlan& plan,
                        model::Layer (*build)(const model::ModelSpec&, const model::Shape&, const model::Precision&)) {
  model::Layer one;
  try {
    model::Shape at_one = plan.layer_shape();
    at_one.tp = 1;
    at_one.etp = plan.expert_tp();
    one = build(spec, at_one, precision);
  } catch (const SizeOverflow&) {
    throw InputError(
        fmt::format("{}: seq = {}, mbs = {}: the layer at t = 1, from which sequence parallelism's "
                    "memory is derived, exceeds 2^63 - 1 elements, bytes or FLOPs",
                    spec.name, plan.local_seq(), plan.micro_batch));
  }
  const double t = static_cast<double>(plan.tp);
  return (t * static_cast<double>(at_t.activation_bytes) - static_cast<double>(one.activation_bytes)) / (t - 1);
}

}  // namespace

double replicated_activation_bytes(const model::ModelSpec& spec, const model::LayerGraph& graph,
                                   const TrainingPlan& plan) {
  return replicated_bytes(spec, graph.transformer, graph.precision, plan, model::build_transformer_layer);
}

void set_replicated_activation_bytes(LayerCosts& costs, const model::ModelSpec& spec, const TrainingPlan& plan) {
  costs.replicated_activation_bytes = 0;
  costs.dense_replicated_activation_bytes = 0;
  if (!plan.sequence_parallel) return;
  costs.replicated_activation_bytes = replicated_activation_bytes(spec, costs.graph, plan);
  if (costs.graph.dense_layers() > 0)
    costs.dense_replicated_activation_bytes = replicated_bytes(
        spec, costs.graph.dense_transformer, costs.graph.precision, plan, model::build_dense_transformer_layer);
}

StepDevice step_device(const hw::Gpu& gpu) {
  return StepDevice{gpu.hbm_bytes,
                    hw::peak_tensor_flop_per_s(gpu),
                    gpu.hbm_bandwidth * gpu.memory_efficiency,
                    gpu.kernel_launch_s,
                    static_cast<double>(gpu.runtime_memory_bytes),
                    static_cast<double>(gpu.communicator_memory_bytes),
                    gpu.allocator_overhead,
                    hw::mfu_ceiling(gpu),
                    hw::mfu_ceiling(gpu, true),
                    gpu.fp8_needs_transpose ? 2.0 : 1.0};
}

LayerCosts graph_costs(model::LayerGraph graph) {
  LayerCosts c;
  c.graph = std::move(graph);
  for (const model::Operator& op : c.graph.transformer.forward.ops)
    if (model::in_attention_core(op.id)) c.attention_core_forward_flops += static_cast<double>(op.gemm_flops());
  for (const model::Operator& op : c.graph.transformer.backward.ops)
    if (model::in_attention_core(op.id)) c.attention_core_backward_flops += static_cast<double>(op.gemm_flops());
  for (const model::Operator& op : c.graph.head.forward.ops)
    for (const model::VectorPass& pass : op.passes)
      if (pass.kind == model::VectorKind::CrossEntropy) c.loss_logits += static_cast<double>(pass.elements);
  // A grouped GEMM has a weight per expert.
  const auto fp8_parameters = [](const model::Layer& layer) {
    double sum = 0;
    for (const model::Operator& op : layer.forward.ops)
      if (model::is_fp8_gemm(op))
        sum += static_cast<double>(op.gemm->k) * static_cast<double>(op.gemm->n) * static_cast<double>(op.gemm->batch);
    return sum;
  };
  c.fp8_parameters = fp8_parameters(c.graph.transformer);
  if (c.graph.dense_layers() > 0) c.dense_fp8_parameters = fp8_parameters(c.graph.dense_transformer);
  return c;
}

LayerCosts layer_costs(const model::ModelSpec& spec, const hw::System& system, const TrainingPlan& plan) {
  validate(plan, spec);
  const hw::Gpu gpu = hw::as_sustained(hw::with_attention_library(hw::gpu_of(system), plan.attention_library));
  if (plan.fp8 && hw::peak_fp8_flop_per_s(gpu) <= 0)
    throw InputError(fmt::format("--fp8: {} has no FP8 tensor cores", gpu.name));
  LayerCosts c = graph_costs(model::build_layer_graph(spec, plan.layer_shape(), model::Precision{}, spec.name));
  c.embedding = gpu_layer_time(c.graph.embedding, spec, plan, gpu, system.network);
  c.transformer = gpu_layer_time(c.graph.transformer, spec, plan, gpu, system.network);
  c.head = gpu_layer_time(c.graph.head, spec, plan, gpu, system.network);
  if (c.graph.dense_layers() > 0)
    c.dense_transformer = gpu_layer_time(c.graph.dense_transformer, spec, plan, gpu, system.network);
  if (plan.mtp_layers > 0) {
    c.mtp_projection = model::build_mtp_projection_layer(spec, c.graph.shape, c.graph.precision);
    c.mtp = gpu_layer_time(c.mtp_projection, spec, plan, gpu, system.network);
  }
  set_replicated_activation_bytes(c, spec, plan);
  if (spec.moe() && plan.expert_load() != 1) {
    model::Shape balanced = plan.layer_shape();
    balanced.expert_load = 1;
    balanced.expert_padded = false;
    c.expert_load_flops =
        pass_flops(c.graph.transformer) - pass_flops(model::build_transformer_layer(spec, balanced, c.graph.precision));
  }
  return c;
}

StepPrediction predict_step(const model::ModelSpec& spec, const hw::System& system, const TrainingPlan& plan) {
  return predict_step(spec, system, plan, layer_costs(spec, system, plan));
}

DevicePricer gpu_pricer() {
  return DevicePricer{[](const model::ModelSpec& spec, const hw::System& system, const TrainingPlan& plan) {
                        return layer_costs(spec, system, plan);
                      },
                      [](const hw::System& system) { return step_device(hw::gpu_of(system)); }};
}

StepPrediction predict_step(const model::ModelSpec& spec, const hw::System& system, const TrainingPlan& plan,
                            const DevicePricer& pricer) {
  return predict_step(spec, pricer.step_device(system), system.network, plan, pricer.layer_costs(spec, system, plan));
}

StepPrediction predict_step(const model::ModelSpec& spec, const hw::System& system, const TrainingPlan& plan,
                            const LayerCosts& costs) {
  return predict_step(spec, step_device(hw::gpu_of(system)), system.network, plan, costs);
}

StepPrediction predict_step(const model::ModelSpec& spec, const StepDevice& device, const hw::Network& given_network,
                            const TrainingPlan& plan, const LayerCosts& costs) {
  validate(plan, spec);
  // A torus runs the job on the slice its devices take.
  std::optional<hw::Network> sized;
  if (given_network.tiers.front().torus)
    sized = hw::sized_network(given_network, plan.gpus(), "the system's network for the plan's devices");
  const hw::Network& network = sized ? *sized : given_network;
  const model::LayerGraph& g = costs.graph;
  const LayerTime& emb = costs.embedding;
  const LayerTime& layer = costs.transformer;
  const LayerTime& head = costs.head;

  const int64_t p = plan.pp, m = plan.micro_batches();
  const double v = static_cast<double>(plan.vp);
  const double send = stage_send_s(g, plan, device, network);

  std::vector<Stage> stages(static_cast<size_t>(p));
  for (int64_t i = 0; i < p; ++i) {
    Stage& st = stages[static_cast<size_t>(i)];
    const double per_stage = static_cast<double>(stage_layers(plan, spec, i));
    const double dense_layers = static_cast<double>(stage_dense_layers(plan, spec, i));
    const double main_layers = per_stage - dense_layers;
    add_layers(st, plan, main_layers, g.transformer, layer, costs.fp8_parameters);
    add_layers(st, plan, dense_layers, g.dense_transformer, costs.dense_transformer, costs.dense_fp8_parameters);
    if (i == 0) {
      add(st.forward, emb.forward);
      add(st.backward, emb.backward);
      st.parameters += static_cast<double>(g.embedding.parameters);
      st.largest_unit_parameters = std::max(st.largest_unit_parameters, static_cast<double>(g.embedding.parameters));
    }
    if (i == p - 1 && plan.mtp_layers > 0) {
      // Each multi-token prediction module: its projection, a transformer layer as the model's last, the LM
      // head and loss again (the head's weights are the main one's).
      const double d = static_cast<double>(plan.mtp_layers);
      add_layers(st, plan, d, g.transformer, layer, costs.fp8_parameters);
      for (const PassTime* pass : {&costs.mtp.forward, &head.forward}) add(st.forward, scaled(*pass, d));
      for (const PassTime* pass : {&costs.mtp.backward, &head.backward}) add(st.backward, scaled(*pass, d));
      st.parameters += d * static_cast<double>(costs.mtp_projection.parameters);
    }
    if (i == p - 1) {
      add(st.forward, head.forward);
      add(st.backward, head.backward);
      // With one stage the tied LM head is the embedding's own table.
      st.parameters += static_cast<double>(g.head.parameters - (p == 1 ? g.head.tied_copy_parameters : 0));
      st.largest_unit_parameters = std::max(st.largest_unit_parameters, static_cast<double>(g.head.parameters));
    }
    st.send_s = p > 1 ? 2 * v * send : 0;
    if (plan.zero == 3 && plan.fp8) {
      // ZeRO-3 casts each gathered layer's FP8 weights (and their transposes) before its forward and its
      // backward pass.
      const double cast_s = stream_s(device, weight_cast_bytes(plan, device, st.fp8_parameters));
      st.forward.compute_s += cast_s;
      st.backward.compute_s += cast_s;
    }
    // ZeRO-2/3 go layer by layer: the last stage's multi-token prediction layers are among them.
    const double mtp_layers = i == p - 1 ? static_cast<double>(plan.mtp_layers) : 0;
    st.data_parallel_s = zero_micro_batch_s(plan, network, st, per_stage + mtp_layers);
  }

  // 1F1B: the busiest stage runs its m micro-batches back to back; the others fill and drain the pipeline
  // before and after it, in chunks of 1/v of their work when interleaved.
  size_t busiest = 0;
  double sum = 0;
  for (size_t i = 0; i < stages.size(); ++i) {
    sum += stages[i].busy_s();
    if (stages[i].busy_s() > stages[busiest].busy_s()) busiest = i;
  }
  const Stage& top = stages[busiest];
  const double md = static_cast<double>(m);
  // FP8 weights and their transposes are cast once per iteration, on the first micro-batch (ZeRO-3 casts
  // them per gathered layer instead, above); with --fp8-param-gather the FP8 weights come from the
  // optimizer and only the transposes are made.
  const double weight_cast_s =
      plan.fp8 && plan.zero < 3 ? stream_s(device, weight_cast_bytes(plan, device, top.fp8_parameters)) : 0;
  double pipeline_s = md * top.busy_s() + (sum - top.busy_s()) / v + weight_cast_s;

  StepPrediction out;
  out.plan = plan;
  out.micro_batches = m;
  StepTime& time = out.time;
  time.forward_s = md * top.forward.compute_s + weight_cast_s;
  time.backward_s = md * top.backward.compute_s;
  time.recompute_s = md * top.recompute.compute_s;
  time.tp_comm_s = md * (top.forward.tp_comm_s + top.backward.tp_comm_s + top.recompute.tp_comm_s);
  time.cp_comm_s = md * (top.forward.cp_comm_s + top.backward.cp_comm_s + top.recompute.cp_comm_s);
  time.ep_comm_s = md * (top.forward.ep_comm_s + top.backward.ep_comm_s + top.recompute.ep_comm_s);
  time.pp_comm_s = md * top.send_s;
  // The fill and drain as it enters pipeline_s, not as a difference of it (which rounds to -0 without one).
  time.bubble_s = (sum - top.busy_s()) / v;
  const double hidden_s = hidden_expert_comm_s(plan, top);
  pipeline_s -= hidden_s;
  time.ep_comm_s -= hidden_s;

  // Gradient reduction over the replicas after each stage's last backward pass (stage i ends earlier than
  // stage 0 by the backward passes of the stages before it); the tied embedding's gradient is all-reduced
  // between the first and the last stage.
  // The tied copy's gradient, in the gradients' own type (FP32 with BF16).
  const double tied_gradient_bytes =
      spec.tied_head ? static_cast<double>(g.head.tied_copy_parameters) * parameter_bytes(plan).gradients : 0;
  const double tied = p > 1 ? cost::all_reduce_s(network, cost::DeviceGroup{2, plan.tp * plan.cp * plan.dp * (p - 1)},
                                                 tied_gradient_bytes)
                            : 0;
  double end_s = pipeline_s, offset_s = 0, largest_parameters = 0, largest_sharded = 0;
  // What ZeRO divides by the shard count: the routed experts' parameters shard over their own group
  // (expert_shard_group), so they count shard_size / that group's size times.
  const double expert_weight =
      static_cast<double>(plan.shard_size()) / static_cast<double>(expert_shard_group(plan).size);
  const auto sharded = [&](const Stage& st) { return st.parameters + (expert_weight - 1) * st.expert_parameters; };
  for (int64_t i = 0; i < p; ++i) {
    const Stage& st = stages[static_cast<size_t>(i)];
    double reduce = data_parallel_sync_s(plan, network, st);
    if (i == 0 || i == p - 1) reduce += tied;
    end_s = std::max(end_s, pipeline_s - offset_s + reduce);
    offset_s += (st.backward.total_s() + st.recompute.total_s()) / v;
    largest_parameters = std::max(largest_parameters, st.parameters);
    largest_sharded = std::max(largest_sharded, sharded(st));
  }
  time.dp_comm_s = end_s - pipeline_s + md * top.data_parallel_s;
  const double shards = static_cast<double>(plan.shard_size());
  const double updated = plan.distributed_optimizer() ? largest_sharded / shards : largest_parameters;
  time.optimizer_s = stream_s(device, updated * optimizer_traffic_bytes(plan));
  time.iteration_s = end_s + time.optimizer_s;

  // Memory of each stage; the largest is reported.
  const LayerActivations acts = layer_activations(costs, spec, plan, false);
  const LayerActivations dense_acts =
      g.dense_layers() > 0 ? layer_activations(costs, spec, plan, true) : LayerActivations{};
  const cost::AdamBytes bytes = parameter_bytes(plan);
  // One NCCL communicator per parallel group of more than one GPU.
  // With c > 1 the gradients are reduced over a data-and-context-parallel group of its own.
  const int communicators =
      (plan.tp > 1) + (plan.cp > 1) + (plan.pp > 1) + (plan.dp > 1) + (plan.cp > 1 && plan.dp > 1);
  const double runtime = device.runtime_bytes + communicators * device.communicator_bytes;
  for (int64_t i = 0; i < p; ++i) {
    const Stage& st = stages[static_cast<size_t>(i)];
    const double flight = in_flight(plan, i);
    const double dense_layers = static_cast<double>(stage_dense_layers(plan, spec, i));
    const double main_layers = static_cast<double>(stage_layers(plan, spec, i)) - dense_layers;
    // One layer at a time is recomputed and run backward: the larger working set of the kinds held.
    double activations = flight * main_layers * acts.stored + flight * dense_layers * dense_acts.stored +
                         std::max(main_layers > 0 ? acts.working : 0, dense_layers > 0 ? dense_acts.working : 0);
    if (i == 0) activations += flight * static_cast<double>(g.embedding.activation_bytes);
    if (i == p - 1) activations += static_cast<double>(g.head.activation_bytes) + unfused_loss_extra_bytes(costs, plan);
    if (i == p - 1 && plan.mtp_layers > 0)
      activations += static_cast<double>(plan.mtp_layers) *
                     (flight * acts.stored + static_cast<double>(costs.mtp_projection.activation_bytes) +
                      static_cast<double>(g.head.activation_bytes) + unfused_loss_extra_bytes(costs, plan));
    StepMemory mem;
    mem.stage = i;
    const double unit = st.largest_unit_parameters;
    // A transformer layer's FP8 weights have FP8 copies; the embedding and the head have none.
    const double unit_fp8 = !plan.fp8                                                     ? 0
                            : unit == static_cast<double>(g.transformer.parameters)       ? costs.fp8_parameters
                            : unit == static_cast<double>(g.dense_transformer.parameters) ? costs.dense_fp8_parameters
                                                                                          : 0;
    if (plan.zero == 3)  // a shard, and two units gathered whole (the one at work and the prefetched one)
      mem.weights_bytes = gathered_bytes(plan, sharded(st), st.fp8_parameters) / shards +
                          2 * held_weight_bytes(plan, device, unit, unit_fp8);
    else
      mem.weights_bytes = held_weight_bytes(plan, device, st.parameters, st.fp8_parameters);
    mem.gradients_bytes = plan.zero >= 2 ? sharded(st) * bytes.gradients / shards + unit * bytes.gradients
                                         : st.parameters * bytes.gradients;
    mem.optimizer_bytes =
        plan.distributed_optimizer() ? sharded(st) * bytes.optimizer / shards : st.parameters * bytes.optimizer;
    mem.activations_bytes = activations;
    // The caching allocator holds more than its tensors occupy: measured on all of them at a step's peak.
    mem.allocator_bytes =
        (mem.weights_bytes + mem.gradients_bytes + mem.optimizer_bytes + activations) * device.allocator_overhead;
    mem.runtime_bytes = runtime;
    mem.peak_bytes =
        mem.weights_bytes + mem.gradients_bytes + mem.optimizer_bytes + activations + mem.allocator_bytes + runtime;
    if (i == 0 || mem.peak_bytes > out.memory.peak_bytes) out.memory = mem;
  }
  out.memory.capacity_bytes = device.memory_bytes;
  out.memory.reserve_bytes = plan.memory_reserve_bytes;
  out.memory.fits = out.memory.peak_bytes + static_cast<double>(plan.memory_reserve_bytes) <=
                    static_cast<double>(device.memory_bytes);

  // FLOPs: per micro-batch, each rank's GEMM FLOPs times t · c is the whole model's; B/b micro-batches.
  const double t = static_cast<double>(plan.tp * plan.cp);
  const double sequences = static_cast<double>(plan.global_batch) / static_cast<double>(plan.micro_batch);
  const IterationFlops flops = iteration_flops(costs, spec, plan);
  out.model_flop = sequences * t * flops.model;
  out.model_full_attention_flop = sequences * t * flops.model_full_attention;
  out.hardware_flop = sequences * t * flops.hardware;
  const double gpus = static_cast<double>(plan.gpus());
  out.tokens_per_s = static_cast<double>(plan.global_batch * plan.seq) / time.iteration_s;
  out.flop_per_s_per_gpu = out.hardware_flop / (time.iteration_s * gpus);
  out.mfu = out.model_flop / (time.iteration_s * gpus * device.peak_flop_per_s);
  out.mfu_ceiling = plan.fp8 ? device.fp8_mfu_ceiling : device.mfu_ceiling;
  return out;
}

}  // namespace phaze::megatron
