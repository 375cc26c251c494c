#include "megatron/layer_time.h"

#include <algorithm>

#include "cost/collective_time.h"
#include "cost/gpu_kernel.h"
#include "model/operator_roles.h"

namespace phaze::megatron {

namespace {

using model::Engine;
using model::Operator;

struct Pricing {
  const model::ModelSpec& spec;
  const TrainingPlan& plan;
  const hw::Gpu& gpu;
  const hw::Network& network;
  int64_t element_bytes = 2;

  double kernel_s(const Operator& op, bool split_by_sequence) const {
    switch (op.engine) {
      case Engine::Tensor: return cost::gpu_gemm_s(gpu, *op.gemm, element_bytes);
      case Engine::Fused: {
        const double out = static_cast<double>(op.gemm->m) * op.gemm->n * op.gemm->batch * element_bytes;
        return cost::gpu_gemm_s(gpu, *op.gemm, element_bytes) + cost::gpu_stream_s(gpu, 2 * out);
      }
      case Engine::Vector: {
        double bytes = static_cast<double>(op.read_bytes + op.write_bytes);
        if (split_by_sequence) bytes /= static_cast<double>(plan.tp);
        return cost::gpu_stream_s(gpu, bytes);
      }
      case Engine::Comm:
      case Engine::None: return 0;
    }
    return 0;
  }

  PassTime pass(const model::OperatorGraph& graph, bool transformer) const {
    PassTime t;
    const bool flash = transformer && plan.flash_attention;
    for (const Operator& op : graph.ops) {
      if (op.engine == Engine::Comm) {
        // A collective is one more operation the host dispatches: it takes at least the launch time.
        t.tp_comm_s +=
            std::max(gpu.kernel_launch_s, cost::all_reduce_s(network, cost::DeviceGroup{op.collective->ranks, 1},
                                                             static_cast<double>(op.collective->bytes)));
        continue;
      }
      const bool core = transformer && model::in_attention_core(op.id);
      if (flash && core) continue;
      const double s =
          kernel_s(op, plan.sequence_parallel && transformer && model::outside_tensor_parallel_region(op.id));
      t.compute_s += s;
      if (core) t.attention_core_s += s;
    }
    if (flash) {
      const double s = cost::gpu_flash_attention_s(gpu, plan.micro_batch * (spec.heads / plan.tp), plan.seq,
                                                   spec.head_dim(), element_bytes, graph.direction, spec.causal());
      t.compute_s += s;
      t.attention_core_s += s;
    }
    return t;
  }
};

}  // namespace

LayerTime gpu_layer_time(const model::Layer& layer, const model::ModelSpec& spec, const TrainingPlan& plan,
                         const hw::Gpu& gpu, const hw::Network& network) {
  const Pricing pricing{spec, plan, gpu, network};
  const bool transformer = layer.kind == model::LayerKind::Transformer;
  return LayerTime{pricing.pass(layer.forward, transformer), pricing.pass(layer.backward, transformer)};
}

}  // namespace phaze::megatron
