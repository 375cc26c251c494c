#pragma once

#include <cstdint>
#include <string>

#include "model/operator_graph.h"

namespace phaze::model {

enum class LayerKind { Embedding, Transformer, Head };

/// One node of the layer graph with everything the later stages need, for one tensor-parallel rank and
/// one micro-batch.
struct Layer {
  LayerKind kind = LayerKind::Transformer;
  OperatorGraph forward;
  OperatorGraph backward;
  int64_t parameters = 0;                ///< weights held by one rank (elements), including tied copies
  int64_t tied_copy_parameters = 0;      ///< of those, a copy of a weight owned by another layer (tied LM head)
  int64_t training_only_parameters = 0;  ///< of those, pre-training head weights not in the published model
  int64_t routed_expert_parameters = 0;  ///< of those, the routed experts' weights (a token uses k of E)
  int64_t parameter_bytes = 0;           ///< parameters × bytes per parameter
  int64_t activation_bytes = 0;          ///< bytes stashed for the backward pass (no recomputation)
  int64_t input_bytes = 0;               ///< activation bytes entering from the previous layer
  int64_t output_bytes = 0;              ///< activation bytes handed to the next layer
  bool tensor_parallel = false;          ///< some weight of the layer is split over the ranks

  int64_t forward_flops() const { return forward.gemm_flops(); }
  int64_t backward_flops() const { return backward.gemm_flops(); }
};

const char* to_string(LayerKind);

}  // namespace phaze::model
