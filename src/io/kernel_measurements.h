#pragma once

// Measured GPU kernels in the CSV format bench/gpu/measure.py writes (bench/gpu/README.md), header names in
// any order:
//   kind (gemm | attention | stream | launch), model, tp, op, direction (forward | dgrad | wgrad | backward),
//   dtype, batch, m, n, k, seq, head_dim, causal, backend, seconds, flop, bytes, tflops.
// A GEMM row needs m, n, k (batch 1 when empty); an attention row batch (= batch · heads), seq, head_dim and
// causal (0/1); a stream row bytes; every row seconds. Fields a kind does not use may be empty; flop and
// tflops are derived and ignored. Shapes are bounded by the model limits (model/model_spec.h), seconds by
// 10⁶; at most kMaxKernels rows. Errors name the file, the line, the column and the value.

#include <cstdint>
#include <string>
#include <vector>

#include "megatron/kernel_measurement.h"

namespace phaze::io {

inline constexpr int64_t kMaxKernels = 1000000;

std::vector<megatron::KernelMeasurement> read_kernel_measurements(const std::string& path);
/// Same from the file's text; `source` names it in messages.
std::vector<megatron::KernelMeasurement> parse_kernel_measurements(const std::string& text, const std::string& source);

}  // namespace phaze::io
