#include "hw/system.h"

#include "hw/presets.h"

namespace phaze::hw {

System tpuv4_like_system() {
  const Architecture device = tpuv4_like();
  return System{"tpuv4-like", device, one_tier_network(4294967296.0)};
}

const std::vector<std::string>& system_preset_names() {
  static const std::vector<std::string> names = {"tpuv4-like"};
  return names;
}

std::optional<System> find_system_preset(const std::string& name) {
  if (name == "tpuv4-like" || name == "tpuv4") return tpuv4_like_system();
  return std::nullopt;
}

}  // namespace phaze::hw
