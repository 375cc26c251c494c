#pragma once

#include <cstdint>

namespace phaze::cost {

/// Systolic-array fill and drain (width + depth cycles): once per GEMM and core when the stationary
/// operand is double-buffered (the default), or on every PE-array pass when it is not.
enum class SystolicFill { None, Once, EveryPass };

/// Constants of the cost model (accelerator.md 4, 5.7, 6.3, 7), all configurable. Energies in joules per
/// 16-bit word or per operation; bandwidths of on-chip links in words per cycle.
struct CostParams {
  double mac_energy = 2.2e-12;             ///< per multiply-accumulate
  double register_read_energy = 0.03e-12;  ///< per word
  double register_write_energy = 0.04e-12;
  double sram_energy = 1.5e-12;  ///< per-core SRAM, per word accessed
  double glb_energy = 1.5e-12;
  double hbm_energy = 25e-12;       ///< per word (100 pJ per 4-word access)
  double lane_op_energy = 2.2e-12;  ///< vector lane, per element-operation

  double glb_words_per_cycle = 2048;  ///< all per-core SRAMs ↔ GLB, shared, reads and writes each
  double double_buffering = 1;        ///< β: tiles at SRAM and GLB take β times their size
  SystolicFill systolic_fill = SystolicFill::Once;

  bool operator==(const CostParams&) const = default;
};

/// Bytes of one word of the accelerator template (16-bit elements).
inline constexpr int64_t kWordBytes = 2;

/// Version of the cost model, part of every cache key: bump it when a formula changes.
inline constexpr int kCostModelVersion = 1;

}  // namespace phaze::cost
