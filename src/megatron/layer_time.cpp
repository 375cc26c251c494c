#include "megatron/layer_time.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <set>
#include <vector>

#include "cost/collective_time.h"
#include "cost/gpu_kernel.h"
#include "megatron/expert_routing.h"
#include "model/operator_roles.h"

namespace phaze::megatron {

namespace {

using model::Engine;
using model::Operator;

/// Transformer Engine's userbuffers overlap (`--tp-comm-overlap`, docs/gpu.md "A layer on a GPU"). With
/// sequence parallelism a tensor-parallel all-reduce is a reduce-scatter after the GEMM that produces its
/// input and an all-gather before the GEMM that consumes its output, each half the all-reduce's time. The
/// reduce-scatter is pipelined with the GEMM before it in 4 chunks (the last chunk's is exposed) on 16 SMs
/// taken from that GEMM; the all-gather is a ring exchange on the copy engines, each of its t steps feeding
/// one chunk of the GEMM after it (one step is exposed). Each hides behind its own GEMM only.
constexpr double kPipelineChunks = 4;
constexpr double kReduceScatterSms = 16;

/// Megatron-LM's unfused vocab-parallel cross-entropy (tensor_parallel.vocab_parallel_cross_entropy, its
/// default without --cross-entropy-loss-fusion), bytes per logit of each kernel. Forward: the 16-bit logits
/// cast to FP32 (2 read, 4 written), the row maximum (4), the maximum subtracted in place (4 + 4), exp in
/// place (4 + 4), the row sum (4), the division by it in place (4 + 4), which leaves the FP32 softmax for
/// the backward pass. Backward: the softmax scaled by the loss gradient in place (4 + 4) and cast to the
/// logits' 16 bits (4 + 2).
constexpr std::array<double, 6> kUnfusedLossForwardBytes{6, 4, 8, 8, 4, 8};
constexpr std::array<double, 2> kUnfusedLossBackwardBytes{8, 6};

/// The logits a vector operator's cross-entropy or row-maximum pass works on (0 for other operators).
struct LossPasses {
  double cross_entropy_logits = 0;
  double row_max_logits = 0;
};
LossPasses loss_passes(const Operator& op) {
  LossPasses out;
  for (const model::VectorPass& pass : op.passes) {
    if (pass.kind == model::VectorKind::CrossEntropy) out.cross_entropy_logits += static_cast<double>(pass.elements);
    if (pass.kind == model::VectorKind::Max) out.row_max_logits += static_cast<double>(pass.elements);
  }
  return out;
}

struct Overlap {
  double exposed_s = 0;        ///< of the collective, on the critical path
  double gemm_slowdown_s = 0;  ///< added to the GEMMs by the SMs the hidden reduce-scatter takes
};

struct Pricing {
  const model::ModelSpec& spec;
  const TrainingPlan& plan;
  const hw::Gpu& gpu;
  const hw::Network& network;
  int64_t element_bytes = 2;

  Overlap tp_overlap(double collective_s, double gemm_before_s, double gemm_after_s) const {
    const double half = collective_s / 2;
    const double reduce_scatter = cost::exposed_s(half, gemm_before_s, half / kPipelineChunks);
    const double all_gather = cost::exposed_s(half, gemm_after_s, half / static_cast<double>(plan.tp));
    // While the reduce-scatter is hidden, the GEMM before it does without the SMs it runs on.
    return {reduce_scatter + all_gather, (half - reduce_scatter) * kReduceScatterSms / static_cast<double>(gpu.sms)};
  }

  /// Whether the operator is one of the layer's FP8 GEMMs under the plan.
  bool fp8_gemm(const Operator& op, bool transformer) const {
    return plan.fp8 && transformer && model::is_fp8_gemm(op);
  }

  double gemm_s(const Operator& op, bool fp8) const {
    return fp8 ? cost::gpu_fp8_gemm_s(gpu, *op.gemm) : cost::gpu_gemm_s(gpu, *op.gemm, element_bytes);
  }

  /// One cast of a 16-bit tensor of `elements` elements to FP8, with its transposed FP8 copy where the GPU's
  /// FP8 GEMMs read only one layout (Hopper; the weight gradient needs the other): one read of the 16-bit
  /// tensor (two with current scaling, which first finds its amax) and one 1-byte write per copy.
  double fp8_cast_s(double elements) const {
    const double reads = plan.fp8_recipe == Fp8Recipe::Tensorwise ? 2 : 1;
    return cost::gpu_stream_s(gpu, elements * (2 * reads + (gpu.fp8_needs_transpose ? 2 : 1)));
  }

  /// The FP8 casts of a pass: forward, the input of each FP8 GEMM (once when several GEMMs share it);
  /// backward, the output gradient of each FP8 data-gradient GEMM. The weights are cast once per iteration
  /// (training_step.h).
  double fp8_casts_s(const model::OperatorGraph& graph, bool transformer) const {
    double s = 0;
    std::set<int> cast_inputs;
    for (const Operator& op : graph.ops) {
      if (!fp8_gemm(op, transformer) || op.weight_gradient) continue;
      // Forward: input M × K. Data gradient (M × K × N of the forward GEMM's M × N × K): dY is M × K.
      if (graph.direction == model::Direction::Forward && !cast_inputs.insert(model::operator_number(op.id)).second)
        continue;
      s += fp8_cast_s(static_cast<double>(op.gemm->m) * static_cast<double>(op.gemm->k) *
                      static_cast<double>(op.gemm->batch));
    }
    return s;
  }

  /// Megatron-LM's unfused loss over `logits` logits of one rank, one pass.
  double unfused_loss_s(double logits, model::Direction direction) const {
    double s = 0;
    if (direction == model::Direction::Forward)
      for (double bytes : kUnfusedLossForwardBytes) s += cost::gpu_stream_s(gpu, bytes * logits);
    else
      for (double bytes : kUnfusedLossBackwardBytes) s += cost::gpu_stream_s(gpu, bytes * logits);
    return s;
  }

  double kernel_s(const Operator& op, bool split_by_sequence, bool fp8) const {
    switch (op.engine) {
      case Engine::Tensor: return gemm_s(op, fp8);
      case Engine::Fused: {
        const double out = static_cast<double>(op.gemm->m) * op.gemm->n * op.gemm->batch * element_bytes;
        return gemm_s(op, fp8) + cost::gpu_stream_s(gpu, 2 * out);
      }
      case Engine::Vector: {
        if (plan.unfused_loss) {
          const LossPasses loss = loss_passes(op);
          // The row maximum is one of the unfused loss's kernels, priced with the others below.
          if (loss.row_max_logits > 0) return 0;
          if (loss.cross_entropy_logits > 0) return unfused_loss_s(loss.cross_entropy_logits, op.passes[0].direction);
        }
        double bytes = static_cast<double>(op.read_bytes + op.write_bytes);
        if (split_by_sequence) bytes /= static_cast<double>(plan.tp);
        return cost::gpu_stream_s(gpu, bytes);
      }
      case Engine::Comm:
      case Engine::None: return 0;
    }
    return 0;
  }

  /// Seconds of each operator's kernel (0 for collectives and for the attention core a fused kernel replaces).
  std::vector<double> kernel_times(const model::OperatorGraph& graph, bool transformer, bool flash) const {
    std::vector<double> out;
    out.reserve(graph.ops.size());
    for (const Operator& op : graph.ops) {
      const bool skipped = op.engine == Engine::Comm || (flash && transformer && model::in_attention_core(op.id));
      out.push_back(
          skipped ? 0
                  : kernel_s(op, plan.sequence_parallel && transformer && model::outside_tensor_parallel_region(op.id),
                             fp8_gemm(op, transformer)));
    }
    return out;
  }

  /// The GEMM next to operator `i` in `step` direction (±1), or 0 s when a collective comes first. A pass
  /// repeats layer after layer, so the search wraps around: the last collective of a forward pass feeds the
  /// next layer's first GEMM.
  static double neighbouring_gemm_s(const model::OperatorGraph& graph, const std::vector<double>& times, size_t i,
                                    int step) {
    const auto n = static_cast<std::ptrdiff_t>(times.size());
    for (std::ptrdiff_t hop = 1; hop < n; ++hop) {
      const auto j = static_cast<size_t>(((static_cast<std::ptrdiff_t>(i) + step * hop) % n + n) % n);
      const Operator& op = graph.ops[j];
      if (op.engine == Engine::Comm) return 0;
      if (op.engine == Engine::Tensor || op.engine == Engine::Fused) return times[j];
    }
    return 0;
  }

  /// One expert-parallel all-to-all (its ranks etp apart), by the plan's dispatcher.
  double expert_all_to_all_s(const model::Collective& exchange) const {
    const cost::DeviceGroup group{exchange.ranks, exchange.stride};
    const auto bytes = static_cast<double>(exchange.bytes);
    if (plan.moe_dispatcher == MoeDispatcher::AllToAll) return cost::all_to_all_s(network, group, bytes);
    const double remote = expected_remote_nodes(spec, cost::nodes_spanned(network, group));
    return cost::deduplicated_all_to_all_s(network, group, bytes, static_cast<double>(spec.experts_per_token), remote);
  }

  /// `experts`: the layer has routed experts (a mixture of experts' dense first layers have none).
  PassTime pass(const model::OperatorGraph& graph, bool transformer, bool experts) const {
    PassTime t;
    double shared_expert_s = 0;
    const bool flash = transformer && plan.flash_attention;
    const std::vector<double> times = kernel_times(graph, transformer, flash);
    for (size_t i = 0; i < graph.ops.size(); ++i) {
      const Operator& op = graph.ops[i];
      if (op.engine == Engine::Comm) {
        const double bytes = static_cast<double>(op.collective->bytes);
        if (op.collective->kind == model::Collective::Kind::AllToAll) {
          // Expert parallelism: the groups of an all-to-all are etp apart; nothing hides it.
          t.ep_comm_s += std::max(gpu.kernel_launch_s, expert_all_to_all_s(*op.collective));
          continue;
        }
        const double c = cost::all_reduce_s(network, cost::DeviceGroup{op.collective->ranks, 1}, bytes);
        // Transformer Engine's userbuffers overlap its own layers' collectives, not a token dispatcher's.
        const bool dispatcher = experts && (model::operator_number(op.id) == 14 || model::operator_number(op.id) == 17);
        if (!plan.tp_comm_overlap || dispatcher) {
          // A collective is one more operation the host dispatches: it takes at least the launch time.
          t.tp_comm_s += std::max(gpu.kernel_launch_s, c);
          continue;
        }
        const Overlap o =
            tp_overlap(c, neighbouring_gemm_s(graph, times, i, -1), neighbouring_gemm_s(graph, times, i, +1));
        t.tp_comm_s += o.exposed_s;
        t.compute_s += o.gemm_slowdown_s;
        continue;
      }
      t.compute_s += times[i];
      if (transformer && model::in_attention_core(op.id)) t.attention_core_s += times[i];
      if (experts && model::in_shared_expert(op.id)) shared_expert_s += times[i];
    }
    // --moe-shared-expert-overlap: the shared expert's kernels run while the all-to-alls are in flight.
    if (plan.shared_expert_overlap && experts) t.ep_comm_s -= std::min(t.ep_comm_s, shared_expert_s);
    if (flash) {
      const int64_t batch_heads = plan.micro_batch * (spec.heads / plan.tp);
      if (plan.cp > 1) {
        // One rank's keys and values: b · (s/c) tokens × (key/value heads / t) · (d_qk + d_v), 16-bit.
        const double kv_bytes = static_cast<double>(plan.micro_batch) * static_cast<double>(plan.local_seq()) *
                                static_cast<double>(model::kv_heads_per_rank(spec, plan.tp)) *
                                static_cast<double>(spec.qk_head_dim() + spec.v_head_dim()) *
                                static_cast<double>(element_bytes);
        const ContextAttention a = context_parallel_attention_s(
            gpu, network, plan, batch_heads, spec.attention_head_dim(), kv_bytes, graph.direction, spec.causal());
        t.compute_s += a.compute_s;
        t.attention_core_s += a.compute_s;
        t.cp_comm_s += a.exposed_comm_s;
      } else {
        const double s =
            cost::gpu_flash_attention_s(gpu, batch_heads, plan.seq, spec.attention_head_dim(), element_bytes,
                                        graph.direction, spec.causal(), spec.sliding_window);
        t.compute_s += s;
        t.attention_core_s += s;
      }
    }
    if (plan.fp8 && transformer) t.compute_s += fp8_casts_s(graph, transformer);
    return t;
  }
};

}  // namespace

ContextAttention context_parallel_attention_s(const hw::Gpu& gpu, const hw::Network& network, const TrainingPlan& plan,
                                              int64_t batch_heads, int64_t head_dim, double kv_bytes,
                                              model::Direction direction, bool causal) {
  constexpr int64_t kBytes = 2;
  const int64_t local = plan.local_seq();
  const double c = static_cast<double>(plan.cp);
  const bool forward = direction == model::Direction::Forward;
  // Causal: step 0 over the rank's own tokens, each later step half of an unmasked (s/c)² block.
  // Bidirectional: every step an unmasked (s/c)² block.
  const double block_s = cost::gpu_flash_attention_s(gpu, batch_heads, local, head_dim, kBytes, direction, false);
  const double diagonal_s =
      causal ? cost::gpu_flash_attention_s(gpu, batch_heads, local, head_dim, kBytes, direction, true) : block_s;
  const double half_block_s = causal ? std::max(gpu.kernel_launch_s, block_s / 2) : block_s;
  ContextAttention out;
  out.compute_s = diagonal_s + (c - 1) * half_block_s;
  const cost::DeviceGroup group{plan.cp, plan.tp};
  if (plan.cp_comm == CpComm::AllGather) {
    // Forward: gather every rank's keys and values; backward: gather them again and reduce-scatter their
    // gradients.
    const double gather_s = cost::reduce_scatter_s(network, group, c * kv_bytes);
    out.exposed_comm_s = forward ? gather_s : 2 * gather_s;
    return out;
  }
  // The backward pass sends the keys and values with their gradients: twice the bytes per step.
  const double step_s = cost::transfer_s(cost::group_link(network, group), forward ? kv_bytes : 2 * kv_bytes);
  // Step i's transfer overlaps step i − 1's block: the first behind the diagonal, the others behind a half
  // block.
  out.exposed_comm_s = cost::exposed_s(step_s, diagonal_s, 0) + (c - 2) * cost::exposed_s(step_s, half_block_s, 0);
  return out;
}

LayerTime gpu_layer_time(const model::Layer& layer, const model::ModelSpec& spec, const TrainingPlan& plan,
                         const hw::Gpu& gpu, const hw::Network& network) {
  const Pricing pricing{spec, plan, gpu, network};
  const bool transformer = layer.kind == model::LayerKind::Transformer;
  const bool experts = transformer && layer.routed_expert_parameters > 0;
  return LayerTime{pricing.pass(layer.forward, transformer, experts),
                   pricing.pass(layer.backward, transformer, experts)};
}

}  // namespace phaze::megatron
