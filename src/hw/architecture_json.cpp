#include "hw/architecture_json.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "hw/area.h"
#include "hw/presets.h"
#include "util/input_error.h"
#include "util/json_input.h"
#include "util/read_file.h"

namespace phaze::hw {

namespace {

using nlohmann::json;

constexpr int64_t kMaxCount = int64_t{1} << 16;  ///< cores, PE-array sides, lanes
constexpr int64_t kMaxBytes = int64_t{1} << 50;  ///< any memory size (1 PiB)

/// Typed access to the keys of one architecture file; every error names the file, the key and the value.
class Reader {
 public:
  Reader(const json& j, std::string source) : j_(j), source_(std::move(source)) {}

  bool has(const char* key) const { return j_.contains(key) && !j_.at(key).is_null(); }

  /// A required positive integer at most `limit`.
  int64_t count(const char* key, int64_t limit) const {
    if (!has(key)) throw InputError(fmt::format("{}: missing required key '{}'", source_, key));
    const int64_t v = integer(key);
    if (v <= 0) throw bad(key, "a positive integer");
    if (v > limit) throw bad(key, fmt::format("at most {}", limit));
    return v;
  }

  /// An optional size in bytes: `fallback` when absent; 0 allowed when `zero_ok`.
  int64_t bytes(const char* key, int64_t fallback, bool zero_ok) const {
    if (!has(key)) return fallback;
    const int64_t v = integer(key);
    if (v < 0 || (v == 0 && !zero_ok)) throw bad(key, zero_ok ? "an integer ≥ 0 (0 = derived)" : "a positive integer");
    if (v > kMaxBytes) throw bad(key, fmt::format("at most {}", kMaxBytes));
    return v;
  }

  /// A size given either in bytes (`bytes_key`) or in `unit`-byte units (`unit_key`, may be fractional as long
  /// as the bytes are whole); `fallback` (or an error when `required`) when neither is there.
  int64_t bytes_or_units(const char* bytes_key, const char* unit_key, int64_t unit, int64_t fallback,
                         bool required) const {
    const bool in_bytes = has(bytes_key);
    const bool in_units = has(unit_key);
    if (in_bytes && in_units)
      throw InputError(fmt::format("{}: give only one of '{}' and '{}'", source_, bytes_key, unit_key));
    if (in_bytes) return bytes(bytes_key, fallback, false);
    if (!in_units) {
      if (required)
        throw InputError(fmt::format("{}: missing required key '{}' (or '{}')", source_, bytes_key, unit_key));
      return fallback;
    }
    const json& v = j_.at(unit_key);
    if (!v.is_number()) throw bad(unit_key, "a number");
    const double b = v.get<double>() * static_cast<double>(unit);
    if (!(b > 0)) throw bad(unit_key, "positive");
    if (b > static_cast<double>(kMaxBytes)) throw bad(unit_key, fmt::format("at most {} bytes", kMaxBytes));
    if (b != std::floor(b)) throw bad(unit_key, "a whole number of bytes");
    return static_cast<int64_t>(b);
  }

  /// An optional rate (bandwidth, clock): a finite number > 0.
  double rate(const char* key, double fallback) const {
    if (!has(key)) return fallback;
    const json& v = j_.at(key);
    if (!v.is_number()) throw bad(key, "a number");
    const double r = v.get<double>();
    if (!(std::isfinite(r) && r > 0)) throw bad(key, "a finite number > 0");
    return r;
  }

  std::string text(const char* key, const std::string& fallback) const {
    if (!has(key)) return fallback;
    const json& v = j_.at(key);
    if (!v.is_string()) throw bad(key, "a string");
    return v.get<std::string>();
  }

 private:
  int64_t integer(const char* key) const {
    const json& v = j_.at(key);
    if (v.is_number_integer()) {
      if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
        throw bad(key, "an integer in range");
      return v.get<int64_t>();
    }
    if (v.is_number_float()) {
      const double d = v.get<double>();
      if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.2e18) return static_cast<int64_t>(d);
    }
    throw bad(key, "an integer");
  }

  InputError bad(const char* key, const std::string& expected) const {
    return InputError(fmt::format("{}: key '{}' = {} must be {}", source_, key, j_.at(key).dump(), expected));
  }

  const json& j_;
  std::string source_;
};

}  // namespace

Architecture architecture_from_json(const json& j, const std::string& source) {
  if (!j.is_object()) throw InputError(fmt::format("{}: expected a JSON object", source));
  const Reader r(j, source);
  const Architecture defaults = tpuv4_like();
  Architecture a;
  a.name = r.text("name", source);
  a.num_tc = r.count("num_tc", kMaxCount);
  a.tc_width = r.count("tc_width", kMaxCount);
  a.tc_depth = r.count("tc_depth", kMaxCount);
  a.num_vc = r.count("num_vc", kMaxCount);
  a.vc_width = r.count("vc_width", kMaxCount);
  a.glb_bytes = r.bytes_or_units("glb_bytes", "glb_mib", int64_t{1} << 20, defaults.glb_bytes, true);
  a.tc_sram_bytes = r.bytes("tc_sram_bytes", defaults.tc_sram_bytes, true);
  a.vc_sram_bytes = r.bytes("vc_sram_bytes", defaults.vc_sram_bytes, true);
  a.hbm_bytes = r.bytes_or_units("hbm_bytes", "hbm_gib", int64_t{1} << 30, defaults.hbm_bytes, false);
  a.hbm_bandwidth = r.rate("hbm_bandwidth", defaults.hbm_bandwidth);
  a.clock_hz = r.rate("clock_hz", defaults.clock_hz);
  a.link_bandwidth = r.rate("link_bandwidth", defaults.link_bandwidth);
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

json to_json(const Architecture& a) {
  const AreaBreakdown area = area_breakdown(a);
  const int64_t tc_sram = tensor_core_sram_bytes(a);
  const int64_t vc_sram = vector_core_sram_bytes(a);
  return json{{"name", a.name},
              {"num_tc", a.num_tc},
              {"tc_width", a.tc_width},
              {"tc_depth", a.tc_depth},
              {"num_vc", a.num_vc},
              {"vc_width", a.vc_width},
              {"glb_bytes", a.glb_bytes},
              {"tc_sram_bytes", tc_sram},
              {"vc_sram_bytes", vc_sram},
              {"tc_sram_derived", a.tc_sram_bytes == 0},
              {"vc_sram_derived", a.vc_sram_bytes == 0},
              {"hbm_bytes", a.hbm_bytes},
              {"hbm_bandwidth", a.hbm_bandwidth},
              {"clock_hz", a.clock_hz},
              {"link_bandwidth", a.link_bandwidth},
              {"area_um2", area.total_um2()},
              {"area_breakdown_um2",
               {{"tensor_core_pes", area.tc_pes_um2},
                {"tensor_core_srams", area.tc_srams_um2},
                {"vector_core_lanes", area.vc_lanes_um2},
                {"vector_core_srams", area.vc_srams_um2},
                {"glb", area.glb_um2}}},
              {"area_from_tables",
               sram_size_in_table(tc_sram) && sram_size_in_table(vc_sram) && glb_size_in_table(a.glb_bytes)},
              {"peak_tensor_macs_per_s", peak_tensor_macs_per_s(a)},
              {"peak_vector_macs_per_s", peak_vector_macs_per_s(a)}};
}

}  // namespace phaze::hw
