#pragma once

// A Megatron-LM training configuration on a GPU cluster (docs/gpu.md, "Execution"): the parallel degrees,
// the micro-batch and the features that change time and memory.

#include <cstdint>
#include <string>

#include "model/model_spec.h"

namespace phaze::megatron {

enum class Recompute {
  None,       ///< every activation is kept for the backward pass
  Selective,  ///< the attention core (scores, softmax, dropout, P·V) is recomputed
  Full,       ///< each layer keeps its input and re-runs its forward pass before its backward pass
};

struct TrainingPlan {
  int64_t tp = 1;            ///< tensor-parallel width t (a group of consecutive GPUs)
  int64_t pp = 1;            ///< pipeline stages p
  int64_t dp = 1;            ///< data-parallel replicas d
  int64_t vp = 1;            ///< model chunks per GPU v (interleaved 1F1B when > 1)
  int64_t micro_batch = 1;   ///< sequences per micro-batch b
  int64_t global_batch = 1;  ///< sequences per iteration B
  int64_t seq = 0;           ///< tokens per sequence s
  bool sequence_parallel = false;
  Recompute recompute = Recompute::Full;
  bool distributed_optimizer = false;  ///< optimizer state and master weights sharded over the d replicas
  bool overlap_dp = false;             ///< --overlap-grad-reduce: gradient reduction during the backward pass
  /// --overlap-param-gather: the distributed optimizer's parameter all-gather during the next forward pass.
  bool overlap_param_gather = false;
  /// --tp-comm-overlap: tensor-parallel collectives pipelined with the GEMMs they feed (needs sequence
  /// parallelism).
  bool tp_comm_overlap = false;
  bool flash_attention = false;  ///< the attention core as one fused kernel
  /// BF16 training as Megatron-LM's --bf16 runs it: gradients accumulated and reduced in FP32 (2 + 4 + 12
  /// bytes per parameter). Otherwise FP16 (--fp16): 16-bit gradients and an FP32 copy in the optimizer
  /// (2 + 2 + 16).
  bool bf16 = false;
  /// Bytes of HBM a plan must leave free beyond its modelled peak (--memory-reserve-gib).
  int64_t memory_reserve_bytes = 0;
  /// Transformer layers of the first and of the last pipeline stage (Megatron-LM's
  /// --decoder-first-pipeline-num-layers and --decoder-last-pipeline-num-layers); 0: an even share. The
  /// other stages share the rest evenly.
  int64_t first_stage_layers = 0;
  int64_t last_stage_layers = 0;

  int64_t gpus() const { return tp * pp * dp; }
  /// Whether the first or the last stage has a layer count of its own.
  bool uneven() const { return first_stage_layers > 0 || last_stage_layers > 0; }
  /// Micro-batches per pipeline per iteration: B / (b · d).
  int64_t micro_batches() const { return global_batch / (micro_batch * dp); }
  bool operator==(const TrainingPlan&) const = default;
};

/// HBM a plan keeps free by default beyond its modelled peak (docs/gpu.md, "Memory").
inline constexpr int64_t kDefaultMemoryReserveBytes = int64_t{1} << 30;

/// A plan with what current training runs do unless told otherwise: fused attention, BF16 with FP32
/// gradients, kDefaultMemoryReserveBytes kept free. `predict`, `plan` and published runs start here;
/// measured-run files keep their runs' own settings (FP16, materialised attention, no reserve).
TrainingPlan current_practice();

/// Largest accepted degrees and batches (docs/limits.md).
namespace plan_limits {
inline constexpr int64_t kGpus = int64_t{1} << 20;         ///< GPUs of one run
inline constexpr int64_t kGlobalBatch = int64_t{1} << 24;  ///< sequences per iteration
inline constexpr int64_t kChunks = 64;                     ///< model chunks per GPU
}  // namespace plan_limits

/// Checks that Megatron-LM can run the plan on the model (InputError naming the option: --tp, --pp, --dp,
/// --vp, --mbs, --global-batch, --seq, --decoder-first-pipeline-num-layers,
/// --decoder-last-pipeline-num-layers): every degree ≥ 1 and within plan_limits; t divides the heads (and
/// the key/value heads); every stage's layers (stage_layers) a whole number, at least one, divisible by v;
/// a first or last stage of its own needs p > 1; b · d divides B; with v > 1, p > 1 and the micro-batch
/// count a multiple of p; sequence parallelism needs t > 1 and t dividing s.
void validate(const TrainingPlan& plan, const model::ModelSpec& spec);

/// Transformer layers of pipeline stage `stage` (0 ≤ stage < p): the first and last stage's own counts when
/// given, the rest shared evenly by the other stages. Assumes a validated plan.
int64_t stage_layers(const TrainingPlan& plan, const model::ModelSpec& spec, int64_t stage);

const char* to_string(Recompute recompute);
/// "full", "selective" or "none"; InputError naming `option` otherwise.
Recompute parse_recompute(const std::string& text, const std::string& option);

}  // namespace phaze::megatron
