#pragma once

#include <cstdint>
#include <string>

#include "util/checked_int.h"

namespace phaze::model {

enum class NormKind { LayerNorm, RmsNorm };
enum class Activation { Gelu, GeluTanh, Relu, SwiGlu };
enum class MaskKind { Causal, Padding };
/// Pre-training head of the model: a causal LM head, or BERT's MLM + next-sentence heads.
enum class HeadKind { CausalLm, BertPretraining };

/// Hyper-parameters of a transformer model: everything the operator and layer graphs depend on.
/// Sizes are element counts; probabilities are in [0, 1].
struct ModelSpec {
  std::string name;         ///< preset name or the config file it came from
  std::string description;  ///< human-readable name, e.g. "GPT-3 175B (Megatron)"

  int64_t num_layers = 0;
  int64_t hidden = 0;              ///< h
  int64_t heads = 0;               ///< a
  int64_t kv_heads = 0;            ///< key/value heads (= heads without grouped-query attention)
  int64_t ffn = 0;                 ///< f, FFN inner size
  int64_t vocab = 0;               ///< V as published (unpadded)
  int64_t word_embedding_dim = 0;  ///< width of the word embedding (OPT-350M: 512; else h)
  int64_t max_positions = 0;       ///< rows of the learned position table without offset (0 with RoPE)
  int64_t position_offset = 0;     ///< extra position rows (OPT: 2)
  int64_t token_types = 0;         ///< token-type embedding rows (BERT: 2, else 0)
  int64_t default_seq = 0;         ///< sequence length used when none is given
  int64_t sliding_window = 0;      ///< causal attention window: each query sees its last w keys (Mistral); 0 = all

  NormKind norm = NormKind::LayerNorm;
  bool pre_norm = true;         ///< pre-LN (true) or post-LN (false) layer
  bool final_norm = true;       ///< a norm before the head
  bool embedding_norm = false;  ///< a LayerNorm after the embeddings (BERT-large)
  Activation activation = Activation::Gelu;
  MaskKind mask = MaskKind::Causal;
  bool biases = true;        ///< projections and norms carry biases
  bool qkv_bias = false;     ///< the query, key and value projections carry biases where `biases` is false (Qwen2)
  bool fused_qkv = true;     ///< one h → 3h projection instead of three
  bool rotary = false;       ///< RoPE on q and k instead of learned positions
  bool scale_query = false;  ///< 1/√d_h applied to q in its projection (OPT) instead of to the scores
  double hidden_dropout = 0.0;
  double attention_dropout = 0.0;
  bool embedding_dropout = false;
  HeadKind head = HeadKind::CausalLm;
  bool tied_head = true;          ///< the LM head reuses the word embedding
  bool pad_vocab_always = false;  ///< Megatron pads the vocabulary even at t = 1
  double norm_epsilon = 1e-5;
  /// Size d of one attention head; 0: hidden / heads. Qwen3, Gemma and PaLM set another, so that the query
  /// projection is h → a·d and the output projection a·d → h.
  int64_t head_size = 0;
  bool qk_norm = false;  ///< a norm (the layer's kind) of each query and key head before RoPE (Qwen3)

  /// A mixture of experts in every layer's MLP (experts > 0; 0 is a dense model): a router picks k of E
  /// routed experts for each token, each a gated FFN of expert_ffn columns; a shared expert of
  /// shared_expert_ffn columns (0: none) runs on every token, behind a sigmoid gate where the model has one.
  int64_t experts = 0;
  int64_t experts_per_token = 0;
  int64_t expert_ffn = 0;
  int64_t shared_expert_ffn = 0;
  bool shared_expert_gate = false;
  /// Layers before the first expert layer that have a dense FFN of `ffn` columns instead (DeepSeek-V3: 3).
  int64_t first_dense_layers = 0;
  /// The router scores each expert with a sigmoid (DeepSeek-V3) instead of a softmax over the experts.
  bool router_sigmoid = false;
  /// Group-limited routing: the experts in expert_groups groups, each token's k experts picked inside its
  /// expert_groups_per_token best groups (DeepSeek-V3: 8 and 4, one group per node: at most 4 nodes); 0: none.
  int64_t expert_groups = 0;
  int64_t expert_groups_per_token = 0;

  /// Multi-head latent attention (DeepSeek-V2 and V3) where kv_lora_rank > 0: every head's key and value
  /// come up from one latent of kv_lora_rank columns, and a key part of rope_head_size elements that carries
  /// RoPE comes straight from the hidden state, shared by the heads; the queries come up from a latent of
  /// q_lora_rank columns (0: projected from the hidden state). A head's query and key have head_dim() +
  /// rope_head_size elements, its value value_head_size (0: head_dim()).
  int64_t q_lora_rank = 0;
  int64_t kv_lora_rank = 0;
  int64_t rope_head_size = 0;
  int64_t value_head_size = 0;

  int64_t head_dim() const { return head_size > 0 ? head_size : hidden / heads; }
  bool mla() const { return kv_lora_rank > 0; }
  /// Elements of one head's query and key, and of its value.
  int64_t qk_head_dim() const { return head_dim() + (mla() ? rope_head_size : 0); }
  int64_t v_head_dim() const { return value_head_size > 0 ? value_head_size : head_dim(); }
  /// The head size a fused attention kernel works at: the mean of the query/key and value sizes, which
  /// gives its products and its tensors' bytes exactly (2·s²·(d_qk + d_v) FLOPs forward).
  int64_t attention_head_dim() const { return (qk_head_dim() + v_head_dim()) / 2; }
  bool moe() const { return experts > 0; }
  /// The layers with routed experts: all but the first dense ones (0 for a dense model).
  int64_t moe_layers() const { return moe() ? num_layers - first_dense_layers : 0; }
  /// Whether a token attends to the tokens before it only (the causal mask) or to all (BERT's padding mask).
  bool causal() const { return mask == MaskKind::Causal; }
  bool operator==(const ModelSpec&) const = default;
};

/// Shape of one evaluation: sequence length, micro-batch and tensor-parallel width.
struct Shape {
  int64_t seq = 0;          ///< s, tokens per sequence
  int64_t micro_batch = 1;  ///< b, sequences per micro-batch
  int64_t tp = 1;           ///< t, tensor-parallel width
  /// Expert-parallel width: a mixture of experts' routed experts split over `ep` ranks (each a tensor-parallel
  /// group of t, the groups t apart), its tokens exchanged by all-to-all; 1 for a dense model.
  int64_t ep = 1;
  /// Expert tensor-parallel width (Megatron-Core's parallel folding): each expert's columns split over etp
  /// ranks; 0: the attention's t. With etp ≠ t each rank routes its own s·b/t tokens (sequence parallelism).
  int64_t etp = 0;
  /// Token copies the busiest routed expert of a rank takes, over the balanced share T·k/E of the copies the
  /// rank routes: a capacity factor (tokens beyond it dropped) or a routing imbalance (docs/models.md 3.3);
  /// 1 for balanced routing. In (0, E/k].
  double expert_load = 1.0;
  /// Every expert's input padded to its capacity (Megatron-Core's --moe-pad-expert-input-to-capacity): the
  /// rank's own permuted tokens are expert_load times the balanced share as well, not just the busiest
  /// expert's.
  bool expert_padded = false;
  /// The attention core as one fused kernel whose scores never reach HBM (AttentionCore), as every current
  /// accelerator runs it; false: the scores and probabilities materialised, as PHAZE's layer graph has them.
  bool fused_attention = false;
  /// Key/value heads fewer than t are each replicated on t / kv_heads ranks (GSPMD's sharding of multi-query
  /// attention over a model axis); false: t must divide them, as Megatron-LM requires.
  bool replicate_kv_heads = false;
  int64_t expert_tp() const { return etp > 0 ? etp : tp; }
  /// s · b; SizeOverflow beyond int64_t.
  int64_t tokens() const { return CheckedInt(seq) * micro_batch; }
};

/// Bytes per element of each kind of tensor (mixed precision is explicit).
struct Precision {
  int64_t activation_bytes = 2;  ///< activations and their gradients
  int64_t parameter_bytes = 2;   ///< weights and weight gradients
  int64_t mask_bytes = 1;        ///< dropout masks
  int64_t index_bytes = 8;       ///< token ids and labels (int64)
};

/// Largest accepted values of the hyper-parameters and of a shape (docs/limits.md). Config keys, presets and
/// options are checked against them where they enter; the products formed from them (elements, bytes, FLOPs)
/// are checked again as they are formed (util/checked_int.h), so no size wraps.
namespace limits {
inline constexpr int64_t kLayers = int64_t{1} << 14;      ///< 16,384 transformer layers
inline constexpr int64_t kHidden = int64_t{1} << 20;      ///< hidden size and word-embedding width
inline constexpr int64_t kHeads = int64_t{1} << 16;       ///< attention heads (and key/value heads)
inline constexpr int64_t kFfn = int64_t{1} << 22;         ///< FFN inner size
inline constexpr int64_t kVocab = int64_t{1} << 24;       ///< vocabulary rows and token types
inline constexpr int64_t kSequence = int64_t{1} << 26;    ///< tokens per sequence and learned positions
inline constexpr int64_t kMicroBatch = int64_t{1} << 16;  ///< sequences per micro-batch
inline constexpr int64_t kTokens = int64_t{1} << 32;      ///< tokens per micro-batch (seq · mbs), bounds the work
inline constexpr int64_t kTensorParallel = kHeads;        ///< tensor-parallel width (it divides the heads)
inline constexpr int64_t kExperts = int64_t{1} << 12;     ///< routed experts per layer (and expert groups)
}  // namespace limits

/// Whether tensor-parallel width t splits the model's attention: t divides the query heads and either divides
/// the key/value heads or, with `replicate_kv_heads`, is a multiple of them (each replicated on t / kv_heads ranks).
bool splits_heads(const ModelSpec& spec, int64_t t, bool replicate_kv_heads);
/// Key/value heads on one rank at width t: kv_heads / t, or 1 when replicated.
int64_t kv_heads_per_rank(const ModelSpec& spec, int64_t t);

/// Vocabulary rows actually allocated at tensor-parallel width t: Megatron pads to a multiple of 128·t
/// (always for Megatron models, only when split for the others).
int64_t padded_vocab(const ModelSpec& spec, int64_t tp);

/// Checks the hyper-parameters (against `limits` too) and the shape; throws InputError naming `source`, the
/// field and the value.
void validate(const ModelSpec& spec, const std::string& source);
void validate(const ModelSpec& spec, const Shape& shape, const std::string& source);

const char* to_string(NormKind);
const char* to_string(Activation);
const char* to_string(MaskKind);

}  // namespace phaze::model
