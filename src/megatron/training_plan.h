#pragma once

// A Megatron-LM training configuration on a GPU cluster (docs/gpu.md, "Execution"): the parallel degrees,
// the micro-batch and the features that change time and memory.

#include <cstdint>
#include <string>
#include <vector>

#include "hw/gpu.h"
#include "megatron/pipeline_layout.h"
#include "model/model_spec.h"

namespace phaze::megatron {

enum class Recompute {
  None,       ///< every activation is kept for the backward pass
  Selective,  ///< the attention core (scores, softmax, dropout, P·V) is recomputed
  Full,       ///< each layer keeps its input and re-runs its forward pass before its backward pass
};

/// How Transformer Engine scales an FP8 tensor (Megatron-LM's --fp8-recipe).
enum class Fp8Recipe {
  Delayed,     ///< per-tensor scale from an amax history: one read of the 16-bit tensor per cast
  Tensorwise,  ///< per-tensor current scaling: the tensor's own amax first, so two reads per cast
};

/// How context parallelism exchanges keys and values (Megatron-LM's --cp-comm-type).
enum class CpComm {
  P2p,        ///< a ring of cp − 1 point-to-point steps, each overlapped with one block of attention
  AllGather,  ///< keys and values all-gathered before attention (and their gradients reduce-scattered after)
};

/// How a mixture of experts' tokens reach their experts (Megatron-Core's --moe-token-dispatcher-type).
enum class MoeDispatcher {
  AllToAll,  ///< alltoall: every copy of a token sent to its expert's rank by one all-to-all
  Flex,      ///< flex with DeepEP: the copies bound for one node cross the scale-out network once and fan out
             ///< over NVLink there (docs/gpu.md, "Expert parallelism")
};

struct TrainingPlan {
  int64_t tp = 1;  ///< tensor-parallel width t (a group of consecutive GPUs)
  int64_t cp = 1;  ///< context-parallel width c: each sequence split over c groups of t GPUs
  /// Expert-parallel width (--expert-model-parallel-size): a mixture of experts' routed experts split over ep
  /// tensor-parallel groups (of etp) of the t · c · d GPUs that hold a stage, etp apart, the tokens exchanged by
  /// all-to-all; the experts' optimizer state and gradients shard over the GPUs that hold the same experts.
  int64_t ep = 1;
  /// Expert tensor-parallel width (--expert-tensor-parallel-size; 0: t): each expert's columns split over etp
  /// GPUs, the experts' layout folded onto the stage's t · c · d GPUs as etp × ep × (the rest).
  int64_t etp = 0;
  int64_t pp = 1;            ///< pipeline stages p
  int64_t dp = 1;            ///< data-parallel replicas d
  int64_t vp = 1;            ///< model chunks per GPU v (interleaved 1F1B when > 1)
  int64_t micro_batch = 1;   ///< sequences per micro-batch b
  int64_t global_batch = 1;  ///< sequences per iteration B
  int64_t seq = 0;           ///< tokens per sequence s
  bool sequence_parallel = false;
  Recompute recompute = Recompute::Full;
  /// ZeRO stage over the d replicas: 0 none; 1 optimizer state and master weights sharded (Megatron-LM's
  /// distributed optimizer); 2 gradients sharded too; 3 parameters sharded too, gathered layer by layer
  /// (PyTorch FSDP's FULL_SHARD, Megatron-FSDP's optim_grads_params).
  int64_t zero = 0;
  /// GPUs of one ZeRO sharding group among the d · c that hold the same layers (PyTorch FSDP's HYBRID_SHARD,
  /// Megatron-Bridge's FSDP column); 0: all of them. The groups are replicas of each other.
  int64_t zero_group = 0;
  bool overlap_dp = false;  ///< --overlap-grad-reduce: gradient reduction during the backward pass
  /// --overlap-param-gather: the distributed optimizer's parameter all-gather during the next forward pass.
  bool overlap_param_gather = false;
  /// --tp-comm-overlap: tensor-parallel collectives pipelined with the GEMMs they feed (needs sequence
  /// parallelism).
  bool tp_comm_overlap = false;
  bool flash_attention = false;  ///< the attention core as one fused kernel
  /// Sharded as GSPMD shards a model axis on an accelerator system (docs/tpu.md), where Megatron-LM is stricter:
  /// key/value heads fewer than t are replicated over the tensor-parallel group (model::Shape::replicate_kv_heads),
  /// and sequence parallelism's activations may be split over t along the hidden size when the sequence does not
  /// divide.
  bool gspmd_sharding = false;
  /// The library of that kernel: the GPU's own fused attention (cuDNN on Hopper) or FlashAttention-2.
  hw::AttentionLibrary attention_library = hw::AttentionLibrary::Fused;
  /// BF16 training as Megatron-LM's --bf16 runs it: gradients accumulated and reduced in FP32 (2 + 4 + 12
  /// bytes per parameter). Otherwise FP16 (--fp16): 16-bit gradients and an FP32 copy in the optimizer
  /// (2 + 2 + 16).
  bool bf16 = false;
  /// With BF16: gradients accumulated and reduced in BF16 (2 + 2 + 12 bytes per parameter), as NeMo's and
  /// Megatron-Bridge's recipes run by default (their grad_reduce_in_fp32 = False).
  bool bf16_gradients = false;
  /// FP8 GEMMs as Transformer Engine runs them (--fp8-format hybrid): the projections and the MLP in FP8
  /// (E4M3 forward, E5M2 gradients), the attention core, norms, embedding and LM head in 16 bits.
  bool fp8 = false;
  Fp8Recipe fp8_recipe = Fp8Recipe::Delayed;
  /// --fp8-param-gather: the FP8 GEMMs' parameters are kept in FP8 (no 16-bit copy) and gathered in FP8.
  bool fp8_param_gather = false;
  CpComm cp_comm = CpComm::P2p;
  MoeDispatcher moe_dispatcher = MoeDispatcher::AllToAll;
  /// --overlap-moe-expert-parallel-comm: in 1F1B's steady state each forward pass runs merged with an
  /// earlier micro-batch's backward pass, layer by layer, so that one's expert all-to-alls run under the
  /// other's computation (needs expert parallelism and no full recomputation).
  bool overlap_moe_comm = false;
  /// --moe-shared-expert-overlap: the shared expert runs while the token dispatcher's all-to-alls are in
  /// flight (needs a shared expert).
  bool shared_expert_overlap = false;
  /// --moe-expert-capacity-factor c: each expert takes at most ⌈T·k/E · c⌉ of the T·k token copies a rank
  /// routes, the rest dropped; 0: dropless (Megatron-Core's default, also its reading of a negative c).
  /// Positive; at most E/k with padding.
  double moe_capacity_factor = 0;
  /// --moe-pad-expert-input-to-capacity: every expert computes its whole capacity (needs a capacity factor).
  bool moe_pad_to_capacity = false;
  /// --moe-load-imbalance: the token copies of the busiest expert-parallel rank over the mean, a property of
  /// the router; 1: balanced, as --moe-router-force-load-balancing makes it. In [1, E/k]; taken as at most ep
  /// (all the copies its experts can take), so no effect at ep 1.
  double moe_load_imbalance = 1;
  /// Multi-token prediction modules (--mtp-num-layers; DeepSeek-V3 trains with 1): each on the last stage, a
  /// projection of the next tokens' embeddings and the hidden states (model::build_mtp_projection_layer), a
  /// transformer layer as the model's (its expert one where it has experts) and the LM head and loss again.
  int64_t mtp_layers = 0;
  /// Megatron-LM's loss without --cross-entropy-loss-fusion (its default): the logits cast to FP32 and each
  /// step of the softmax its own kernel, the FP32 softmax kept for the backward pass (docs/gpu.md, "The
  /// loss"). Otherwise the layer graph's cross-entropy: fused kernels on the 16-bit logits, one pass each
  /// way, as NeMo's and Megatron-Bridge's recipes run it.
  bool unfused_loss = false;
  /// Bytes of HBM a plan must leave free beyond its modelled peak (--memory-reserve-gib).
  int64_t memory_reserve_bytes = 0;
  /// Transformer layers of the first and of the last pipeline stage (Megatron-LM's
  /// --decoder-first-pipeline-num-layers and --decoder-last-pipeline-num-layers); 0: an even share. The
  /// other stages share the rest evenly.
  int64_t first_stage_layers = 0;
  int64_t last_stage_layers = 0;
  /// Megatron-LM's --account-for-embedding-in-pipeline-split and --account-for-loss-in-pipeline-split: the
  /// embedding (the loss) takes the place of one transformer layer in the split, so L + 1 (+ 1) layer slots
  /// are shared evenly by the p · v chunks and the first (last) stage holds one transformer layer fewer.
  bool embedding_in_pipeline_split = false;
  bool loss_in_pipeline_split = false;
  /// Megatron-LM's --pipeline-model-parallel-layout: the contents of each of the p · v chunks; empty: the
  /// split the options above give. The embedding in the first chunk, the loss in the last, the multi-token
  /// prediction modules on the last stage.
  std::vector<LayoutChunk> layout;

  int64_t gpus() const { return tp * cp * pp * dp; }
  int64_t expert_tp() const { return etp > 0 ? etp : tp; }
  /// Tokens of a sequence on one GPU: s / c.
  int64_t local_seq() const { return seq / cp; }
  bool distributed_optimizer() const { return zero >= 1; }
  /// GPUs over which ZeRO shards (the data- and context-parallel group, as Megatron-LM's distributed
  /// optimizer does, or the sharding group).
  int64_t shard_size() const { return zero_group > 0 ? zero_group : dp * cp; }
  /// Whether the first or the last stage has a layer count of its own.
  bool uneven() const { return first_stage_layers > 0 || last_stage_layers > 0; }
  /// Whether the embedding or the loss counts as a layer of the split.
  bool accounts_in_split() const { return embedding_in_pipeline_split || loss_in_pipeline_split; }
  /// Layer slots the pipeline split shares out among `layers` transformer layers: those and the embedding and
  /// the loss where they count.
  int64_t split_slots(int64_t layers) const { return layers + embedding_in_pipeline_split + loss_in_pipeline_split; }
  /// The busiest expert's token copies over the balanced share (model::Shape::expert_load): with a capacity
  /// factor c, c where every expert is padded to it, else the imbalance capped at c; dropless, the
  /// imbalance (at most ep) where the experts are spread (ep > 1), else 1.
  double expert_load() const;
  /// One GPU's layer: s/c tokens of b sequences at the plan's t, ep, etp and expert load.
  model::Shape layer_shape() const;
  /// Micro-batches per pipeline per iteration: B / (b · d).
  int64_t micro_batches() const { return global_batch / (micro_batch * dp); }
  bool operator==(const TrainingPlan&) const = default;
};

/// HBM a plan keeps free by default beyond its modelled peak (docs/gpu.md, "Memory").
inline constexpr int64_t kDefaultMemoryReserveBytes = int64_t{1} << 30;

/// A plan with what current training runs do unless told otherwise: fused attention, a fused loss, BF16
/// with FP32 gradients, kDefaultMemoryReserveBytes kept free. `predict`, `plan` and published runs start here;
/// measured-run files keep their runs' own settings (FP16, materialised attention, no reserve);
/// Megatron-LM's command lines its defaults (an unfused loss without --cross-entropy-loss-fusion).
TrainingPlan current_practice();

/// Largest accepted degrees and batches (docs/limits.md).
namespace plan_limits {
inline constexpr int64_t kGpus = int64_t{1} << 20;         ///< GPUs of one run
inline constexpr int64_t kGlobalBatch = int64_t{1} << 24;  ///< sequences per iteration
inline constexpr int64_t kChunks = 64;                     ///< model chunks per GPU
inline constexpr int64_t kContextParallel = 1024;          ///< context-parallel width
inline constexpr int64_t kMtpLayers = 16;                  ///< multi-token prediction modules
}  // namespace plan_limits

/// Checks that Megatron-LM can run the plan on the model (InputError naming the option: --tp, --cp, --pp,
/// --dp, --vp, --mbs, --global-batch, --seq, --zero, --zero-group, --fp8, --decoder-first-pipeline-num-layers,
/// --decoder-last-pipeline-num-layers, --pipeline-model-parallel-layout): every degree ≥ 1 and within plan_limits; t
/// divides the heads (and the key/value heads); every stage's layers (stage_layers) a whole number, at least one,
/// divisible by v; a first or last stage of its own needs p > 1; b · d divides B; with v > 1, p > 1 and the micro-batch
/// count a multiple of p; sequence parallelism needs t > 1 and t dividing s; c > 1 needs fused attention,
/// no sliding window and 2c (· t with sequence parallelism) dividing s (context_parallel_refusal); ZeRO in
/// [0, 3], its group dividing d · c; FP8 needs BF16.
void validate(const TrainingPlan& plan, const model::ModelSpec& spec);

/// Why Megatron-LM cannot split the plan's sequences over its c context-parallel ranks, or "" when it can
/// (always "" at c = 1): context parallelism needs fused attention, no sliding window shorter than the
/// sequence, the learned positions of the whole sequence, and 2c (· t with sequence parallelism) dividing s.
std::string context_parallel_refusal(const TrainingPlan& plan, const model::ModelSpec& spec);

/// Transformer layers of pipeline stage `stage` (0 ≤ stage < p): the layout's chunks on it; the first and last
/// stage's own counts when given, the rest shared evenly by the other stages; with the embedding or the loss counted in
/// the split, (L + 1 (+ 1)) / p slots a stage, less the embedding's on the first and the loss's on the last. Assumes a
/// validated plan.
int64_t stage_layers(const TrainingPlan& plan, const model::ModelSpec& spec, int64_t stage);
/// Transformer layers of model chunk `chunk` (0 ≤ chunk < p · v; on stage chunk mod p): the layout's, or an even
/// share of its stage's layers, any remainder in the stage's later chunks (the first holds one fewer where the
/// embedding is counted). Assumes a validated plan.
int64_t chunk_layers(const TrainingPlan& plan, const model::ModelSpec& spec, int64_t chunk);
/// Of stage_layers, those among a mixture of experts' first dense layers (spec.first_dense_layers). The
/// layers run in model order through the v · p chunks, chunk j on stage j mod p; a stage's v chunks share its
/// layers evenly, any remainder in its later chunks (the first holds one fewer where the embedding is counted).
int64_t stage_dense_layers(const TrainingPlan& plan, const model::ModelSpec& spec, int64_t stage);

const char* to_string(Recompute recompute);
const char* to_string(Fp8Recipe recipe);
const char* to_string(CpComm comm);
const char* to_string(MoeDispatcher dispatcher);
/// "delayed" or "tensorwise"; InputError naming `option` otherwise.
Fp8Recipe parse_fp8_recipe(const std::string& text, const std::string& option);
/// "p2p" or "all_gather"; InputError naming `option` otherwise.
CpComm parse_cp_comm(const std::string& text, const std::string& option);
/// "alltoall" or "flex" (with DeepEP); InputError naming `option` otherwise (allgather is not modelled).
MoeDispatcher parse_moe_dispatcher(const std::string& text, const std::string& option);
/// The attention kernel as Megatron-LM's --attention-backend names it: "fused" (the GPU's own fused
/// attention, cuDNN on Hopper), "flash" (FlashAttention-2) or "unfused" (the scores materialised).
const char* attention_backend(const TrainingPlan& plan);
/// Sets flash_attention and attention_library from Megatron-LM's --attention-backend: fused or auto (what
/// Transformer Engine picks on Hopper: cuDNN), flash, unfused or local; InputError naming `option` otherwise.
void set_attention_backend(TrainingPlan& plan, const std::string& text, const std::string& option);
/// Sets plan.layout from Megatron-LM's --pipeline-model-parallel-layout `text` (parse_pipeline_layout), and
/// plan.vp to its chunks over plan.pp unless `vp_given` (Megatron-LM derives it so), where they divide.
void set_pipeline_layout(TrainingPlan& plan, const std::string& text, const std::string& option, bool vp_given);
/// "full", "selective" or "none"; InputError naming `option` otherwise.
Recompute parse_recompute(const std::string& text, const std::string& option);

}  // namespace phaze::megatron
