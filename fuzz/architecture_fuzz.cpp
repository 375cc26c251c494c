// An architecture file (--arch FILE): parse, validate, then its area, peak rates and JSON round trip.
#include <cmath>
#include <cstdlib>

#include "fuzz_input.h"
#include "hw/architecture_json.h"
#include "hw/area.h"
#include "util/input_error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace phaze;
  try {
    const hw::Architecture arch = hw::parse_architecture(fuzz::as_text(data, size), "arch.json");
    const double area = hw::area_um2(arch);
    if (!std::isfinite(area) || area <= 0) std::abort();
    if (!std::isfinite(hw::peak_tensor_macs_per_s(arch)) || !std::isfinite(hw::peak_vector_macs_per_s(arch)))
      std::abort();
    // What phaze writes it reads back as the same design.
    const hw::Architecture again = hw::parse_architecture(hw::to_json(arch).dump(), "round trip");
    if (hw::area_um2(again) != area) std::abort();
  } catch (const InputError&) {
  }
  return 0;
}
