#pragma once

// An independent re-implementation of the area model of accelerator.md section 3, written from the doc's
// constants for the tests (it shares no code with src/hw/area.*).

#include <algorithm>
#include <cstdint>
#include <map>

namespace hw_test {

/// Per-core SRAM area by size in KiB (accelerator.md section 3).
inline const std::map<int64_t, double>& doc_sram_table() {
  static const std::map<int64_t, double> table = {{1, 6133.98},  {2, 8248.43},  {4, 12610.5},   {8, 22139.9},
                                                  {16, 38583},   {32, 63338.4}, {64, 115579},   {128, 204764},
                                                  {256, 446565}, {512, 897890}, {1024, 1634130}};
  return table;
}

/// Global-buffer area by size in MiB.
inline const std::map<int64_t, double>& doc_glb_table() {
  static const std::map<int64_t, double> table = {{2, 3338220},   {4, 6078640},   {8, 11952400},   {16, 23745200},
                                                  {32, 46750900}, {64, 88605700}, {128, 175423000}};
  return table;
}

constexpr double kDocPeTc = 760.041386;  // MAC + 16-entry register file
constexpr double kDocPeVc = 759.823853;  // MAC + 6-entry register file
constexpr double kDocAmax = 278826676.31216;
constexpr double kDocLowerBound = 83648002.893648;  // 0.3 · A_max

/// area(num_tc, num_vc, width, depth, width_vc, GLB MiB) in µm².
inline double doc_area(int64_t num_tc, int64_t num_vc, int64_t width, int64_t depth, int64_t width_vc,
                       int64_t glb_mib) {
  const int64_t tc_sram_kib = std::max<int64_t>(1024, 16 * width * depth) / 1024;
  const int64_t vc_sram_kib = std::max<int64_t>(1024, 16 * width_vc) / 1024;
  return static_cast<double>(num_tc * width * depth) * kDocPeTc +
         static_cast<double>(num_tc) * doc_sram_table().at(tc_sram_kib) +
         static_cast<double>(num_vc * width_vc) * kDocPeVc +
         static_cast<double>(num_vc) * doc_sram_table().at(vc_sram_kib) + doc_glb_table().at(glb_mib);
}

}  // namespace hw_test
