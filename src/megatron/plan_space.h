#pragma once

// Every Megatron-LM configuration of a model on a number of devices (docs/gpu.md, "Planning"): the one
// enumeration behind `phaze plan` on GPUs and the co-search's Megatron-LM execution on its accelerators.

#include <cstdint>
#include <functional>
#include <vector>

#include "megatron/training_plan.h"
#include "model/model_spec.h"

namespace phaze::megatron {

struct PlanSpace {
  int64_t devices = 1;                 ///< t · c · p · d, exactly
  int64_t global_batch = 1;            ///< sequences per iteration
  int64_t seq = 0;                     ///< tokens per sequence
  std::vector<int64_t> widths;         ///< t tried; empty: every divisor of the devices
  std::vector<int64_t> micro_batches;  ///< b tried; empty: every b up to model::limits::kMicroBatch
  std::vector<int64_t> pipelines;      ///< p tried; empty: every p that splits the layers
  std::vector<int64_t> replicas;       ///< d tried; empty: every d the others leave
  std::vector<int64_t> chunks;         ///< v tried; empty: every v that splits the stages
  std::vector<megatron::Recompute> recomputes{megatron::Recompute::None, megatron::Recompute::Selective,
                                              megatron::Recompute::Full};
  /// ZeRO stages tried (ascending; a stage > 0 only where d · c > 1).
  std::vector<int64_t> zero_stages{0, 1};
  /// Context-parallel widths c tried (ascending; c > 1 only with fused attention and 2c (· t with sequence
  /// parallelism) dividing s).
  std::vector<int64_t> context_widths{1};
  /// Expert-parallel widths tried for a mixture of experts (each dividing its experts, with ep × etp dividing
  /// t · c · d); empty: every such width. A dense model is tried at 1.
  std::vector<int64_t> expert_widths;
  /// Expert tensor-parallel widths tried for a mixture of experts (each dividing the expert FFN, with ep ×
  /// etp dividing t · c · d); empty: every such width; {0}: t only. A dense model is tried at t.
  std::vector<int64_t> expert_tensor_widths;
  /// Each configuration with FP8 off and on (else features.fp8 as it is).
  bool try_fp8 = false;
  /// Besides even stages, pipelines whose split counts the embedding and the loss as layers
  /// (--account-for-embedding-in-pipeline-split and --account-for-loss-in-pipeline-split): p dividing L + 2.
  bool try_split_accounting = false;
  /// What every configuration shares (overlap, attention kernel, precision, memory reserve); its
  /// tp_comm_overlap applies to the configurations with sequence parallelism, its overlap_param_gather to
  /// those with the distributed optimizer. Its degrees, batch and recomputation are the enumeration's.
  megatron::TrainingPlan features;
};

/// Whether a list of PlanSpace's (t, p, d, b, v, ep, etp tried) allows `x`: an empty list allows every value.
bool allowed(const std::vector<int64_t>& list, int64_t x);

/// Calls `visit` with every configuration of `space` that Megatron-LM accepts for the model
/// (megatron::validate): every t (dividing the devices, the heads and the key/value heads), c of the
/// space's widths dividing the rest, p dividing the rest and the layers, d the remainder; for a mixture of
/// experts every ep of the space dividing its experts and every etp dividing its expert FFN, ep · etp dividing
/// t · c · d; every b with b · d
/// dividing the global batch; sequence parallelism off (not for a mixture of experts at t > 1) and (t > 1, t
/// dividing s) on; even stages and, when
/// the space tries them, stages that count the embedding and the loss (p > 1 dividing L + 2, every stage
/// keeping a layer); v = 1 and every v > 1 with p · v dividing the layers (and slots) and p dividing the
/// micro-batch count; each recomputation; each ZeRO stage of the space (> 0 with d · c > 1); FP8 off and on
/// when the space tries it. The order is fixed (t, c, p, ep, etp, b, sequence parallelism, split, v, recomputation,
/// ZeRO, FP8, each ascending), so a search that keeps the first of equal times is deterministic.
void for_each_megatron_plan(const model::ModelSpec& spec, const PlanSpace& space,
                            const std::function<void(const megatron::TrainingPlan&)>& visit);

}  // namespace phaze::megatron
