#include "hw/gpu_json.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "util/input_error.h"
#include "util/json_fields.h"

namespace phaze::hw {

using nlohmann::json;

bool is_gpu_json(const json& j) {
  return j.is_object() && j.contains("kind") && j.at("kind") == "gpu";
}

Gpu gpu_from_json(const json& j, const std::string& source) {
  const JsonFields f(j, source);
  f.only({"kind",
          "base",
          "name",
          "sms",
          "tensor_flop_per_clock_per_sm",
          "tensor_clock_hz",
          "fp8_flop_per_clock_per_sm",
          "hbm_bytes",
          "hbm_gib",
          "hbm_bandwidth",
          "l2_bytes",
          "shared_memory_per_sm_bytes",
          "runtime_memory_bytes",
          "communicator_memory_bytes",
          "allocator_overhead",
          "tensor_efficiency",
          "fp8_tensor_efficiency",
          "fp8_needs_transpose",
          "sustained_clock_share",
          "memory_efficiency",
          "kernel_launch_s",
          "tile_overhead_s",
          "attention_forward_efficiency",
          "attention_backward_efficiency",
          "flash2_attention_forward_efficiency",
          "flash2_attention_backward_efficiency",
          "peak_tensor_flop_per_s",
          "generation",
          "software_fitted_on"});
  if (f.text("kind", "") != "gpu") throw f.bad("kind", "\"gpu\"");
  const std::string base_name = f.text("base", "a100-80gb");
  const std::optional<Gpu> base = find_gpu_preset(base_name);
  if (!base)
    throw InputError(fmt::format("{}: base = \"{}\" is not a GPU preset ({})", source, base_name,
                                 fmt::join(gpu_preset_names(), ", ")));
  Gpu g = *base;
  g.name = f.text("name", source);
  g.sms = f.integer_in("sms", g.sms, 1, gpu_limits::kSms);
  g.tensor_flop_per_clock_per_sm =
      f.number_in("tensor_flop_per_clock_per_sm", g.tensor_flop_per_clock_per_sm, 0, gpu_limits::kFlopPerClock, true);
  g.tensor_clock_hz = f.number_in("tensor_clock_hz", g.tensor_clock_hz, 0, gpu_limits::kClockHz, true);
  g.fp8_flop_per_clock_per_sm =
      f.number_in("fp8_flop_per_clock_per_sm", g.fp8_flop_per_clock_per_sm, 0, gpu_limits::kFlopPerClock, false);
  g.hbm_bytes = f.bytes_or_units("hbm_bytes", "hbm_gib", int64_t{1} << 30, g.hbm_bytes, false, gpu_limits::kBytes);
  g.hbm_bandwidth = f.number_in("hbm_bandwidth", g.hbm_bandwidth, 0, gpu_limits::kBandwidth, true);
  g.l2_bytes = f.bytes("l2_bytes", g.l2_bytes, false, gpu_limits::kBytes);
  g.shared_memory_per_sm_bytes =
      f.bytes("shared_memory_per_sm_bytes", g.shared_memory_per_sm_bytes, false, gpu_limits::kBytes);
  g.runtime_memory_bytes = f.bytes("runtime_memory_bytes", g.runtime_memory_bytes, true, gpu_limits::kBytes);
  g.communicator_memory_bytes =
      f.bytes("communicator_memory_bytes", g.communicator_memory_bytes, true, gpu_limits::kBytes);
  g.allocator_overhead = f.number_in("allocator_overhead", g.allocator_overhead, 0, 1, false);
  g.tensor_efficiency = f.number_in("tensor_efficiency", g.tensor_efficiency, 0, 1, true);
  g.fp8_tensor_efficiency = f.number_in("fp8_tensor_efficiency", g.fp8_tensor_efficiency, 0, 1, true);
  g.fp8_needs_transpose = f.flag("fp8_needs_transpose", g.fp8_needs_transpose);
  g.sustained_clock_share = f.number_in("sustained_clock_share", g.sustained_clock_share, 0, 1, true);
  g.memory_efficiency = f.number_in("memory_efficiency", g.memory_efficiency, 0, 1, true);
  g.kernel_launch_s = f.number_in("kernel_launch_s", g.kernel_launch_s, 0, gpu_limits::kLaunchS, false);
  g.tile_overhead_s = f.number_in("tile_overhead_s", g.tile_overhead_s, 0, gpu_limits::kLaunchS, false);
  g.attention_forward_efficiency =
      f.number_in("attention_forward_efficiency", g.attention_forward_efficiency, 0, 1, true);
  g.attention_backward_efficiency =
      f.number_in("attention_backward_efficiency", g.attention_backward_efficiency, 0, 1, true);
  g.flash2_attention_forward_efficiency =
      f.number_in("flash2_attention_forward_efficiency", g.flash2_attention_forward_efficiency, 0, 1, true);
  g.flash2_attention_backward_efficiency =
      f.number_in("flash2_attention_backward_efficiency", g.flash2_attention_backward_efficiency, 0, 1, true);
  g.generation = f.text("generation", g.generation);
  // Software figures of the file's own are fitted on nothing phaze knows, unless the file says.
  bool own_software = false;
  for (const char* key :
       {"tensor_efficiency", "fp8_tensor_efficiency", "sustained_clock_share", "memory_efficiency", "kernel_launch_s",
        "tile_overhead_s", "attention_forward_efficiency", "attention_backward_efficiency",
        "flash2_attention_forward_efficiency", "flash2_attention_backward_efficiency"})
    own_software = own_software || j.contains(key);
  g.software_fitted_on = f.text("software_fitted_on", own_software ? "" : g.software_fitted_on);
  validate(g, source);
  return g;
}

json to_json(const Gpu& g) {
  return json{{"kind", "gpu"},
              {"name", g.name},
              {"sms", g.sms},
              {"tensor_flop_per_clock_per_sm", g.tensor_flop_per_clock_per_sm},
              {"tensor_clock_hz", g.tensor_clock_hz},
              {"peak_tensor_flop_per_s", peak_tensor_flop_per_s(g)},
              {"fp8_flop_per_clock_per_sm", g.fp8_flop_per_clock_per_sm},
              {"hbm_bytes", g.hbm_bytes},
              {"hbm_bandwidth", g.hbm_bandwidth},
              {"l2_bytes", g.l2_bytes},
              {"shared_memory_per_sm_bytes", g.shared_memory_per_sm_bytes},
              {"runtime_memory_bytes", g.runtime_memory_bytes},
              {"communicator_memory_bytes", g.communicator_memory_bytes},
              {"allocator_overhead", g.allocator_overhead},
              {"tensor_efficiency", g.tensor_efficiency},
              {"fp8_tensor_efficiency", g.fp8_tensor_efficiency},
              {"sustained_clock_share", g.sustained_clock_share},
              {"fp8_needs_transpose", g.fp8_needs_transpose},
              {"memory_efficiency", g.memory_efficiency},
              {"kernel_launch_s", g.kernel_launch_s},
              {"tile_overhead_s", g.tile_overhead_s},
              {"attention_forward_efficiency", g.attention_forward_efficiency},
              {"attention_backward_efficiency", g.attention_backward_efficiency},
              {"flash2_attention_forward_efficiency", g.flash2_attention_forward_efficiency},
              {"flash2_attention_backward_efficiency", g.flash2_attention_backward_efficiency},
              {"generation", g.generation},
              {"software_fitted_on", g.software_fitted_on}};
}

}  // namespace phaze::hw
