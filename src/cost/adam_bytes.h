#pragma once

// Mixed-precision Adam's bytes, the one rule of every execution model that trains with it (Megatron-LM's
// iteration model and the co-search's chain planners).

namespace phaze::cost {

/// Bytes per parameter of Megatron-LM with Adam (its docs/source/api-guide/dist_optimizer.md): the 16-bit
/// parameter (2); its gradient, which BF16 training accumulates and reduces in FP32 (4) unless told to keep
/// it in BF16 (2), and FP16 training keeps in 16 bits (2); the optimizer's FP32 master copy and two moments
/// (12), plus an FP32 copy of the gradient with FP16 (16). The distributed optimizer shards the optimizer's
/// bytes over the replicas.
struct AdamBytes {
  double weights = 2, gradients = 4, optimizer = 12;
  double total() const { return weights + gradients + optimizer; }
};

/// The bytes of BF16 training (`bf16`, with `bf16_gradients` when its gradients stay in BF16) or FP16.
inline AdamBytes adam_bytes(bool bf16 = true, bool bf16_gradients = false) {
  if (!bf16) return AdamBytes{2, 2, 16};
  return bf16_gradients ? AdamBytes{2, 2, 12} : AdamBytes{2, 4, 12};
}

/// HBM bytes the fused Adam step moves per parameter it updates: reads the gradient, master weight and
/// moments (g + 12), writes master weight, moments and the 16-bit copy (14), and two more reads of the
/// gradient for the norm and the overflow check (2g): 26 + 3g.
inline double adam_step_bytes(const AdamBytes& bytes) {
  return 26 + 3 * bytes.gradients;
}

}  // namespace phaze::cost
