// A system file (--system FILE): parse (an accelerator or a GPU device and the network tiers), then the
// JSON round trip gives the same system.
#include <cstdlib>

#include "fuzz_input.h"
#include "hw/system_json.h"
#include "util/input_error.h"
#include "util/json_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace phaze;
  try {
    const hw::System system = hw::system_from_json(parse_json_input(fuzz::as_text(data, size), "sys.json"), "sys.json");
    const hw::System again = hw::system_from_json(hw::to_json(system), "round trip");
    if (hw::device_name(again.device) != hw::device_name(system.device)) std::abort();
    if (again.network != system.network) std::abort();
    if (again.device.index() != system.device.index()) std::abort();
  } catch (const InputError&) {
  }
  return 0;
}
