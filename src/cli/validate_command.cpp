#include "cli/validate_command.h"

#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "hw/gpu_json.h"
#include "hw/system_json.h"
#include "io/kernel_measurements.h"
#include "io/measured_runs.h"
#include "io/prediction_json.h"
#include "io/published_runs.h"
#include "megatron/kernel_validation.h"
#include "megatron/published_validation.h"
#include "megatron/validation.h"
#include "search/accelerator_prediction.h"
#include "util/input_error.h"
#include "util/number_text.h"
#include "util/output_file.h"

namespace phaze::cli {

namespace {

struct ValidateOptions {
  std::string file;
  std::string system = "vtrain-a100";
  bool system_given = false;
  bool json = false;
  bool fit = false;
  bool kernels = false;
  std::string attention_backend = "cudnn";
  std::string write_system;
};

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

/// --write-system: the fitted system as a file `phaze` reads back.
void write_fitted_system(const ValidateOptions& o, const hw::System& system) {
  if (o.write_system.empty()) return;
  write_text_file(o.write_system, hw::to_json(system).dump(2) + "\n");
}

const char* metric_unit(megatron::PublishedMetric m) {
  switch (m) {
    case megatron::PublishedMetric::TflopsPerGpu: return "TFLOP/s/GPU";
    case megatron::PublishedMetric::IterationSeconds: return "s/iteration";
    case megatron::PublishedMetric::TokensPerSecondPerGpu: return "tokens/s/GPU";
  }
  return "";
}

const char* flop_count_name(megatron::FlopCount c) {
  switch (c) {
    case megatron::FlopCount::Model: return "model";
    case megatron::FlopCount::Hardware: return "hardware";
    case megatron::FlopCount::Narayanan: return "narayanan";
    case megatron::FlopCount::ModelFullAttention: return "model-full-attention";
    case megatron::FlopCount::SixN: return "6n";
  }
  return "";
}

std::string chosen_settings(const megatron::TrainingPlan& p) {
  return fmt::format("t{}{} p{} d{}{} v{} b{} {}", p.tp, p.cp > 1 ? fmt::format(" c{}", p.cp) : "", p.pp, p.dp,
                     p.ep > 1 || p.expert_tp() != p.tp ? fmt::format(" ep{} etp{}", p.ep, p.expert_tp()) : "", p.vp,
                     p.micro_batch, megatron::to_string(p.recompute));
}

void print_published(const std::vector<megatron::PublishedRun>& runs, const megatron::PublishedValidation& v) {
  fmt::print("{:<44} {:<36} {:>12} {:>12} {:>8}  {}\n", "run", "plan (free settings chosen)", "published", "predicted",
             "error", "unit");
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto& r = runs[i];
    const auto& c = v.runs[i];
    fmt::print("{:<44} {:<36} {:>12.4g} {:>12.4g} {:>+7.1f}%  {}{}{}\n", r.label, chosen_settings(c.prediction.plan),
               r.value, c.predicted, c.error * 100, metric_unit(r.metric),
               r.metric == megatron::PublishedMetric::TflopsPerGpu ? ", " : "",
               r.metric == megatron::PublishedMetric::TflopsPerGpu ? flop_count_name(r.flop_count) : "");
  }
  fmt::print("{} priced: mean absolute error {:.2f}%, largest {:.2f}% ({})\n", counted(v.priced, "run"),
             v.mean_abs_error * 100, v.max_abs_error * 100, runs[v.worst].label);
}

nlohmann::json published_json(const std::vector<megatron::PublishedRun>& runs, const megatron::PublishedValidation& v) {
  nlohmann::json rows = nlohmann::json::array();
  for (size_t i = 0; i < runs.size(); ++i) {
    nlohmann::json row{{"label", runs[i].label}, {"published", runs[i].value}, {"unit", metric_unit(runs[i].metric)}};
    row["predicted"] = v.runs[i].predicted;
    row["error"] = v.runs[i].error;
    row["prediction"] = io::to_json(v.runs[i].prediction);
    rows.push_back(row);
  }
  return nlohmann::json{{"runs", rows},
                        {"priced", v.priced},
                        {"mean_abs_error", v.mean_abs_error},
                        {"max_abs_error", v.max_abs_error},
                        {"worst", runs[v.worst].label}};
}

void validate_published(const ValidateOptions& o) {
  auto runs = io::read_published_runs(o.file);
  if (o.fit) {
    const hw::System fitted = megatron::fit_gpu_on_published(runs);
    const hw::Gpu& gpu = hw::gpu_of(fitted);
    std::cerr << fmt::format("fitted on {}: sustained_clock_share {:.2f}\n",
                             counted(static_cast<int64_t>(runs.size()), "run"), gpu.sustained_clock_share);
    for (auto& r : runs)
      if (r.system.name == fitted.name) r.system = fitted;
    write_fitted_system(o, fitted);
  }
  const megatron::PublishedValidation v = megatron::check_published_runs(runs, search::system_pricer());
  if (o.json) {
    std::cout << published_json(runs, v).dump(2) << "\n";
    return;
  }
  print_published(runs, v);
}

void print_text(const std::vector<megatron::MeasuredRun>& runs, const megatron::ValidationSummary& v) {
  fmt::print("{:>5} {:>6} {:>5} {:>5} {:>4} {:>4} {:>4} {:>4} {:>7} {:>13} {:>13} {:>8}\n", "line", "model", "GPUs",
             "h", "L", "t", "d", "p", "mbs/B", "measured ms", "predicted ms", "error");
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto& r = runs[i];
    const auto& p = r.plan;
    fmt::print("{:>5} {:>6} {:>5} {:>5} {:>4} {:>4} {:>4} {:>4} {:>7} {:>13.1f} {:>13.1f} {:>+7.1f}%\n", r.line,
               r.label.empty() ? "-" : r.label, p.gpus(), r.spec.hidden, r.spec.num_layers, p.tp, p.dp, p.pp,
               fmt::format("{}/{}", p.micro_batch, p.global_batch), r.iteration_s * 1e3, v.runs[i].predicted_s * 1e3,
               v.runs[i].error * 100);
  }
  fmt::print("{}: mean absolute error {:.2f}%, largest {:.2f}% (line {})\n",
             counted(static_cast<int64_t>(runs.size()), "run"), v.mean_abs_error * 100, v.max_abs_error * 100,
             runs[v.worst].line);
}

nlohmann::json to_json(const std::vector<megatron::MeasuredRun>& runs, const megatron::ValidationSummary& v) {
  nlohmann::json rows = nlohmann::json::array();
  for (size_t i = 0; i < runs.size(); ++i)
    rows.push_back({{"line", runs[i].line},
                    {"measured_s", runs[i].iteration_s},
                    {"predicted_s", v.runs[i].predicted_s},
                    {"error", v.runs[i].error}});
  return {{"runs", rows},
          {"count", runs.size()},
          {"mean_abs_error", v.mean_abs_error},
          {"max_abs_error", v.max_abs_error},
          {"worst_line", runs[v.worst].line}};
}

std::string kernel_shape(const megatron::KernelMeasurement& k) {
  switch (k.kind) {
    case megatron::KernelKind::Gemm: return fmt::format("{}x{}x{}", k.gemm.m, k.gemm.n, k.gemm.k);
    case megatron::KernelKind::Attention:
      return fmt::format("{}x s{} d{}{}", k.batch_heads, k.seq, k.head_dim, k.causal ? " causal" : "");
    case megatron::KernelKind::Stream: return fmt::format("{:.3g} B", k.bytes);
    case megatron::KernelKind::Launch: break;
  }
  return "";
}

void print_kernels(const std::vector<megatron::KernelMeasurement>& kernels, const megatron::KernelValidation& v) {
  fmt::print("{:>5} {:<34} {:<28} {:>12} {:>12} {:>8}\n", "line", "kernel", "shape", "measured us", "predicted us",
             "error");
  for (size_t i = 0; i < kernels.size(); ++i) {
    if (!v.rows[i]) continue;
    const auto& k = kernels[i];
    fmt::print("{:>5} {:<34} {:<28} {:>12.1f} {:>12.1f} {:>+7.1f}%\n", k.line, k.label, kernel_shape(k),
               k.seconds * 1e6, v.rows[i]->predicted_s * 1e6, v.rows[i]->error * 100);
  }
  for (const auto& c : v.classes)
    fmt::print("{}: {} kernels, mean absolute error {:.2f}%, mean {:+.2f}%, largest {:.2f}% (line {})\n", c.name,
               c.count, c.mean_abs_error * 100, c.mean_error * 100, c.max_abs_error * 100, kernels[c.worst].line);
  fmt::print("{} rows left out (other attention libraries, launch probes, FP8 GEMMs on a GPU without FP8)\n",
             v.left_out);
}

nlohmann::json kernels_json(const std::vector<megatron::KernelMeasurement>& kernels,
                            const megatron::KernelValidation& v) {
  nlohmann::json rows = nlohmann::json::array();
  for (size_t i = 0; i < kernels.size(); ++i)
    if (v.rows[i])
      rows.push_back({{"line", kernels[i].line},
                      {"kernel", kernels[i].label},
                      {"measured_s", kernels[i].seconds},
                      {"predicted_s", v.rows[i]->predicted_s},
                      {"error", v.rows[i]->error}});
  nlohmann::json classes = nlohmann::json::array();
  for (const auto& c : v.classes)
    classes.push_back({{"class", c.name},
                       {"count", c.count},
                       {"mean_abs_error", c.mean_abs_error},
                       {"mean_error", c.mean_error},
                       {"max_abs_error", c.max_abs_error},
                       {"worst_line", kernels[c.worst].line}});
  return {{"kernels", rows}, {"classes", classes}, {"left_out", v.left_out}};
}

void validate_kernels(const ValidateOptions& o) {
  if (!o.system_given)
    throw InputError("validate --kernels: --system must name the system (or GPU system file) the kernels ran on");
  if (o.attention_backend != "cudnn" && o.attention_backend != "flash2")
    throw InputError(fmt::format("--attention-backend = '{}' must be cudnn or flash2", o.attention_backend));
  hw::Gpu gpu = hw::gpu_of(hw::load_system(o.system));
  const auto kernels = io::read_kernel_measurements(o.file);
  if (o.fit) {
    if (megatron::check_kernels(kernels, gpu, o.attention_backend).classes.empty())
      throw InputError(
          fmt::format("validate --kernels --fit: {} has no kernel phaze prices (BF16 GEMMs, {} attention, "
                      "streaming kernels, FP8 GEMMs)",
                      o.file, o.attention_backend));
    gpu = megatron::fit_gpu_kernels(kernels, gpu, o.attention_backend);
    gpu.software_fitted_on = gpu.generation;
    hw::System fitted = hw::load_system(o.system);
    fitted.device = gpu;
    write_fitted_system(o, fitted);
    std::cerr << fmt::format(
        "fitted on {} kernels: tensor_efficiency {:.2f}, tile_overhead_s {:.1f}e-6, kernel_launch_s {:.1f}e-6, "
        "attention_forward_efficiency {:.2f}, attention_backward_efficiency {:.2f}, memory_efficiency {:.2f}, "
        "fp8_tensor_efficiency {:.2f}\n",
        kernels.size(), gpu.tensor_efficiency, gpu.tile_overhead_s * 1e6, gpu.kernel_launch_s * 1e6,
        gpu.attention_forward_efficiency, gpu.attention_backward_efficiency, gpu.memory_efficiency,
        gpu.fp8_tensor_efficiency);
  }
  const megatron::KernelValidation v = megatron::check_kernels(kernels, gpu, o.attention_backend);
  if (o.json) {
    nlohmann::json out = kernels_json(kernels, v);
    out["gpu"] = hw::to_json(gpu);
    std::cout << out.dump(2) << "\n";
    return;
  }
  print_kernels(kernels, v);
}

void validate_file(const ValidateOptions& o) {
  if (!o.write_system.empty() && !o.fit) throw InputError("--write-system needs --fit (it writes the fitted system)");
  if (o.kernels) return validate_kernels(o);
  if (ends_with(o.file, ".json")) {
    if (o.system_given)
      throw InputError(
          fmt::format("validate {}: a published-runs file names its systems; --system does not apply", o.file));
    return validate_published(o);
  }
  hw::System system = hw::load_system(o.system);
  hw::gpu_of(system);  // refuses a system without a GPU, naming it
  const auto runs = io::read_measured_runs(o.file);
  if (o.fit) {
    system = megatron::fit_gpu_software(runs, system);
    write_fitted_system(o, system);
    const hw::Gpu& gpu = hw::gpu_of(system);
    std::cerr << fmt::format(
        "fitted on {}: tensor_efficiency {:.2f}, memory_efficiency {:.2f}, "
        "kernel_launch_s {:.1f}e-6\n",
        counted(static_cast<int64_t>(runs.size()), "run"), gpu.tensor_efficiency, gpu.memory_efficiency,
        gpu.kernel_launch_s * 1e6);
  }
  const megatron::ValidationSummary v = megatron::check_runs(runs, system);
  if (o.json) {
    nlohmann::json out = to_json(runs, v);
    out["system"] = hw::to_json(system);
    std::cout << out.dump(2) << "\n";
    return;
  }
  print_text(runs, v);
}

}  // namespace

void add_validate_command(CLI::App& app) {
  auto o = std::make_shared<ValidateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "validate", "Predicted against measured or published Megatron-LM runs, or measured GPU kernels");
  cmd->add_option("file", o->file,
                  "CSV of measured runs, JSON of published runs, or CSV of kernels with --kernels (docs/gpu.md)")
      ->required();
  cmd->add_option("--system", o->system, "GPU system the runs were measured on")->capture_default_str();
  cmd->add_flag("--json", o->json, "Print JSON");
  cmd->add_flag("--fit", o->fit,
                "First fit the GPU's software figures on these runs (tensor and memory efficiency, launch time) or "
                "kernels (also tile overhead and attention efficiencies)");
  cmd->add_flag("--kernels", o->kernels,
                "The file holds measured kernels (bench/gpu/measure.py's kernels.csv); --system names their GPU");
  cmd->add_option("--write-system", o->write_system, "With --fit: write the system with the fitted GPU to this file");
  cmd->add_option("--attention-backend", o->attention_backend,
                  "With --kernels: the fused-attention library whose rows are priced (cudnn, flash2)")
      ->capture_default_str();
  cmd->callback([o, cmd] {
    auto copy = *o;
    copy.system_given = cmd->count("--system") > 0;
    validate_file(copy);
  });
}

}  // namespace phaze::cli
