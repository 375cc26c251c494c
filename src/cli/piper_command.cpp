#include "cli/piper_command.h"

#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "cli/option_values.h"
#include "io/piper_json.h"
#include "piper/planner.h"
#include "util/input_error.h"
#include "util/number_text.h"
#include "util/output_file.h"
#include "util/read_file.h"
#include "util/run_on_threads.h"

namespace phaze::cli {

namespace {

struct PiperOptions {
  std::string file;
  std::string output;
  bool json = false;
  int threads = 0;  ///< 0: one per hardware thread
};

std::string answer_text(const piper::Problem& p, const piper::PiperAnswer& a) {
  std::string out = fmt::format("{}, {}; K = {}, N = {}, M = {:g} bytes, B = {:g} bytes/s\n",
                                counted(static_cast<int64_t>(p.nodes.size()), "node"),
                                counted(static_cast<int64_t>(p.edges.size()), "edge"), counted(p.devices, "device"),
                                counted(p.micro_batches, "micro-batch", "micro-batches"), p.memory_per_device_bytes,
                                p.bandwidth_bytes_per_s);
  if (!a.feasible) return out + "no feasible plan\n";
  const piper::PlanEvaluation e = piper::evaluate_plan(p, a.stages);
  int64_t devices = 0;
  for (const auto& s : a.stages) devices += s.data_parallel * s.width;
  out += fmt::format("time per sample {:.9g} s; {} on {}\n", a.time_per_sample_s,
                     counted(static_cast<int64_t>(a.stages.size()), "stage"), counted(devices, "device"));
  for (size_t i = 0; i < a.stages.size(); ++i) {
    const auto& s = a.stages[i];
    const int w = piper::width_index(p, s.width);
    std::string nodes;
    for (size_t k = 0; k < s.nodes.size(); ++k) {
      const auto& node = p.nodes[static_cast<size_t>(s.nodes[k])];
      nodes += fmt::format("{}{} ({})", k ? ", " : "", node.id,
                           node.tmpcs[static_cast<size_t>(w)][static_cast<size_t>(s.tmpc[k])].id);
    }
    out += fmt::format("  stage {}: d = {}, t = {}, {:.9g} s per sample: {}\n", i + 1, s.data_parallel, s.width,
                       e.stage_s[i], nodes);
  }
  return out;
}

void run(const PiperOptions& o) {
  if (!o.output.empty()) check_writable("-o", o.output);
  const piper::Problem problem = io::read_piper_problem(read_text_file(o.file), o.file);
  const int threads = threads_or_hardware(o.threads);
  piper::PiperAnswer answer;
  try {
    answer = piper::plan_piper(problem, threads);
  } catch (const ThreadStartError& e) {
    throw InputError(fmt::format("--threads {}: {}; ask for fewer threads", threads, e.what()));
  }
  const std::string json = io::piper_answer_json(problem, answer).dump(2) + "\n";
  if (!o.output.empty()) write_text_file(o.output, json);
  std::cout << (o.json ? json : answer_text(problem, answer));
  if (!answer.feasible) std::cerr << "phaze: " << answer.reason << "\n";
}

}  // namespace

void add_piper_command(CLI::App& app) {
  auto o = std::make_shared<PiperOptions>();
  CLI::App* cmd = app.add_subcommand(
      "piper",
      "Plan a Piper input file exactly: stages over the layer DAG, each with its own tensor-parallel width and "
      "data-parallel degree, and each layer's TMPC, for the least time per sample (docs/piper.md)");
  cmd->add_option("file", o->file,
                  "Piper input JSON (maxMemoryPerDevice, maxDevices, bandwidth, mbsInBatch, nodes, edges)")
      ->required();
  cmd->add_flag("--json", o->json, "Print the plan as JSON");
  cmd->add_option("-o,--output", o->output, "Also write the plan as JSON to this file");
  add_integer_option(cmd, "--threads", o->threads, 0, piper::piper_limits::kThreads,
                     "Threads that build the candidate stages' choices (0: one per hardware thread); the answer "
                     "does not depend on it");
  cmd->callback([o] { run(*o); });
}

}  // namespace phaze::cli
