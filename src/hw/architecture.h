#pragma once

#include <cstdint>
#include <string>

namespace phaze::hw {

/// One accelerator design of the template (accelerator.md section 1). Sizes in bytes, bandwidths in
/// bytes per second, clock in Hz.
struct Architecture {
  std::string name;                 ///< preset name or file the design came from (empty for enumerated ones)
  int64_t num_tc = 1;               ///< tensor cores
  int64_t tc_width = 128;           ///< PE-array width (columns)
  int64_t tc_depth = 128;           ///< PE-array depth (rows)
  int64_t num_vc = 1;               ///< vector cores
  int64_t vc_width = 128;           ///< lanes per vector core
  int64_t glb_bytes = 128ll << 20;  ///< global buffer shared by all cores
  int64_t tc_sram_bytes = 0;        ///< per-tensor-core SRAM; 0 = derived: max(1 KiB, 16·width·depth)
  int64_t vc_sram_bytes = 0;        ///< per-vector-core SRAM; 0 = derived: max(1 KiB, 16·vc_width)
  int64_t hbm_bytes = 32ll << 30;   ///< HBM capacity
  double hbm_bandwidth = 1.2e12;    ///< bytes/s
  double clock_hz = 1.05e9;

  bool operator==(const Architecture&) const = default;
};

/// Per-core SRAM of a tensor core after the derivation rule (accelerator.md 1.1).
int64_t tensor_core_sram_bytes(const Architecture& arch);
/// Per-core SRAM of a vector core after the derivation rule.
int64_t vector_core_sram_bytes(const Architecture& arch);

/// What a tensor-core estimate depends on: `cores` cores of one design (1 for the single-core estimate,
/// num_tc for the all-cores one).
struct TensorCoreConfig {
  int64_t cores = 1;
  int64_t width = 128;
  int64_t depth = 128;
  int64_t sram_bytes = 256 << 10;  ///< per core
  int64_t glb_bytes = 128ll << 20;
  double hbm_bandwidth = 1.2e12;  ///< bytes/s
  double clock_hz = 1.05e9;
  /// The operands come from and the result goes to the GLB, never HBM (a product inside a fused kernel): the
  /// GLB ↔ HBM level is absent.
  bool on_chip = false;
  bool operator==(const TensorCoreConfig&) const = default;
};

/// What a vector-core estimate depends on.
struct VectorCoreConfig {
  int64_t cores = 1;
  int64_t lanes = 128;
  int64_t sram_bytes = 2 << 10;  ///< per core
  int64_t glb_bytes = 128ll << 20;
  double hbm_bandwidth = 1.2e12;  ///< bytes/s
  double clock_hz = 1.05e9;
  bool operator==(const VectorCoreConfig&) const = default;
};

TensorCoreConfig tensor_cores(const Architecture& arch, bool all_cores);
VectorCoreConfig vector_cores(const Architecture& arch, bool all_cores);

/// Peak multiply-accumulates per second of all tensor cores: num_tc · width · depth · clock.
double peak_tensor_macs_per_s(const Architecture& arch);
/// Peak lane operations (one MAC each) per second of all vector cores: num_vc · vc_width · clock.
double peak_vector_macs_per_s(const Architecture& arch);

}  // namespace phaze::hw
