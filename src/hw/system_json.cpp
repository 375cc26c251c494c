#include "hw/system_json.h"

#include <fmt/format.h>

#include <filesystem>

#include "hw/architecture_json.h"
#include "hw/gpu_json.h"
#include "util/input_error.h"
#include "util/json_fields.h"
#include "util/json_input.h"
#include "util/read_file.h"

namespace phaze::hw {

namespace {

using nlohmann::json;

Torus torus_from_json(const json& j, const std::string& source);

NetworkTier tier_from_json(const json& j, const std::string& source) {
  const JsonFields f(j, source);
  f.only({"name", "members", "bandwidth", "latency_s", "efficiency", "torus"});
  if (!f.has("name")) throw InputError(fmt::format("{}: missing required key 'name'", source));
  if (!f.has("bandwidth")) throw InputError(fmt::format("{}: missing required key 'bandwidth'", source));
  if (!f.has("members")) throw InputError(fmt::format("{}: missing required key 'members'", source));
  NetworkTier t;
  t.name = f.text("name", "");
  t.members = f.integer_in("members", 0, 0, network_limits::kMembers);
  t.bandwidth = f.number_in("bandwidth", 0, 0, network_limits::kBandwidth, true);
  t.latency_s = f.number_in("latency_s", 0, 0, network_limits::kLatencyS, false);
  t.efficiency = f.number_in("efficiency", 1, 0, 1, true);
  if (f.has("torus")) t.torus = torus_from_json(j.at("torus"), source + ": torus");
  return t;
}

TorusDims torus_dims_from_json(const json& j, const std::string& source, int64_t least) {
  if (!j.is_array() || j.size() != 3)
    throw InputError(fmt::format("{} = {} must be three device counts [x, y, z]", source, j.dump()));
  TorusDims d{};
  for (size_t a = 0; a < 3; ++a) {
    if (!j[a].is_number_integer() || j[a].get<int64_t>() < least || j[a].get<int64_t>() > network_limits::kTorusAxis)
      throw InputError(fmt::format("{}[{}] = {} must be an integer in [{}, {}]", source, a, j[a].dump(), least,
                                   network_limits::kTorusAxis));
    d[a] = j[a].get<int64_t>();
  }
  return d;
}

Torus torus_from_json(const json& j, const std::string& source) {
  const JsonFields f(j, source);
  f.only({"cube", "pod", "slice"});
  if (!f.has("cube")) throw InputError(fmt::format("{}: missing required key 'cube'", source));
  if (!f.has("pod")) throw InputError(fmt::format("{}: missing required key 'pod'", source));
  Torus t;
  t.cube = torus_dims_from_json(j.at("cube"), source + ".cube", 1);
  t.pod = torus_dims_from_json(j.at("pod"), source + ".pod", 1);
  if (f.has("slice")) t.slice = torus_dims_from_json(j.at("slice"), source + ".slice", 1);
  return t;
}

/// The device entry: a GPU or architecture preset, a file next to the system file, or an inline object (a GPU
/// when it has "kind": "gpu", an architecture otherwise).
Device device_from_json(const json& j, const std::string& source) {
  const std::string where = source + ": device";
  if (is_gpu_json(j)) return gpu_from_json(j, where);
  if (j.is_object()) return architecture_from_json(j, where);
  if (!j.is_string())
    throw InputError(fmt::format("{} = {} must be a preset name, a file or an object", where, j.dump()));
  const std::string name = j.get<std::string>();
  if (auto gpu = find_gpu_preset(name)) return *gpu;
  const std::filesystem::path relative = std::filesystem::path(source).parent_path() / name;
  std::error_code ec;
  try {
    if (std::filesystem::path(name).is_relative() && std::filesystem::exists(relative, ec)) {
      const json file = parse_json_input(read_text_file(relative.string()), relative.string());
      if (is_gpu_json(file)) return gpu_from_json(file, relative.string());
      return architecture_from_json(file, relative.string());
    }
    return load_architecture(name);
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}", where, e.what()));
  }
}

}  // namespace

System system_from_json(const json& j, const std::string& source) {
  const JsonFields f(j, source);
  f.only({"name", "device", "network"});
  if (!f.has("device")) throw InputError(fmt::format("{}: missing required key 'device'", source));
  if (!f.has("network")) throw InputError(fmt::format("{}: missing required key 'network'", source));
  System s;
  s.name = f.text("name", source);
  s.device = device_from_json(j.at("device"), source);
  if (!j.at("network").is_array()) throw f.bad("network", "an array of tiers");
  s.network = network_from_json(j.at("network"), source + ": network");
  return s;
}

Network network_from_json(const json& tiers, const std::string& source) {
  if (!tiers.is_array()) throw InputError(fmt::format("{} = {} must be an array of tiers", source, tiers.dump()));
  if (static_cast<int64_t>(tiers.size()) > network_limits::kTiers)
    throw InputError(
        fmt::format("{}: a network has 1 to {} tiers, got {}", source, network_limits::kTiers, tiers.size()));
  Network network;
  for (size_t k = 0; k < tiers.size(); ++k)
    network.tiers.push_back(tier_from_json(tiers[k], fmt::format("{}[{}]", source, k)));
  validate(network, source);
  return network;
}

System read_system_file(const std::string& path) {
  return system_from_json(parse_json_input(read_text_file(path), path), path);
}

System load_system(const std::string& preset_or_path) {
  if (auto preset = find_system_preset(preset_or_path)) return *preset;
  std::error_code ec;
  if (std::filesystem::exists(preset_or_path, ec)) return read_system_file(preset_or_path);
  throw InputError(fmt::format("system '{}': no such preset or file (see 'phaze system list')", preset_or_path));
}

json to_json(const Network& network) {
  json tiers = json::array();
  for (const NetworkTier& t : network.tiers) {
    json tier{{"name", t.name},
              {"members", t.members},
              {"bandwidth", t.bandwidth},
              {"latency_s", t.latency_s},
              {"efficiency", t.efficiency}};
    if (t.torus) tier["torus"] = to_json(*t.torus);
    tiers.push_back(tier);
  }
  return tiers;
}

json to_json(const Torus& torus) {
  json out{{"cube", torus.cube}, {"pod", torus.pod}};
  if (torus.slice != TorusDims{}) out["slice"] = torus.slice;
  return out;
}

json to_json(const System& system) {
  const json device = std::visit([](const auto& d) { return to_json(d); }, system.device);
  return json{{"name", system.name}, {"device", device}, {"network", to_json(system.network)}};
}

}  // namespace phaze::hw
