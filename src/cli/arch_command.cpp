#include "cli/arch_command.h"

#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/option_values.h"
#include "cli/text_format.h"
#include "hw/architecture_json.h"
#include "hw/area.h"
#include "hw/enumerate.h"
#include "hw/presets.h"
#include "util/input_error.h"

namespace phaze::cli {

namespace {

using namespace phaze::hw;

/// 278826676.31216 → "278,826,676.31216" (`decimals` digits, trailing zeros dropped).
std::string group_fixed(double value, int decimals) {
  std::string text = fmt::format("{:.{}f}", std::fabs(value), decimals);
  const size_t dot = text.find('.');
  std::string fraction = dot == std::string::npos ? "" : text.substr(dot + 1);
  while (!fraction.empty() && fraction.back() == '0') fraction.pop_back();
  const std::string whole = text.substr(0, dot);
  std::string out;
  for (size_t i = 0; i < whole.size(); ++i) {
    if (i > 0 && (whole.size() - i) % 3 == 0) out += ',';
    out += whole[i];
  }
  if (!fraction.empty()) out += "." + fraction;
  return value < 0 ? "-" + out : out;
}

void list_architectures(bool json) {
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& name : preset_names()) out.push_back(to_json(*find_preset(name)));
    std::cout << out.dump(2) << "\n";
    return;
  }
  fmt::print("{:<16} {:>14} {:>12} {:>9} {:>8} {:>22}\n", "preset", "tensor cores", "vector cores", "GLB", "HBM",
             "area (µm²)");
  for (const auto& name : preset_names()) {
    const Architecture a = *find_preset(name);
    fmt::print("{:<16} {:>14} {:>12} {:>9} {:>8} {:>22}\n", name,
               fmt::format("{} × {}×{}", a.num_tc, a.tc_width, a.tc_depth),
               fmt::format("{} × {}", a.num_vc, a.vc_width), human_bytes(a.glb_bytes), human_bytes(a.hbm_bytes),
               group_fixed(area_um2(a), 6));
  }
}

void show_architecture(const std::string& which, bool json) {
  const Architecture a = load_architecture(which);
  if (json) {
    std::cout << to_json(a).dump(2) << "\n";
    return;
  }
  const AreaBreakdown area = area_breakdown(a);
  const double total = area.total_um2();
  const int64_t tc_sram = tensor_core_sram_bytes(a);
  const int64_t vc_sram = vector_core_sram_bytes(a);
  fmt::print("{}\n", a.name);
  fmt::print("  tensor cores    {} × {}×{} PEs, {} SRAM each{}\n", a.num_tc, a.tc_width, a.tc_depth,
             human_bytes(tc_sram), a.tc_sram_bytes == 0 ? " (derived)" : "");
  fmt::print("  vector cores    {} × {} lanes, {} SRAM each{}\n", a.num_vc, a.vc_width, human_bytes(vc_sram),
             a.vc_sram_bytes == 0 ? " (derived)" : "");
  fmt::print("  global buffer   {}\n", human_bytes(a.glb_bytes));
  fmt::print("  HBM             {} at {:.10g} B/s\n", human_bytes(a.hbm_bytes), a.hbm_bandwidth);
  fmt::print("  clock           {:.10g} GHz\n", a.clock_hz / 1e9);
  fmt::print("  peak            {:.6g} tensor MACs/s, {:.6g} vector lane MACs/s\n", peak_tensor_macs_per_s(a),
             peak_vector_macs_per_s(a));
  fmt::print("  area            {} µm²\n", group_fixed(total, 6));
  auto row = [&](const char* what, double um2) {
    fmt::print("    {:<20} {:>24} µm²  {:5.1f} %\n", what, group_fixed(um2, 6), total > 0 ? 100.0 * um2 / total : 0.0);
  };
  row("tensor-core PEs", area.tc_pes_um2);
  row("tensor-core SRAMs", area.tc_srams_um2);
  row("vector-core lanes", area.vc_lanes_um2);
  row("vector-core SRAMs", area.vc_srams_um2);
  row("global buffer", area.glb_um2);
  if (!(sram_size_in_table(tc_sram) && sram_size_in_table(vc_sram) && glb_size_in_table(a.glb_bytes)))
    fmt::print("  (a memory size is not a table entry: priced by interpolation / extrapolation, see src/hw/area.h)\n");
  const double budget = default_area_budget_um2();
  fmt::print("  vs. budget      {:.4f} × the tpuv4-like area\n", total / budget);
}

struct EnumerateOptions {
  std::string budget;  ///< preset or file whose area is the budget
  double budget_um2 = 0;
  double lower_fraction = 0.3;
  bool untie = false;
  bool no_exemption = false;
  bool json = false;
  bool count = false;
};

void enumerate(const EnumerateOptions& o, bool budget_given, bool budget_um2_given) {
  if (budget_um2_given && !(std::isfinite(o.budget_um2) && o.budget_um2 >= 0))
    throw InputError(fmt::format("--budget-um2 = {} must be a finite number ≥ 0", o.budget_um2));
  if (!(o.lower_fraction >= 0 && o.lower_fraction <= 1))
    throw InputError(fmt::format("--lower-fraction = {} must lie in [0, 1]", o.lower_fraction));
  EnumerationOptions options;
  if (budget_given) options.budget_um2 = area_um2(load_architecture(o.budget));
  if (budget_um2_given) options.budget_um2 = o.budget_um2;
  options.lower_fraction = o.lower_fraction;
  options.untie_vector_width = o.untie;
  options.single_core_exemption = !o.no_exemption;
  validate(options);
  const double budget = options.budget_um2 ? *options.budget_um2 : default_area_budget_um2();

  if (o.count) {
    const int64_t n = count_designs(options);
    if (o.json) {
      const nlohmann::json out = {{"count", n},
                                  {"candidates", candidate_count(options)},
                                  {"budget_um2", budget},
                                  {"lower_fraction", options.lower_fraction},
                                  {"single_core_exemption", options.single_core_exemption},
                                  {"untie_vector_width", options.untie_vector_width}};
      std::cout << out.dump(2) << "\n";
    } else {
      std::cout << n << "\n";
    }
    return;
  }

  const std::vector<Design> designs = enumerate_designs(options);
  std::string out;
  out.reserve(designs.size() * 140 + 16);
  if (o.json) {
    out += "[";
    for (size_t i = 0; i < designs.size(); ++i) {
      const Architecture& a = designs[i].arch;
      const nlohmann::json row = {{"index", i},
                                  {"num_tc", a.num_tc},
                                  {"tc_width", a.tc_width},
                                  {"tc_depth", a.tc_depth},
                                  {"num_vc", a.num_vc},
                                  {"vc_width", a.vc_width},
                                  {"glb_bytes", a.glb_bytes},
                                  {"tc_sram_bytes", tensor_core_sram_bytes(a)},
                                  {"vc_sram_bytes", vector_core_sram_bytes(a)},
                                  {"area_um2", designs[i].area_um2}};
      out += i == 0 ? "\n  " : ",\n  ";
      out += row.dump();
    }
    out += designs.empty() ? "]\n" : "\n]\n";
  } else {
    out += fmt::format("# {} of {} candidates with {} ≤ area ≤ {} µm²{}\n",
                       group_digits(static_cast<int64_t>(designs.size())), group_digits(candidate_count(options)),
                       group_fixed(options.lower_fraction * budget, 6), group_fixed(budget, 6),
                       options.single_core_exemption ? " (lower bound 0 when num_tc = 1 or num_vc = 1)" : "");
    out += fmt::format("{:>6} {:>6} {:>6} {:>6} {:>6} {:>8} {:>8} {:>22}\n", "index", "num_tc", "num_vc", "width",
                       "depth", "vc_width", "GLB MiB", "area (µm²)");
    for (size_t i = 0; i < designs.size(); ++i) {
      const Architecture& a = designs[i].arch;
      out += fmt::format("{:>6} {:>6} {:>6} {:>6} {:>6} {:>8} {:>8} {:>22}\n", i, a.num_tc, a.num_vc, a.tc_width,
                         a.tc_depth, a.vc_width, a.glb_bytes >> 20, group_fixed(designs[i].area_um2, 6));
    }
  }
  std::cout << out;
}

}  // namespace

void add_arch_command(CLI::App& app) {
  CLI::App* arch = app.add_subcommand("arch", "Accelerator presets, area model and design-space enumeration");
  arch->require_subcommand(1);

  auto list_json = std::make_shared<bool>(false);
  CLI::App* list = arch->add_subcommand("list", "List the built-in architecture presets");
  list->add_flag("--json", *list_json, "Print JSON");
  list->callback([list_json] { list_architectures(*list_json); });

  auto show_which = std::make_shared<std::string>();
  auto show_json = std::make_shared<bool>(false);
  CLI::App* show = arch->add_subcommand("show", "Show a design: derived SRAMs, area by component, peak MAC rates");
  show->add_option("architecture", *show_which, "Preset name (see 'phaze arch list') or path to an architecture JSON")
      ->required();
  show->add_flag("--json", *show_json, "Print JSON");
  show->callback([show_which, show_json] { show_architecture(*show_which, *show_json); });

  auto o = std::make_shared<EnumerateOptions>();
  CLI::App* en = arch->add_subcommand(
      "enumerate", "List the designs of the searched space within the area budget, in canonical order");
  CLI::Option* budget =
      en->add_option("--budget", o->budget, "Budget = area of this preset or architecture file (default: tpuv4-like)");
  CLI::Option* budget_um2 =
      add_number_option(en, "--budget-um2", o->budget_um2, 0, hw::kMaxBudgetUm2, false, "Budget in µm²");
  budget->excludes(budget_um2);
  budget_um2->excludes(budget);
  add_number_option(en, "--lower-fraction", o->lower_fraction, 0, 1, false,
                    "Keep designs with area ≥ this fraction of the budget (not applied when num_tc = 1 or num_vc = 1)");
  en->add_flag("--no-single-core-exemption", o->no_exemption,
               "Apply the lower bound to num_tc = 1 and num_vc = 1 designs too");
  en->add_flag("--untie-vector-width", o->untie, "Enumerate the vector-core width independently of the PE width");
  en->add_flag("--json", o->json, "Print JSON");
  en->add_flag("--count", o->count, "Print only the number of designs");
  en->callback([o, en] { enumerate(*o, en->count("--budget") > 0, en->count("--budget-um2") > 0); });
}

}  // namespace phaze::cli
