#include "cost/attention_cost.h"

#include <algorithm>

namespace phaze::cost {

namespace {

constexpr int64_t kRowStatisticBytes = 4;  // the log-sum-exp of a query row, in FP32

}  // namespace

int64_t attention_kv_passes(const model::AttentionCore& core, int64_t concurrent_heads, int64_t glb_bytes,
                            int64_t element_bytes) {
  const bool forward = core.direction == model::Direction::Forward;
  const double per_head = forward ? 1.0 : 2.0;  // backward: the gradients beside K and V
  const double heads = static_cast<double>(std::max<int64_t>(1, concurrent_heads));
  const double half = static_cast<double>(glb_bytes) / 2.0;
  const double kv_bytes = heads * per_head * static_cast<double>(core.seq) *
                          static_cast<double>(core.qk_dim + core.v_dim) * static_cast<double>(element_bytes);
  if (kv_bytes <= half) return 1;
  // A query row holds q and o (forward), and dO and dQ too (backward).
  const double row_bytes =
      heads * per_head * static_cast<double>(core.qk_dim + core.v_dim) * static_cast<double>(element_bytes);
  const int64_t rows = std::max<int64_t>(1, static_cast<int64_t>(half / row_bytes));
  return (core.seq + rows - 1) / rows;
}

double attention_hbm_bytes(const model::AttentionCore& core, int64_t concurrent_heads, int64_t glb_bytes,
                           int64_t element_bytes) {
  const double s = static_cast<double>(core.seq), e = static_cast<double>(element_bytes);
  const double heads = static_cast<double>(core.heads), kv = static_cast<double>(core.kv_heads());
  const double q = heads * s * static_cast<double>(core.qk_dim) * e,
               o = heads * s * static_cast<double>(core.v_dim) * e;
  const double k = kv * s * static_cast<double>(core.qk_dim) * e, v = kv * s * static_cast<double>(core.v_dim) * e;
  const double statistics = heads * s * static_cast<double>(kRowStatisticBytes);
  const double passes = static_cast<double>(attention_kv_passes(core, concurrent_heads, glb_bytes, element_bytes));
  if (core.direction == model::Direction::Forward) return q + passes * (k + v) + o + statistics;
  // Read Q, O, dO and the statistics, K and V; write dQ, and dK, dV.
  return q + 2 * o + statistics + q + passes * 2 * (k + v);
}

}  // namespace phaze::cost
