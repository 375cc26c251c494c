#include "cost/gpu_kernel.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace phaze::cost {

namespace {

/// Output tiles (rows × columns) of the FP16 tensor-core GEMM kernels: the large tiles that saturate an
/// SM, and the half-height / half-width ones used when a dimension is small.
constexpr std::array<std::array<int64_t, 2>, 5> kTiles{{{256, 128}, {128, 256}, {128, 128}, {128, 64}, {64, 128}}};

double ceil_div(double a, double b) {
  return std::ceil(a / b);
}

/// Seconds of HBM traffic at the sustained bandwidth.
double hbm_s(const hw::Gpu& gpu, double bytes) {
  return bytes / (gpu.hbm_bandwidth * gpu.memory_efficiency);
}

/// FLOP/s one SM sustains in a main loop that reaches `efficiency` of the tensor rate.
double sm_rate(const hw::Gpu& gpu, double efficiency) {
  return gpu.tensor_flop_per_clock_per_sm * gpu.tensor_clock_hz * efficiency;
}

/// A GEMM on a tensor rate of `flop_per_clock_per_sm` at `efficiency`, its operands of `operand_bytes` and
/// its result of `result_bytes` bytes per element.
double tiled_gemm_s(const hw::Gpu& gpu, const model::Gemm& g, double flop_per_clock_per_sm, double efficiency,
                    double operand_bytes, double result_bytes) {
  if (g.m <= 0 || g.n <= 0 || g.k <= 0 || g.batch <= 0) return 0;
  const double m = static_cast<double>(g.m), n = static_cast<double>(g.n), k = static_cast<double>(g.k);
  const double batch = static_cast<double>(g.batch);
  // Each operand and the result cross HBM once (the L2 holds the panels that tiles of one wave share).
  const double traffic = operand_bytes == result_bytes
                             ? batch * (m * k + k * n + m * n) * operand_bytes
                             : batch * ((m * k + k * n) * operand_bytes + m * n * result_bytes);
  const double sm_flop_per_s = flop_per_clock_per_sm * gpu.tensor_clock_hz * efficiency;
  double best = std::numeric_limits<double>::infinity();
  for (const auto& [rows, cols] : kTiles) {
    const double tiles = ceil_div(m, static_cast<double>(rows)) * ceil_div(n, static_cast<double>(cols)) * batch;
    const double waves = ceil_div(tiles, static_cast<double>(gpu.sms));
    const double tile_s =
        2.0 * static_cast<double>(rows) * static_cast<double>(cols) * k / sm_flop_per_s + gpu.tile_overhead_s;
    best = std::min(best, waves * tile_s);
  }
  return std::max({best, hbm_s(gpu, traffic), gpu.kernel_launch_s});
}

}  // namespace

double gpu_gemm_s(const hw::Gpu& gpu, const model::Gemm& g, int64_t element_bytes) {
  const auto bytes = static_cast<double>(element_bytes);
  return tiled_gemm_s(gpu, g, gpu.tensor_flop_per_clock_per_sm, gpu.tensor_efficiency, bytes, bytes);
}

double gpu_fp8_gemm_s(const hw::Gpu& gpu, const model::Gemm& g) {
  return tiled_gemm_s(gpu, g, gpu.fp8_flop_per_clock_per_sm, gpu.fp8_tensor_efficiency, 1, 2);
}

double gpu_stream_s(const hw::Gpu& gpu, double bytes) {
  return std::max(hbm_s(gpu, bytes), gpu.kernel_launch_s);
}

double attention_score_share(bool causal, int64_t seq, int64_t window) {
  if (!causal) return 1.0;
  if (window <= 0 || window >= seq) return 0.5;
  const double w = static_cast<double>(window), s = static_cast<double>(seq);
  return w / s - w * w / (2 * s * s);
}

double flash_attention_flops(int64_t batch_heads, int64_t seq, int64_t head_dim, model::Direction direction,
                             bool causal, int64_t window) {
  const double bh = static_cast<double>(batch_heads), s = static_cast<double>(seq), d = static_cast<double>(head_dim);
  // Forward: Q·Kᵀ and P·V; backward: Q·Kᵀ again, dP = dO·Vᵀ, dV = Pᵀ·dO, dQ = dS·K, dK = dSᵀ·Q.
  const double products = direction == model::Direction::Forward ? 2 : 5;
  return products * 2.0 * bh * s * s * d * attention_score_share(causal, seq, window);
}

double gpu_flash_attention_s(const hw::Gpu& gpu, int64_t batch_heads, int64_t seq, int64_t head_dim,
                             int64_t element_bytes, model::Direction direction, bool causal, int64_t window) {
  if (batch_heads <= 0 || seq <= 0 || head_dim <= 0) return 0;
  const double bh = static_cast<double>(batch_heads), s = static_cast<double>(seq), d = static_cast<double>(head_dim);
  const bool forward = direction == model::Direction::Forward;
  const AttentionWork work = attention_work(seq, causal, window);
  const double efficiency = forward ? gpu.attention_forward_efficiency : gpu.attention_backward_efficiency;
  const double products = forward ? 2 : 5;
  const double block = static_cast<double>(kAttentionBlockTokens);
  const double pair_s = products * 2.0 * block * block * d / sm_rate(gpu, efficiency);
  // The work spreads over the SMs, but no SM finishes before the longest tile does.
  const double spread_s =
      (bh * work.block_pairs_per_head * pair_s + bh * work.tiles_per_head * gpu.tile_overhead_s) / gpu.sms;
  const double longest_s = work.longest_tile_pairs * pair_s + gpu.tile_overhead_s;
  // Forward reads Q, K, V and writes O; backward also reads O, dO and writes dQ, dK, dV.
  const double tensors = forward ? 4 : 8;
  const double traffic = tensors * bh * s * d * static_cast<double>(element_bytes);
  const double main_s = std::max({spread_s, longest_s, hbm_s(gpu, traffic), gpu.kernel_launch_s});
  if (forward) return main_s;
  // The backward pass accumulates dQ in FP32 across its tiles: three streaming kernels around the main one
  // zero the accumulator, form rowsum(dO ∘ O) from O and dO, and convert dQ to the tensors' type.
  const double elements = bh * s * d;
  const double fp32 = 4;
  return main_s + gpu_stream_s(gpu, elements * fp32) +
         gpu_stream_s(gpu, elements * 2 * static_cast<double>(element_bytes)) +
         gpu_stream_s(gpu, elements * (fp32 + static_cast<double>(element_bytes)));
}

AttentionWork attention_work(int64_t seq, bool causal, int64_t window) {
  const double tiles = std::ceil(static_cast<double>(seq) / static_cast<double>(kAttentionBlockTokens));
  if (!causal) return {tiles, tiles * tiles, tiles};
  // Causal: the tile of query block i meets key blocks 0..i (forward; backward by key block, the same
  // counts), the diagonal block computed whole. A window of w keys reaches back ⌈(w − 1)/128⌉ blocks past
  // the diagonal (block i − δ holds a key within w of block i's first query when (δ − 1)·128 + 1 < w).
  const double reach =
      window > 0 ? std::ceil(static_cast<double>(window - 1) / static_cast<double>(kAttentionBlockTokens)) : tiles;
  if (tiles - 1 <= reach) return {tiles, tiles * (tiles + 1) / 2, tiles};
  return {tiles, (reach + 1) * (reach + 2) / 2 + (tiles - 1 - reach) * (reach + 1), reach + 1};
}

}  // namespace phaze::cost
