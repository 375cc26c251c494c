#pragma once

// What Megatron-LM's execution features do to the operators of a transformer layer (models.md's ids):
// which form the attention core that selective recomputation re-runs, which run outside the tensor-parallel
// region on every rank unless sequence parallelism splits them by the sequence, and the layer with that
// split applied. The GPU pricing and the co-search's accelerator pricing both read them here.

#include <cstdint>
#include <string>

#include "model/layer.h"

namespace phaze::model {

/// The number in a transformer operator's id ("F12" → 12, "B5a" → 5, "B18acc" → 18), or -1 without one.
int operator_number(const std::string& id);

/// The attention core of a transformer layer: F5 scores, F6 softmax, F7 dropout, F8 context, and the
/// backward operators of the same numbers.
bool in_attention_core(const std::string& id);

/// A mixture of experts' shared expert: F14x, F15x…, F16x…, F17x and their backward operators (the number
/// followed by x).
bool in_shared_expert(const std::string& id);

/// Operators every tensor-parallel rank repeats on the whole sequence unless sequence parallelism splits
/// them: the norms (F1, F13, F19) and the bias-dropout-residual adds (F12, F18), and their backward ones.
bool outside_tensor_parallel_region(const std::string& id);

/// The GEMMs Transformer Engine runs in FP8 (its Linear, LayerNormLinear and LayerNormMLP modules): the query,
/// key and value projections (F3), the attention output projection (F10), the MLP's first (F15, gate and up)
/// and second (F16) GEMMs, and their data- and weight-gradient GEMMs. The attention core stays in 16 bits.
bool runs_in_fp8(const std::string& id);
/// The operator is one of those GEMMs (a tensor-core or fused GEMM whose id runs_in_fp8).
bool is_fp8_gemm(const Operator& op);

/// `layer` (a transformer layer at width t) with sequence parallelism (Korthikanti et al. 2022, 4.2.2): its
/// vector operators outside the tensor-parallel region work on s/t of the tokens (their bytes and elements
/// divided by t, rounded up). Each all-reduce becomes a reduce-scatter and an all-gather, which a ring runs
/// in the same time, so the collectives stay as they are; so do the stored activations (the memory model
/// accounts for sequence parallelism itself). Other layers and t = 1 are returned unchanged.
Layer sequence_parallel_layer(const Layer& layer, int64_t t);

}  // namespace phaze::model
