#pragma once

// Seconds of one kernel on a GPU (docs/gpu.md, "Kernels"). A GEMM is cut into output tiles that the SMs
// run in waves: its compute time is the number of waves times one tile's main loop at the SM's tensor rate
// (so a GEMM one tile past a full wave pays a whole extra wave), bounded below by its HBM traffic; the
// fastest of the tile shapes the libraries use is taken. A streaming kernel (element-wise, row-wise,
// copies) is priced by the bytes it moves through HBM. A fused (flash) attention kernel does the attention
// core's FLOPs at the tensor rate without writing the s × s scores. Every kernel adds the GPU's fixed
// launch time.

#include <cstdint>

#include "hw/gpu.h"
#include "model/operator_graph.h"

namespace phaze::cost {

/// One GEMM kernel (its G products) with `element_bytes`-byte operands.
double gpu_gemm_s(const hw::Gpu& gpu, const model::Gemm& gemm, int64_t element_bytes);

/// One streaming kernel that reads and writes `bytes` bytes of HBM in all.
double gpu_stream_s(const hw::Gpu& gpu, double bytes);

/// The share of the s × s score blocks a fused attention kernel computes: half for a causal model (the
/// blocks above the diagonal are skipped), all of them for a bidirectional one.
inline double attention_block_share(bool causal) {
  return causal ? 0.5 : 1.0;
}

/// FLOPs of one fused attention kernel (gpu_flash_attention_s): 2 products of 2·s²·d per head forward, 5
/// backward (the scores recomputed), over attention_block_share(causal) of the score blocks.
double flash_attention_flops(int64_t batch_heads, int64_t seq, int64_t head_dim, model::Direction direction,
                             bool causal);

/// One fused attention kernel over `batch_heads` heads of `seq` tokens and head size `head_dim` with
/// `element_bytes`-byte tensors: forward (Q·Kᵀ and P·V) or backward (which recomputes the scores: five
/// products instead of two), over attention_block_share(causal) of the score blocks.
double gpu_flash_attention_s(const hw::Gpu& gpu, int64_t batch_heads, int64_t seq, int64_t head_dim,
                             int64_t element_bytes, model::Direction direction, bool causal);

}  // namespace phaze::cost
