#include "io/answer_summary.h"

#include <fmt/format.h>

#include <utility>
#include <vector>

#include "util/number_text.h"

namespace phaze::io {

namespace {

using nlohmann::json;

constexpr double kGiB = 1073741824.0;

double number(const json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0;
}

std::string design_line(const json& d) {
  return fmt::format("{} × {}×{} tensor cores, {} × {}-lane vector cores, {} MiB GLB, {} GiB HBM, {:.3f} mm²",
                     d.value("num_tc", 0), d.value("tc_width", 0), d.value("tc_depth", 0), d.value("num_vc", 0),
                     d.value("vc_width", 0), d.value("glb_bytes", int64_t{0}) >> 20,
                     d.value("hbm_bytes", int64_t{0}) >> 30, number(d, "area_um2") / 1e6);
}

std::string gpu_plan_line(const json& p) {
  std::string out = fmt::format("t {}", p.value("tp", 1));
  if (p.value("cp", 1) > 1) out += fmt::format(" · c {}", p.value("cp", 1));
  out += fmt::format(" · p {} · d {}", p.value("pp", 1), p.value("dp", 1));
  if (p.value("ep", 1) > 1) out += fmt::format(" · ep {}", p.value("ep", 1));
  if (p.value("vp", 1) > 1) out += fmt::format(" (v {})", p.value("vp", 1));
  out += fmt::format(", micro-batch {}, recompute {}", p.value("micro_batch", 1), p.value("recompute", "none"));
  if (p.value("zero", 0) > 0) out += fmt::format(", ZeRO-{}", p.value("zero", 0));
  out += ", " + p.value("precision", std::string("bf16"));
  return out;
}

std::string run_lines(const json& r) {
  std::string out = fmt::format("  plan       {}\n", gpu_plan_line(r["plan"]));
  out += fmt::format("  iteration  {:.4f} s, {:.0f} tokens/s per GPU, MFU {:.1f} %\n", number(r, "iteration_time_s"),
                     number(r, "tokens_per_s_per_gpu"), 100 * number(r, "mfu"));
  std::string parts;
  for (const auto& [key, value] : r["breakdown"].items())
    if (value.is_number() && value.get<double>() > 0)
      parts +=
          fmt::format("{}{} {:.4f} s", parts.empty() ? "" : ", ", key.substr(0, key.size() - 2), value.get<double>());
  out += "  breakdown  " + parts + "\n";
  const json& m = r["memory"];
  out += fmt::format("  memory     {:.2f} GiB of {:.2f} GiB: {}\n", number(m, "peak_bytes") / kGiB,
                     number(m, "capacity_bytes") / kGiB, r.value("fits", false) ? "fits" : "does not fit");
  return out;
}

std::string search_summary(const json& a) {
  std::string models;
  for (const json& m : a["models"]) models += (models.empty() ? "" : ", ") + m.value("model", std::string());
  std::string out = fmt::format("co-search of {}: {} devices, global batch {}; {} points, {} rule\n", models,
                                a["settings"].value("devices", 0), a["settings"].value("global_batch", 0),
                                a.value("points", 0), a["search"].value("stop_rule", std::string()));
  const json& best = a["best"];
  if (best.is_null()) return out + "no feasible design\n";
  out += fmt::format("best design: {}\n  micro-batch {}, recomputation {}, {:.6g} samples/s\n",
                     design_line(best["design"]), best.value("micro_batch", 0),
                     best.value("recompute", false) ? "on" : "off", number(best, "average_samples_per_s"));
  for (const json& m : best["models"]) {
    if (!m.value("feasible", false)) continue;
    const json& p = m["plan"];
    out += fmt::format("  {}: {:.6g} samples/s, t = {}, {}, d = {}\n", m.value("model", std::string()),
                       number(m, "samples_per_s"), p.value("tensor_parallel", 0),
                       counted(p.value("pipeline_stages", int64_t{0}), "stage"), p.value("data_parallel", 0));
  }
  out += "baselines:\n";
  for (const auto& [name, b] : a["baselines"].items()) {
    if (!b.is_object() || !b.contains("average_samples_per_s")) continue;
    out += fmt::format("  {}: {:.6g} samples/s; the best design is {:.4g}× as fast\n", name,
                       number(b, "average_samples_per_s"), number(b, "speedup_of_best"));
  }
  out += "top:\n";
  int rank = 0;
  for (const json& p : a["top"])
    out += fmt::format("  {:>3}. {:>12.6g} samples/s  {}\n", ++rank, number(p, "average_samples_per_s"),
                       design_line(p["design"]));
  return out;
}

/// The figures compare prints for an answer of `kind`: (name, value) in order.
std::vector<std::pair<std::string, double>> figures(const json& a, ReportKind kind) {
  std::vector<std::pair<std::string, double>> out;
  if (kind == ReportKind::Search) {
    const json& best = a["best"];
    if (best.is_null()) return out;
    out.emplace_back("samples/s (average)", number(best, "average_samples_per_s"));
    out.emplace_back("chip area, mm²", number(best["design"], "area_um2") / 1e6);
    for (const json& m : best["models"]) {
      out.emplace_back(m.value("model", std::string()) + " samples/s", number(m, "samples_per_s"));
      out.emplace_back(m.value("model", std::string()) + " tokens/J", number(m, "tokens_per_j"));
    }
    return out;
  }
  const json* run = &a;
  if (kind == ReportKind::Plan) {
    if (a["best"].empty()) return out;
    run = &a["best"][0];
  }
  out.emplace_back("iteration, s", number(*run, "iteration_time_s"));
  out.emplace_back("tokens/s per GPU", number(*run, "tokens_per_s_per_gpu"));
  out.emplace_back("MFU", number(*run, "mfu"));
  out.emplace_back("peak memory, GiB", number((*run)["memory"], "peak_bytes") / kGiB);
  for (const auto& [key, value] : (*run)["breakdown"].items())
    if (value.is_number()) out.emplace_back(key.substr(0, key.size() - 2) + ", s", value.get<double>());
  return out;
}

}  // namespace

std::string answer_summary(const json& a, ReportKind kind) {
  switch (kind) {
    case ReportKind::Search: return search_summary(a);
    case ReportKind::Predict:
      return fmt::format("{} on {}\n", a.value("model", std::string()), a.value("system", std::string())) +
             run_lines(a);
    case ReportKind::Plan: {
      std::string out =
          fmt::format("plans of {} on {} GPUs of {}, global batch {}: {} evaluated, {} fit\n",
                      a.value("model", std::string()), a.value("gpus", 0), a.value("system", std::string()),
                      a.value("global_batch", 0), a.value("evaluated", 0), a.value("fitting", 0));
      int rank = 0;
      for (const json& r : a["best"]) out += fmt::format("#{}\n", ++rank) + run_lines(r);
      if (a.contains("no_plan"))
        for (const json& c : a["no_plan"]["constraints"]) out += "  " + c.get<std::string>() + "\n";
      return out;
    }
  }
  return {};
}

std::string answer_comparison(const json& a, const json& b, ReportKind kind, const std::string& name_a,
                              const std::string& name_b) {
  const auto fa = figures(a, kind), fb = figures(b, kind);
  std::string out =
      fmt::format("{:<28} {:>16} {:>16} {:>9}\n", "", name_a.substr(0, 16), name_b.substr(0, 16), "b / a");
  for (const auto& [name, x] : fa) {
    for (const auto& [other, y] : fb) {
      if (other != name) continue;
      const std::string ratio = x != 0 ? fmt::format("{:.4f}", y / x) : "–";
      out += fmt::format("{:<28} {:>16.6g} {:>16.6g} {:>9}\n", name, x, y, ratio);
      break;
    }
  }
  if (fa.empty() || fb.empty()) out += "(an answer without a feasible point or plan: nothing to compare)\n";
  return out;
}

}  // namespace phaze::io
