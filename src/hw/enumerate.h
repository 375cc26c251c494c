#pragma once

// Enumeration of the searched design space under an area budget (accelerator.md section 2, method.md
// sections 3 and 5).
//
// Canonical order, outermost loop first, every loop from the largest value down:
//   num_tc (4096 … 1), num_vc (4096 … 1), width (256 … 2), [vc_width (256 … 2), only when untied,]
//   depth (256 … 2), GLB (128 … 2 MiB), HBM bandwidth (the values searched, smallest first); with the tied
//   default vc_width = width.
// A candidate is kept iff lo · budget ≤ area ≤ budget (both inclusive), lo = lower_fraction, except lo = 0
// when num_tc = 1 or num_vc = 1 (single-core exemption). With the defaults this keeps 29,360 designs.

#include <cstdint>
#include <optional>
#include <vector>

#include "hw/architecture.h"
#include "hw/area.h"
#include "hw/presets.h"

namespace phaze::hw {

/// Inclusive range of powers of two, in the dimension's unit (cores, PEs / lanes, bytes).
struct PowerOfTwoRange {
  int64_t min = 1;
  int64_t max = 1;
  bool operator==(const PowerOfTwoRange&) const = default;
};

/// Largest area budget accepted, µm² (1 m²: a thousand times a reticle; docs/limits.md).
inline constexpr double kMaxBudgetUm2 = 1e12;
/// Largest HBM bandwidth searched, bytes/s (2^53: whole numbers stay exact in a double; 9 PB/s).
inline constexpr double kMaxHbmBandwidth = 9007199254740992.0;

struct EnumerationOptions {
  /// Upper area bound in µm²; nothing = the area of the tpuv4-like preset (278,826,676.31216 µm²).
  std::optional<double> budget_um2;
  /// lo of the lower bound lo · budget, in [0, 1].
  double lower_fraction = 0.3;
  /// lo = 0 when num_tc = 1 or num_vc = 1.
  bool single_core_exemption = true;
  /// Enumerate vc_width independently of the tensor-core width (an extra loop just inside width).
  bool untie_vector_width = false;
  PowerOfTwoRange num_tc{1, 4096};
  PowerOfTwoRange num_vc{1, 4096};
  PowerOfTwoRange width{2, 256};
  PowerOfTwoRange depth{2, 256};
  PowerOfTwoRange vc_width{2, 256};  ///< only used with untie_vector_width
  PowerOfTwoRange glb_bytes{2ll << 20, 128ll << 20};
  /// HBM bandwidths searched, bytes/s (whole numbers): each chip of the loops above once per value, smallest
  /// first. Empty: the base's alone.
  std::vector<double> hbm_bandwidths;
  /// Per-core area the template's terms leave out (hw/area.h), in every area: the designs', and the default
  /// budget's (the tpuv4-like chip's with them).
  CoreOverheads core_overheads;
  /// HBM capacity and bandwidth and clock of every enumerated design come from here.
  Architecture base = tpuv4_like();
};

/// One kept design with its area.
struct Design {
  Architecture arch;  ///< name empty, per-core SRAMs derived (0)
  double area_um2 = 0;
};

/// The default budget: area of the tpuv4-like preset (with the per-core overheads given).
double default_area_budget_um2(const CoreOverheads& overheads = {});

/// Throws InputError for a negative or non-finite budget, a lower fraction outside [0, 1], or a range whose
/// bounds are not powers of two, are out of order, or leave the template (num_tc, num_vc 1 … 4096; widths and
/// depth 2 … 256; GLB 2 … 128 MiB).
void validate(const EnumerationOptions& options);

/// Whether a design of that area is kept under the budget rule.
bool within_budget(const Architecture& arch, double area_um2, double budget_um2, double lower_fraction,
                   bool single_core_exemption = true);

/// The kept designs in canonical order (validates the options first).
std::vector<Design> enumerate_designs(const EnumerationOptions& options = {});
/// How many designs `enumerate_designs` would return, without building them.
int64_t count_designs(const EnumerationOptions& options = {});
/// Candidates before the area filter (75,712 with the defaults).
int64_t candidate_count(const EnumerationOptions& options = {});

}  // namespace phaze::hw
