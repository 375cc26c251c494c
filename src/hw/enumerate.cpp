#include "hw/enumerate.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>

#include "hw/area.h"
#include "util/input_error.h"

namespace phaze::hw {

namespace {

int log2_of(int64_t power_of_two) {
  return std::countr_zero(static_cast<uint64_t>(power_of_two));
}

void check_range(const char* what, const PowerOfTwoRange& r, int64_t lowest, int64_t highest) {
  auto is_power = [](int64_t v) { return v > 0 && std::has_single_bit(static_cast<uint64_t>(v)); };
  if (!is_power(r.min) || !is_power(r.max))
    throw InputError(fmt::format("{} range {}..{}: bounds must be powers of two", what, r.min, r.max));
  if (r.min > r.max) throw InputError(fmt::format("{} range {}..{}: minimum above maximum", what, r.min, r.max));
  if (r.min < lowest || r.max > highest)
    throw InputError(
        fmt::format("{} range {}..{}: must lie within {}..{} (the template)", what, r.min, r.max, lowest, highest));
}

/// The HBM bandwidths of the enumeration, smallest first.
std::vector<double> bandwidths_of(const EnumerationOptions& o) {
  std::vector<double> out = o.hbm_bandwidths.empty() ? std::vector<double>{o.base.hbm_bandwidth} : o.hbm_bandwidths;
  std::sort(out.begin(), out.end());
  return out;
}

/// Walks the kept designs in canonical order;
/// `visit(num_tc, num_vc, width, vc_width, depth, glb_bytes, hbm_bandwidth, area)`.
template <typename Visit>
void walk(const EnumerationOptions& o, Visit&& visit) {
  validate(o);
  const double budget = o.budget_um2 ? *o.budget_um2 : default_area_budget_um2(o.core_overheads);
  const double lower = o.lower_fraction * budget;
  const PowerOfTwoRange vc_range = o.untie_vector_width ? o.vc_width : o.width;
  const std::vector<double> bandwidths = bandwidths_of(o);

  // Per-core SRAM area by log2 of the width·depth product (and by vector width), GLB area by size.
  auto sram_for = [](int64_t bytes) { return kSramAreaUm2[log2_of(std::max<int64_t>(1024, bytes)) - 10]; };

  for (int64_t tc = o.num_tc.max; tc >= o.num_tc.min; tc /= 2) {
    for (int64_t vc = o.num_vc.max; vc >= o.num_vc.min; vc /= 2) {
      const bool exempt = o.single_core_exemption && (tc == 1 || vc == 1);
      const double lo = exempt ? 0.0 : lower;
      for (int64_t w = o.width.max; w >= o.width.min; w /= 2) {
        const int64_t vw_max = o.untie_vector_width ? vc_range.max : w;
        const int64_t vw_min = o.untie_vector_width ? vc_range.min : w;
        for (int64_t vw = vw_max; vw >= vw_min; vw /= 2) {
          const double vc_sram = sram_for(16 * vw);
          for (int64_t d = o.depth.max; d >= o.depth.min; d /= 2) {
            const double tc_sram = sram_for(16 * w * d);
            for (int64_t glb = o.glb_bytes.max; glb >= o.glb_bytes.min; glb /= 2) {
              const double glb_area = kGlbAreaUm2[log2_of(glb) - 21];
              const double area =
                  area_terms(tc, w, d, tc_sram, vc, vw, vc_sram, glb_area, o.core_overheads).total_um2();
              if (area >= lo && area <= budget)
                for (double bandwidth : bandwidths) visit(tc, vc, w, vw, d, glb, bandwidth, area);
            }
          }
        }
      }
    }
  }
}

}  // namespace

double default_area_budget_um2(const CoreOverheads& overheads) {
  static const double plain = area_um2(tpuv4_like());
  return overheads.none() ? plain : area_um2(tpuv4_like(), overheads);
}

void validate(const EnumerationOptions& o) {
  if (o.budget_um2 && !(std::isfinite(*o.budget_um2) && *o.budget_um2 >= 0))
    throw InputError(fmt::format("area budget {} µm² must be a finite number ≥ 0", *o.budget_um2));
  if (!(o.lower_fraction >= 0.0 && o.lower_fraction <= 1.0))
    throw InputError(fmt::format("lower fraction {} must lie in [0, 1]", o.lower_fraction));
  check_range("num_tc", o.num_tc, 1, 4096);
  check_range("num_vc", o.num_vc, 1, 4096);
  check_range("width", o.width, 2, 256);
  check_range("depth", o.depth, 2, 256);
  if (o.untie_vector_width) check_range("vc_width", o.vc_width, 2, 256);
  check_range("GLB bytes", o.glb_bytes, kGlbTableMinBytes, kGlbTableMaxBytes);
  for (const auto& [what, v] : {std::pair("tensor core", o.core_overheads.per_tensor_core_um2),
                                std::pair("vector core", o.core_overheads.per_vector_core_um2)})
    if (!(v >= 0 && v <= kMaxBudgetUm2))
      throw InputError(fmt::format("overhead per {} {} µm² must be a number from 0 to {:g}", what, v, kMaxBudgetUm2));
  // A design's identity holds its bandwidth as whole bytes per second (search/design_point.h).
  std::vector<double> seen;
  for (double b : o.hbm_bandwidths.empty() ? std::vector<double>{o.base.hbm_bandwidth} : o.hbm_bandwidths) {
    if (!(b >= 1 && b <= kMaxHbmBandwidth) || b != std::floor(b))
      throw InputError(
          fmt::format("HBM bandwidth {} bytes/s must be a whole number of bytes/s from 1 to {}", b, kMaxHbmBandwidth));
    if (std::find(seen.begin(), seen.end(), b) != seen.end())
      throw InputError(fmt::format("HBM bandwidth {} bytes/s is given twice", b));
    seen.push_back(b);
  }
}

bool within_budget(const Architecture& arch, double area_um2, double budget_um2, double lower_fraction,
                   bool single_core_exemption) {
  const bool exempt = single_core_exemption && (arch.num_tc == 1 || arch.num_vc == 1);
  const double lo = exempt ? 0.0 : lower_fraction * budget_um2;
  return area_um2 >= lo && area_um2 <= budget_um2;
}

std::vector<Design> enumerate_designs(const EnumerationOptions& o) {
  std::vector<Design> out;
  out.reserve(o.untie_vector_width ? 1 << 18 : 1 << 15);
  Design design;
  design.arch = o.base;
  design.arch.name.clear();
  design.arch.tc_sram_bytes = 0;
  design.arch.vc_sram_bytes = 0;
  walk(o, [&](int64_t tc, int64_t vc, int64_t w, int64_t vw, int64_t d, int64_t glb, double bandwidth, double area) {
    design.arch.num_tc = tc;
    design.arch.num_vc = vc;
    design.arch.tc_width = w;
    design.arch.vc_width = vw;
    design.arch.tc_depth = d;
    design.arch.glb_bytes = glb;
    design.arch.hbm_bandwidth = bandwidth;
    design.area_um2 = area;
    out.push_back(design);
  });
  return out;
}

int64_t count_designs(const EnumerationOptions& o) {
  int64_t count = 0;
  walk(o, [&](int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, double, double) { ++count; });
  return count;
}

int64_t candidate_count(const EnumerationOptions& o) {
  validate(o);
  auto values = [](const PowerOfTwoRange& r) { return int64_t{log2_of(r.max) - log2_of(r.min) + 1}; };
  return values(o.num_tc) * values(o.num_vc) * values(o.width) * values(o.depth) * values(o.glb_bytes) *
         (o.untie_vector_width ? values(o.vc_width) : 1) * static_cast<int64_t>(bandwidths_of(o).size());
}

}  // namespace phaze::hw
