#include "hw/architecture_json.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "hw/area.h"
#include "hw/presets.h"
#include "util/input_error.h"
#include "util/json_fields.h"
#include "util/json_input.h"
#include "util/read_file.h"

namespace phaze::hw {

namespace {

using nlohmann::json;

constexpr int64_t kMaxCount = int64_t{1} << 16;  ///< cores, PE-array sides, lanes
constexpr int64_t kMaxBytes = int64_t{1} << 50;  ///< any memory size (1 PiB)

}  // namespace

Architecture architecture_from_json(const json& j, const std::string& source) {
  const JsonFields r(j, source);
  const Architecture defaults = tpuv4_like();
  Architecture a;
  a.name = r.text("name", source);
  a.num_tc = r.count("num_tc", kMaxCount);
  a.tc_width = r.count("tc_width", kMaxCount);
  a.tc_depth = r.count("tc_depth", kMaxCount);
  a.num_vc = r.count("num_vc", kMaxCount);
  a.vc_width = r.count("vc_width", kMaxCount);
  a.glb_bytes = r.bytes_or_units("glb_bytes", "glb_mib", int64_t{1} << 20, defaults.glb_bytes, true, kMaxBytes);
  a.tc_sram_bytes = r.bytes("tc_sram_bytes", defaults.tc_sram_bytes, true, kMaxBytes);
  a.vc_sram_bytes = r.bytes("vc_sram_bytes", defaults.vc_sram_bytes, true, kMaxBytes);
  a.hbm_bytes = r.bytes_or_units("hbm_bytes", "hbm_gib", int64_t{1} << 30, defaults.hbm_bytes, false, kMaxBytes);
  a.hbm_bandwidth = r.rate("hbm_bandwidth", defaults.hbm_bandwidth);
  a.clock_hz = r.rate("clock_hz", defaults.clock_hz);
  if (r.has("link_bandwidth"))
    throw r.bad("link_bandwidth", "given in a system's network, not in the device (see 'phaze system show')");
  return a;
}

Architecture parse_architecture(const std::string& text, const std::string& source) {
  return architecture_from_json(parse_json_input(text, source), source);
}

Architecture read_architecture_file(const std::string& path) {
  return parse_architecture(read_text_file(path), path);
}

Architecture load_architecture(const std::string& preset_or_path) {
  if (auto preset = find_preset(preset_or_path)) return *preset;
  std::error_code ec;
  // An existing path that is not a regular file (a directory, /dev/zero, a FIFO) is refused by the reader.
  if (std::filesystem::exists(preset_or_path, ec)) return read_architecture_file(preset_or_path);
  throw InputError(fmt::format("architecture '{}': no such preset or file (see 'phaze arch list')", preset_or_path));
}

nlohmann::ordered_json architecture_file_json(const Architecture& a) {
  return nlohmann::ordered_json{{"name", a.name},
                                {"num_tc", a.num_tc},
                                {"tc_width", a.tc_width},
                                {"tc_depth", a.tc_depth},
                                {"num_vc", a.num_vc},
                                {"vc_width", a.vc_width},
                                {"glb_bytes", a.glb_bytes},
                                {"tc_sram_bytes", a.tc_sram_bytes},
                                {"vc_sram_bytes", a.vc_sram_bytes},
                                {"hbm_bytes", a.hbm_bytes},
                                {"hbm_bandwidth", a.hbm_bandwidth},
                                {"clock_hz", a.clock_hz}};
}

json to_json(const Architecture& a) {
  const AreaBreakdown area = area_breakdown(a);
  const int64_t tc_sram = tensor_core_sram_bytes(a);
  const int64_t vc_sram = vector_core_sram_bytes(a);
  json out = json::parse(architecture_file_json(a).dump());
  // The effective SRAM sizes, and whether they were derived.
  out["tc_sram_bytes"] = tc_sram;
  out["vc_sram_bytes"] = vc_sram;
  out["tc_sram_derived"] = a.tc_sram_bytes == 0;
  out["vc_sram_derived"] = a.vc_sram_bytes == 0;
  out["area_um2"] = area.total_um2();
  out["area_breakdown_um2"] = {{"tensor_core_pes", area.tc_pes_um2},
                               {"tensor_core_srams", area.tc_srams_um2},
                               {"vector_core_lanes", area.vc_lanes_um2},
                               {"vector_core_srams", area.vc_srams_um2},
                               {"glb", area.glb_um2}};
  out["area_from_tables"] =
      sram_size_in_table(tc_sram) && sram_size_in_table(vc_sram) && glb_size_in_table(a.glb_bytes);
  out["peak_tensor_macs_per_s"] = peak_tensor_macs_per_s(a);
  out["peak_vector_macs_per_s"] = peak_vector_macs_per_s(a);
  return out;
}

}  // namespace phaze::hw
