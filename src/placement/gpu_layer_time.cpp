#include "placement/gpu_layer_time.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "cost/collective_time.h"
#include "cost/gpu_kernel.h"

namespace phaze::placement {

namespace {

using model::Engine;
using model::Operator;

/// The number in a transformer operator's id ("F12" → 12, "B5a" → 5, "B18acc" → 18), or -1.
int operator_number(const std::string& id) {
  size_t i = 0;
  while (i < id.size() && !std::isdigit(static_cast<unsigned char>(id[i]))) ++i;
  if (i == id.size()) return -1;
  int n = 0;
  while (i < id.size() && std::isdigit(static_cast<unsigned char>(id[i]))) n = n * 10 + (id[i++] - '0');
  return n;
}

/// The attention core of a transformer layer (models.md: F5 scores, F6 softmax, F7 dropout, F8 context).
bool attention_core(int number) {
  return number >= 5 && number <= 8;
}

/// Operators every tensor-parallel rank repeats on the whole sequence unless sequence parallelism splits
/// them: the norms (F1, F13, F19) and the bias-dropout-residual adds (F12, F18).
bool outside_tp_region(int number) {
  return number == 1 || number == 12 || number == 13 || number == 18 || number == 19;
}

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
      const int number = transformer ? operator_number(op.id) : -1;
      if (flash && attention_core(number)) continue;
      const double s = kernel_s(op, plan.sequence_parallel && outside_tp_region(number));
      t.compute_s += s;
      if (attention_core(number)) t.attention_core_s += s;
    }
    if (flash) {
      const double s = cost::gpu_flash_attention_s(gpu, plan.micro_batch * (spec.heads / plan.tp), plan.seq,
                                                   spec.head_dim(), element_bytes, graph.direction);
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

}  // namespace phaze::placement
