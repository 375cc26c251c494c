// Built-in accelerator designs.

#include "hw/presets.h"

namespace phaze::hw {

Architecture tpuv4_like() {
  Architecture a;
  a.name = "tpuv4-like";
  a.num_tc = 8;
  a.tc_width = 128;
  a.tc_depth = 128;
  a.num_vc = 2;
  a.vc_width = 128;
  a.glb_bytes = 128ll << 20;
  a.tc_sram_bytes = 0;  // derived: 256 KiB
  a.vc_sram_bytes = 0;  // derived: 2 KiB
  a.hbm_bytes = 32ll << 30;
  a.hbm_bandwidth = 1.2e12;
  a.clock_hz = 1.05e9;
  return a;
}

Architecture tpuv4_published() {
  Architecture a = tpuv4_like();
  a.name = "tpuv4-published";
  // Each TensorCore's vector unit: 128 lanes × 8 sublanes with 2 ALUs each, 2,048 element operations per cycle.
  a.vc_width = 2048;
  return a;
}

const std::vector<std::string>& preset_names() {
  static const std::vector<std::string> names = {"tpuv4-like", "tpuv4-published"};
  return names;
}

std::optional<Architecture> find_preset(const std::string& name) {
  if (name == "tpuv4-like" || name == "tpuv4") return tpuv4_like();
  if (name == "tpuv4-published") return tpuv4_published();
  return std::nullopt;
}

}  // namespace phaze::hw
