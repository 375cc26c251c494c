#pragma once

// Seconds of one kernel on a GPU (docs/gpu.md, "Kernels"). A GEMM is cut into output tiles that the SMs
// run in waves: its compute time is the number of waves times one tile's main loop at the SM's tensor rate
// (so a GEMM one tile past a full wave pays a whole extra wave), bounded below by its HBM traffic; the
// fastest of the tile shapes the libraries use is taken. A streaming kernel (element-wise, row-wise,
// copies) is priced by the bytes it moves through HBM. A fused (flash) attention kernel walks the s × s
// scores in 128 × 128 blocks without writing them: one tile per 128 queries (forward) or keys (backward),
// the causal ones skipping the blocks above the diagonal. Every tile pays the GPU's tile overhead, and every
// kernel takes at least the GPU's launch time.

#include <cstdint>

#include "hw/gpu.h"
#include "model/operator_graph.h"

namespace phaze::cost {

/// One GEMM kernel (its G products) with `element_bytes`-byte operands and result.
double gpu_gemm_s(const hw::Gpu& gpu, const model::Gemm& gemm, int64_t element_bytes);

/// One FP8 GEMM kernel (Transformer Engine's: 1-byte operands, a 16-bit result) at the GPU's FP8 tensor rate
/// and FP8 efficiency, tiled as gpu_gemm_s. The GPU must have FP8 tensor cores.
double gpu_fp8_gemm_s(const hw::Gpu& gpu, const model::Gemm& gemm);

/// One streaming kernel that reads and writes `bytes` bytes of HBM in all.
double gpu_stream_s(const hw::Gpu& gpu, double bytes);

/// The share of the s × s attention scores a model needs: all of them for a bidirectional model (BERT); the
/// causal half for a causal one; with a sliding window of w < s tokens (Mistral) each query's last w keys,
/// w/s − w²/(2s²) (the causal half when w ≥ s).
double attention_score_share(bool causal, int64_t seq, int64_t window);

/// FLOPs of one fused attention kernel (gpu_flash_attention_s): 2 products of 2·s²·d per head forward, 5
/// backward (the scores recomputed), over attention_score_share of the scores.
double flash_attention_flops(int64_t batch_heads, int64_t seq, int64_t head_dim, model::Direction direction,
                             bool causal, int64_t window = 0);

/// Tokens per side of the score blocks a fused attention kernel works in (FlashAttention-2 and -3 and
/// cuDNN's fused attention all use 128-query tiles on Ampere and Hopper).
inline constexpr int64_t kAttentionBlockTokens = 128;

/// The block structure of one head's fused attention over `seq` tokens.
struct AttentionWork {
  double tiles_per_head = 0;        ///< ⌈seq / 128⌉ tiles (thread blocks)
  double block_pairs_per_head = 0;  ///< 128 × 128 score blocks computed: all, the causal triangle with its
                                    ///< diagonal, or the band of a sliding window
  double longest_tile_pairs = 0;    ///< blocks of the busiest tile
};
/// `window` > 0: a causal sliding window of that many keys per query (0: none).
AttentionWork attention_work(int64_t seq, bool causal, int64_t window = 0);

/// One fused attention kernel over `batch_heads` heads of `seq` tokens and head size `head_dim` with
/// `element_bytes`-byte tensors: forward (Q·Kᵀ and P·V) or backward (which recomputes the scores: five
/// products instead of two), block by block (attention_work) at the GPU's attention efficiency. The backward
/// pass adds the three streaming kernels of its FP32 dQ accumulator (zero, rowsum(dO ∘ O), convert).
double gpu_flash_attention_s(const hw::Gpu& gpu, int64_t batch_heads, int64_t seq, int64_t head_dim,
                             int64_t element_bytes, model::Direction direction, bool causal, int64_t window = 0);

}  // namespace phaze::cost
