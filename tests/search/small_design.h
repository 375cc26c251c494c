#pragma once

// A design of the co-search tests: the TPUv4-like chip with `cores` tensor and vector cores of `array` PEs
// and lanes each and a 2 MiB buffer, small enough that the tiny models schedule in milliseconds.

#include <cstdint>

#include "hw/enumerate.h"
#include "hw/presets.h"

namespace phaze::search::testing {

inline hw::Design small_design(int64_t cores, int64_t array) {
  hw::Design d;
  d.arch = hw::tpuv4_like();
  d.arch.num_tc = d.arch.num_vc = cores;
  d.arch.tc_width = d.arch.tc_depth = d.arch.vc_width = array;
  d.arch.glb_bytes = 2 << 20;
  d.area_um2 = 1;
  return d;
}

}  // namespace phaze::search::testing
