#pragma once

// The attention core as one fused kernel on the accelerator (docs/accelerator.md 6.4). The products run on the
// tensor cores with their operands and results in the on-chip buffers; the online softmax runs on the paired
// vector cores, overlapped with the products; HBM carries only the kernel's inputs and outputs.

#include <cstdint>

#include "model/operator_graph.h"

namespace phaze::cost {

/// Times the key/value side of the kernel crosses between HBM and the chip: 1 when the keys and values (and,
/// backward, their gradients) of the heads the cores work on at once fit in half the GLB; else once per block
/// of queries that fits in the other half.
int64_t attention_kv_passes(const model::AttentionCore& core, int64_t concurrent_heads, int64_t glb_bytes,
                            int64_t element_bytes);

/// Bytes the kernel moves between HBM and the chip. Forward: Q, K, V read, O written, and one FP32 row
/// statistic per query row written; backward: Q, K, V, O, dO and the statistics read, dQ, dK, dV written. The
/// key/value side (K, V; backward also dK, dV) counts attention_kv_passes times.
double attention_hbm_bytes(const model::AttentionCore& core, int64_t concurrent_heads, int64_t glb_bytes,
                           int64_t element_bytes);

}  // namespace phaze::cost
