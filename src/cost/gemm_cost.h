#pragma once

#include <cstdint>

#include "cost/cost_params.h"
#include "hw/architecture.h"
#include "model/operator_graph.h"

namespace phaze::cost {

/// Which two GEMM dimensions the PE array unrolls (rows over its depth, columns over its width); the
/// third streams through it in time.
enum class Dim : int8_t { M, N, K };
struct Dataflow {
  Dim rows = Dim::K;
  Dim cols = Dim::N;
  Dim streamed = Dim::M;
};

/// Loop order of a tiled level, named by the operand that stays resident across the innermost loop.
enum class LoopOrder : int8_t { AStationary, BStationary, CStationary };

/// Tile extents (elements) and loop order at one memory level.
struct Tiling {
  int64_t m = 1, n = 1, k = 1;
  LoopOrder order = LoopOrder::CStationary;
};

/// A mapping of one GEMM on a tensor-core configuration and its cost.
struct GemmMapping {
  int64_t split_g = 1, split_m = 1, split_n = 1;  ///< cores along the batch, M and N
  Dataflow dataflow;
  Tiling sram;                ///< per-core tile
  Tiling glb;                 ///< chip-level tile
  double compute_cycles = 0;  ///< padded PE-array cycles on the busiest core
  double array_cycles = 0;    ///< per-core SRAM ↔ PE array
  double glb_cycles = 0;      ///< all SRAMs ↔ GLB
  double hbm_cycles = 0;      ///< GLB ↔ HBM
  double cycles = 0;          ///< the maximum of the above
  double energy_j = 0;
  double words_moved = 0;  ///< across all three boundaries
  double latency_s() const;
  double clock_hz = 1;
};

/// The mapping of minimum latency (ties: minimum energy, then fewest words moved) of `gemm` on
/// `config.cores` tensor cores, which may use fewer cores than it has. Deterministic; never infinite.
GemmMapping map_gemm(const model::Gemm& gemm, const hw::TensorCoreConfig& config, const CostParams& params);

/// Evaluates one fully specified mapping (for tests and the brute-force mapper): fills in its cycles,
/// energy and words.
void evaluate_mapping(const model::Gemm& gemm, const hw::TensorCoreConfig& config, const CostParams& params,
                      GemmMapping& mapping);

}  // namespace phaze::cost
