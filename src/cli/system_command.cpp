#include "cli/system_command.h"

#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/text_format.h"
#include "hw/system_json.h"

namespace phaze::cli {

namespace {

using namespace phaze::hw;

/// Bandwidth in GiB/s, e.g. "4 GiB/s".
std::string rate_text(double bytes_per_s) {
  const double gib = bytes_per_s / 1073741824.0;
  return fmt::format("{:.10g} GiB/s", gib);
}

std::string device_text(const Architecture& a) {
  return fmt::format("{}: {} × {}×{} tensor cores, {} × {} vector lanes, {} GLB, {} HBM", a.name, a.num_tc, a.tc_width,
                     a.tc_depth, a.num_vc, a.vc_width, human_bytes(a.glb_bytes), human_bytes(a.hbm_bytes));
}

std::string device_text(const Gpu& g) {
  return fmt::format("{}: GPU, {} SMs, {:.4g} TFLOP/s dense FP16 tensor, {} HBM at {:.4g} GB/s, {} L2", g.name, g.sms,
                     peak_tensor_flop_per_s(g) / 1e12, human_bytes(g.hbm_bytes), g.hbm_bandwidth / 1e9,
                     human_bytes(g.l2_bytes));
}

void list_systems(bool json) {
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& name : system_preset_names()) out.push_back(to_json(*find_system_preset(name)));
    std::cout << out.dump(2) << "\n";
    return;
  }
  fmt::print("{:<14} {:<16} {}\n", "preset", "device", "network (innermost tier first)");
  for (const auto& name : system_preset_names()) {
    const System s = *find_system_preset(name);
    std::string tiers;
    for (const NetworkTier& t : s.network.tiers)
      tiers += fmt::format("{}{} ({}, {})", tiers.empty() ? "" : " / ", t.name, tier_members_text(t),
                           rate_text(t.bandwidth));
    fmt::print("{:<14} {:<16} {}\n", name, device_name(s.device), tiers);
  }
}

void show_system(const std::string& which, bool json) {
  const System s = load_system(which);
  if (json) {
    std::cout << to_json(s).dump(2) << "\n";
    return;
  }
  fmt::print("{}\n", s.name);
  fmt::print("  device          {}\n", std::visit([](const auto& d) { return device_text(d); }, s.device));
  fmt::print("  network         {} tier{}, innermost first\n", s.network.tiers.size(),
             s.network.tiers.size() == 1 ? "" : "s");
  for (const NetworkTier& t : s.network.tiers)
    fmt::print("    {:<14} {:<16} {:>16} ({:.10g} B/s{})  latency {:.6g} s{}  efficiency {:.6g}\n", t.name,
               tier_members_text(t), rate_text(t.bandwidth), t.bandwidth, t.torus ? " per link each way" : "",
               t.latency_s, t.torus ? " per hop" : "", t.efficiency);
}

}  // namespace

void add_system_command(CLI::App& app) {
  CLI::App* system = app.add_subcommand("system", "Systems: a device and the network tiers that join the devices");
  system->require_subcommand(1);

  auto list_json = std::make_shared<bool>(false);
  CLI::App* list = system->add_subcommand("list", "List the built-in system presets");
  list->add_flag("--json", *list_json, "Print JSON");
  list->callback([list_json] { list_systems(*list_json); });

  auto which = std::make_shared<std::string>();
  auto show_json = std::make_shared<bool>(false);
  CLI::App* show = system->add_subcommand("show", "Show a system: its device and every tier of its network");
  show->add_option("system", *which, "Preset name (see 'phaze system list') or path to a system JSON")->required();
  show->add_flag("--json", *show_json, "Print JSON");
  show->callback([which, show_json] { show_system(*which, *show_json); });
}

}  // namespace phaze::cli
