#include "hw/area.h"

#include <bit>

namespace phaze::hw {

namespace {

/// Table lookup over sizes min_bytes · 2^i with the off-table rule of area.h.
template <size_t N>
double table_area(int64_t bytes, int64_t min_bytes, const std::array<double, N>& table) {
  if (bytes <= min_bytes) return table[0];
  int64_t size = min_bytes;
  for (size_t i = 0; i + 1 < N; ++i, size *= 2) {
    if (bytes == size) return table[i];
    if (bytes < 2 * size) {
      const double t = static_cast<double>(bytes - size) / static_cast<double>(size);
      return table[i] + t * (table[i + 1] - table[i]);
    }
  }
  // `size` is now the largest entry.
  if (bytes == size) return table[N - 1];
  return table[N - 1] * (static_cast<double>(bytes) / static_cast<double>(size));
}

}  // namespace

double sram_area_um2(int64_t bytes) {
  return table_area(bytes, kSramTableMinBytes, kSramAreaUm2);
}

double glb_area_um2(int64_t bytes) {
  return table_area(bytes, kGlbTableMinBytes, kGlbAreaUm2);
}

bool sram_size_in_table(int64_t bytes) {
  return bytes >= kSramTableMinBytes && bytes <= kSramTableMaxBytes &&
         std::has_single_bit(static_cast<uint64_t>(bytes));
}

bool glb_size_in_table(int64_t bytes) {
  return bytes >= kGlbTableMinBytes && bytes <= kGlbTableMaxBytes && std::has_single_bit(static_cast<uint64_t>(bytes));
}

AreaBreakdown area_breakdown(const Architecture& arch, const CoreOverheads& overheads) {
  return area_terms(arch.num_tc, arch.tc_width, arch.tc_depth, sram_area_um2(tensor_core_sram_bytes(arch)), arch.num_vc,
                    arch.vc_width, sram_area_um2(vector_core_sram_bytes(arch)), glb_area_um2(arch.glb_bytes),
                    overheads);
}

double area_um2(const Architecture& arch, const CoreOverheads& overheads) {
  return area_breakdown(arch, overheads).total_um2();
}

}  // namespace phaze::hw
