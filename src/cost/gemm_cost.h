#pragma once

#include <cstdint>
#include <memory>

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

/// What map_gemm's search finds of the levels that recur across core configurations: the GLB tilings of a GEMM
/// (per GLB size, HBM bandwidth and clock; designs that differ in their cores share them) and the SRAM
/// tilings of a per-core share (per SRAM size and core split; designs that differ in their GLB, HBM or array
/// share them). Each level is kept as its fastest option and the options that are cheaper than every faster
/// one, which is all map_gemm asks of it. For one set of cost parameters; thread-safe. It holds at most
/// kMostLevels levels (about 15 MB), and forgets them all when full: map_gemm gives the same mapping, bit
/// for bit, with or without it.
class GemmMappingMemo {
 public:
  static constexpr size_t kMostLevels = size_t{1} << 15;

  explicit GemmMappingMemo(const CostParams& params);
  ~GemmMappingMemo();
  GemmMappingMemo(const GemmMappingMemo&) = delete;
  GemmMappingMemo& operator=(const GemmMappingMemo&) = delete;

  const CostParams& params() const;
  size_t levels() const;  ///< levels kept now

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
  friend GemmMapping map_gemm(const model::Gemm&, const hw::TensorCoreConfig&, const CostParams&, GemmMappingMemo*);
};

/// The mapping of minimum latency (ties: minimum energy, then fewest words moved) of `gemm` on
/// `config.cores` tensor cores, which may use fewer cores than it has. Deterministic; never infinite.
/// With a memo (made for the same parameters; another one is ignored) the levels it knows are not searched
/// again.
GemmMapping map_gemm(const model::Gemm& gemm, const hw::TensorCoreConfig& config, const CostParams& params,
                     GemmMappingMemo* memo = nullptr);

/// Evaluates one fully specified mapping (for tests and the brute-force mapper): fills in its cycles,
/// energy and words.
void evaluate_mapping(const model::Gemm& gemm, const hw::TensorCoreConfig& config, const CostParams& params,
                      GemmMapping& mapping);

}  // namespace phaze::cost
