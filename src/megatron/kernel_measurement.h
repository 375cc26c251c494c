#pragma once

// One measured GPU kernel (bench/gpu/measure.py writes them): a GEMM, a fused attention kernel, a
// streaming kernel or a launch-cost probe, with its shape and its measured seconds. What
// `phaze validate --kernels` compares cost/gpu_kernel.h against and what Hopper's software figures are
// fitted on.

#include <cstdint>
#include <string>

#include "model/operator_graph.h"

namespace phaze::megatron {

enum class KernelKind { Gemm, Attention, Stream, Launch };

struct KernelMeasurement {
  int64_t line = 0;  ///< line of the file it came from (1 = header)
  KernelKind kind = KernelKind::Gemm;
  std::string label;    ///< model, tensor-parallel width and operator, e.g. "llama2-7b t8 fc1"
  std::string dtype;    ///< "bf16", "e4m3xe4m3", ...
  std::string backend;  ///< the library: "cublas", "cudnn", "flash2", "torch"
  model::Direction direction = model::Direction::Forward;  ///< GEMMs: forward, or dgrad / wgrad (Backward)
  model::Gemm gemm;                                        ///< GEMM: M × N × K (its batch of products)
  int64_t batch_heads = 0;                                 ///< attention: batch · heads
  int64_t seq = 0;                                         ///< attention: tokens per sequence
  int64_t head_dim = 0;                                    ///< attention: head size
  bool causal = false;                                     ///< attention: causal mask
  double bytes = 0;                                        ///< stream: bytes read and written
  double seconds = 0;                                      ///< measured median seconds
};

}  // namespace phaze::megatron
