#include "hw/architecture.h"

#include <algorithm>

namespace phaze::hw {

int64_t tensor_core_sram_bytes(const Architecture& arch) {
  return arch.tc_sram_bytes > 0 ? arch.tc_sram_bytes : std::max<int64_t>(1024, 16 * arch.tc_width * arch.tc_depth);
}

int64_t vector_core_sram_bytes(const Architecture& arch) {
  return arch.vc_sram_bytes > 0 ? arch.vc_sram_bytes : std::max<int64_t>(1024, 16 * arch.vc_width);
}

TensorCoreConfig tensor_cores(const Architecture& arch, bool all_cores) {
  return TensorCoreConfig{
      all_cores ? arch.num_tc : 1, arch.tc_width, arch.tc_depth, tensor_core_sram_bytes(arch), arch.glb_bytes,
      arch.hbm_bandwidth,          arch.clock_hz};
}

VectorCoreConfig vector_cores(const Architecture& arch, bool all_cores) {
  return VectorCoreConfig{all_cores ? arch.num_vc : 1, arch.vc_width, vector_core_sram_bytes(arch), arch.glb_bytes,
                          arch.hbm_bandwidth,          arch.clock_hz};
}

double peak_tensor_macs_per_s(const Architecture& arch) {
  return static_cast<double>(arch.num_tc * arch.tc_width * arch.tc_depth) * arch.clock_hz;
}

double peak_vector_macs_per_s(const Architecture& arch) {
  return static_cast<double>(arch.num_vc * arch.vc_width) * arch.clock_hz;
}

}  // namespace phaze::hw
