#include "cli/validate_command.h"

#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "hw/gpu_json.h"
#include "hw/system_json.h"
#include "io/measured_runs.h"
#include "megatron/validation.h"

namespace phaze::cli {

namespace {

struct ValidateOptions {
  std::string file;
  std::string system = "vtrain-a100";
  bool json = false;
  bool fit = false;
};

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
  fmt::print("{} runs: mean absolute error {:.2f}%, largest {:.2f}% (line {})\n", runs.size(), v.mean_abs_error * 100,
             v.max_abs_error * 100, runs[v.worst].line);
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

void validate_file(const ValidateOptions& o) {
  hw::System system = hw::load_system(o.system);
  hw::gpu_of(system);  // refuses a system without a GPU, naming it
  const auto runs = io::read_measured_runs(o.file);
  if (o.fit) {
    system = megatron::fit_gpu_software(runs, system);
    const hw::Gpu& gpu = hw::gpu_of(system);
    std::cerr << fmt::format(
        "fitted on {} runs: tensor_efficiency {:.2f}, memory_efficiency {:.2f}, "
        "kernel_launch_s {:.1f}e-6\n",
        runs.size(), gpu.tensor_efficiency, gpu.memory_efficiency, gpu.kernel_launch_s * 1e6);
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
      "validate", "Predicted against measured iteration times of Megatron-LM runs (vTrain's CSV columns)");
  cmd->add_option("file", o->file, "CSV of measured runs (see docs/gpu.md)")->required();
  cmd->add_option("--system", o->system, "GPU system the runs were measured on")->capture_default_str();
  cmd->add_flag("--json", o->json, "Print JSON");
  cmd->add_flag("--fit", o->fit,
                "First fit the GPU's software figures (tensor and memory efficiency, launch time) on these runs");
  cmd->callback([o] { validate_file(*o); });
}

}  // namespace phaze::cli
