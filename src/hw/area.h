#pragma once

// The exact area model of accelerator.md section 3 (22 nm, µm²):
//
//   area = num_tc · width · depth · A_PE_TC  +  num_tc · A_SRAM(tensor-core SRAM)
//        + num_vc · width_vc · A_PE_VC       +  num_vc · A_SRAM(vector-core SRAM)
//        + A_GLB(GLB)
//
// A_SRAM and A_GLB are tables over powers of two (per-core SRAM 1 KiB … 1 MiB, GLB 2 … 128 MiB); every design
// of the searched space hits table entries. Other sizes (only possible with hand-written architecture files
// that set the SRAM sizes or a GLB that is not a power of two) are priced as follows [our choice]:
//   * at or below the smallest entry: the smallest entry (the smallest macro that is built);
//   * between two entries: linear interpolation in bytes between them;
//   * above the largest entry: the largest entry scaled by size / largest size (several largest macros).
// `sram_size_in_table` / `glb_size_in_table` tell whether a size was an exact table entry.

#include <array>
#include <cstdint>

#include "hw/architecture.h"

namespace phaze::hw {

/// 16-bit integer MAC alone: 3632 µm² (45 nm, 32-bit) × 0.5 × 0.418333.
inline constexpr double kMacAreaUm2 = 759.693333;
/// One 16-bit register-file entry: 0.104 µm² (45 nm, 32-bit) × 0.5 × 0.418333.
inline constexpr double kRegisterEntryAreaUm2 = 0.0217533;
/// Tensor-core PE: MAC + 16-entry register file (the doc's rounded value, used as is).
inline constexpr double kTensorPeAreaUm2 = 760.041386;
/// Vector-core lane: MAC + 6-entry register file.
inline constexpr double kVectorLaneAreaUm2 = 759.823853;

/// Per-core SRAM areas for 1 KiB, 2 KiB, …, 1 MiB (index = log2 of the size in KiB).
inline constexpr std::array<double, 11> kSramAreaUm2 = {6133.98, 8248.43, 12610.5, 22139.9, 38583,  63338.4,
                                                        115579,  204764,  446565,  897890,  1634130};
inline constexpr int64_t kSramTableMinBytes = 1 << 10;
inline constexpr int64_t kSramTableMaxBytes = 1 << 20;

/// Global-buffer areas for 2 MiB, 4 MiB, …, 128 MiB (index = log2 of the size in MiB − 1).
inline constexpr std::array<double, 7> kGlbAreaUm2 = {3338220,  6078640,  11952400, 23745200,
                                                      46750900, 88605700, 175423000};
inline constexpr int64_t kGlbTableMinBytes = 2ll << 20;
inline constexpr int64_t kGlbTableMaxBytes = 128ll << 20;

/// Area of one per-core SRAM of `bytes` bytes (bytes > 0), table entry or the rule in the file comment.
double sram_area_um2(int64_t bytes);
/// Area of a global buffer of `bytes` bytes (bytes > 0).
double glb_area_um2(int64_t bytes);
/// Whether `bytes` is one of the SRAM table sizes (a power of two from 1 KiB to 1 MiB).
bool sram_size_in_table(int64_t bytes);
/// Whether `bytes` is one of the GLB table sizes (a power of two from 2 MiB to 128 MiB).
bool glb_size_in_table(int64_t bytes);

/// Area of each core that the template's terms leave out: its control (instruction sequencing, address
/// generation), its network-on-chip router and its SRAM's ports, in µm² per core [our choice: a setting, 0 by
/// default as in PHAZE's model, for lack of a published figure at this node; accelerator.md 3.2]. With it a chip
/// of many small cores pays for each of them.
struct CoreOverheads {
  double per_tensor_core_um2 = 0;
  double per_vector_core_um2 = 0;
  bool none() const { return per_tensor_core_um2 == 0 && per_vector_core_um2 == 0; }
  bool operator==(const CoreOverheads&) const = default;
};

/// The terms of the area formula, in µm².
struct AreaBreakdown {
  double tc_pes_um2 = 0;          ///< num_tc · width · depth · A_PE_TC
  double tc_srams_um2 = 0;        ///< num_tc · A_SRAM(tensor-core SRAM)
  double vc_lanes_um2 = 0;        ///< num_vc · width_vc · A_PE_VC
  double vc_srams_um2 = 0;        ///< num_vc · A_SRAM(vector-core SRAM)
  double glb_um2 = 0;             ///< A_GLB(GLB)
  double core_overheads_um2 = 0;  ///< num_tc · per tensor core + num_vc · per vector core (CoreOverheads)
  /// The sum, always in the formula's order (so that every caller gets bit-identical totals; the overheads
  /// last, so that without them the total is PHAZE's to the bit).
  double total_um2() const {
    return tc_pes_um2 + tc_srams_um2 + vc_lanes_um2 + vc_srams_um2 + glb_um2 + core_overheads_um2;
  }
};

/// The terms for explicit per-core SRAM areas (what the enumeration uses with table lookups).
inline AreaBreakdown area_terms(int64_t num_tc, int64_t width, int64_t depth, double tc_sram_um2, int64_t num_vc,
                                int64_t vc_width, double vc_sram_um2, double glb_um2,
                                const CoreOverheads& overheads = {}) {
  return AreaBreakdown{static_cast<double>(num_tc * width * depth) * kTensorPeAreaUm2,
                       static_cast<double>(num_tc) * tc_sram_um2,
                       static_cast<double>(num_vc * vc_width) * kVectorLaneAreaUm2,
                       static_cast<double>(num_vc) * vc_sram_um2,
                       glb_um2,
                       static_cast<double>(num_tc) * overheads.per_tensor_core_um2 +
                           static_cast<double>(num_vc) * overheads.per_vector_core_um2};
}

/// Area terms of a design (per-core SRAMs derived unless set explicitly).
AreaBreakdown area_breakdown(const Architecture& arch, const CoreOverheads& overheads = {});
/// Total area of a design in µm².
double area_um2(const Architecture& arch, const CoreOverheads& overheads = {});

}  // namespace phaze::hw
