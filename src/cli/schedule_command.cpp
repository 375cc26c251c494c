#include "cli/schedule_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "cli/shape_options.h"
#include "cli/system_options.h"
#include "cost/operator_cost.h"
#include "hw/architecture_json.h"
#include "io/chrome_trace.h"
#include "io/schedule_json.h"
#include "io/schedule_trace.h"
#include "model/hf_config.h"
#include "model/layer_graph.h"
#include "schedule/layer_problem.h"
#include "schedule/problem.h"
#include "util/input_error.h"
#include "util/output_file.h"
#include "util/read_file.h"

namespace phaze::cli {

namespace {

using schedule::Problem;
using schedule::Schedule;
using schedule::TaskKind;
using schedule::TaskSlot;

struct ScheduleOptions {
  std::string file;
  std::string model;
  SystemOptions system;
  bool arch_given = false;
  ShapeOptions shape;
  std::string pass = "fwd";
  std::string layer = "transformer";
  std::string solver = "exact";
  std::string time_limit = "300";  ///< --time-limit as given: parsed in run_schedule to quote it when bad
  bool time_limit_given = false;
  std::string cache;
  bool no_cache = false;
  bool json = false;
  bool comm_as_vector = false;
  bool overlap_across_types = false;
  std::string question_out;                   ///< write the question here as JSON ("-": stdout) and stop
  std::string trace;                          ///< write the schedule here as Chrome trace-event JSON
  std::vector<std::string> model_only_given;  ///< --model options given (an error with FILE)
};

/// What the output says about where the problem came from.
struct Context {
  std::string title;               ///< first line of the text output
  nlohmann::ordered_json json;     ///< leading keys of the JSON output
  std::vector<std::string> names;  ///< operator names (empty for a file)
};

/// A display unit for times up to `span` seconds.
struct TimeUnit {
  const char* name;
  double scale;
};

TimeUnit time_unit(double span) {
  if (span == 0 || span >= 1) return {"s", 1};
  if (span >= 1e-3) return {"ms", 1e3};
  return {"µs", 1e6};
}

std::string time_text(double seconds, const TimeUnit& unit) {
  return fmt::format("{:.6g}", seconds * unit.scale);
}

char key_of(size_t i) {
  static const std::string keys = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  return i < keys.size() ? keys[i] : '*';
}

/// A text Gantt chart: one row per tensor core, vector core and the link; each column shows the key of the
/// operator occupying that lane for most of the column's time.
void print_gantt(const Problem& p, const Schedule& s, const TimeUnit& unit) {
  constexpr int kColumns = 80;
  const double span = s.makespan_s;
  if (!(span > 0)) return;
  const double width = span / kColumns;
  const std::vector<io::ScheduleLane> rows = io::schedule_lanes(p, s);
  fmt::print("\n  Gantt chart (1 column = {} {})\n", time_text(width, unit), unit.name);
  fmt::print("  {:<5} 0{:>{}}\n", "", time_text(span, unit) + " " + unit.name, kColumns - 1);
  for (const io::ScheduleLane& lane : rows) {
    std::string bar(kColumns, ' ');
    for (int c = 0; c < kColumns; ++c) {
      const double lo = c * width, hi = (c + 1) * width;
      double best = 0;
      for (size_t i : lane.tasks) {
        const double covered = std::min(hi, s.tasks[i].finish_s) - std::max(lo, s.tasks[i].start_s);
        if (covered > best + 1e-12 * width) {
          best = covered;
          bar[static_cast<size_t>(c)] = key_of(i);
        }
      }
    }
    fmt::print("  {:<5}|{}|\n", lane.label, bar);
  }
}

/// Longest --time-limit: a day. Beyond it a solve is not worth waiting for at the command line.
constexpr double kMaxTimeLimit = 86400;

double parse_time_limit(const std::string& text) {
  double seconds = 0;
  size_t used = 0;
  try {
    seconds = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || !std::isfinite(seconds) || !(seconds > 0) || seconds > kMaxTimeLimit)
    throw InputError(
        fmt::format("schedule: --time-limit '{}' is not a number of seconds in (0, {:g}]", text, kMaxTimeLimit));
  return seconds;
}

/// `time_limit_s` > 0: the ilp solver ran under this limit.
void print_text(const Context& ctx, const Problem& p, const Schedule& s, std::string_view solver, double time_limit_s) {
  fmt::print("{}\n", ctx.title);
  fmt::print("{} tensor core{}, {} vector core{}; solver {}\n", p.tensor_cores, p.tensor_cores == 1 ? "" : "s",
             p.vector_cores, p.vector_cores == 1 ? "" : "s", solver);
  if (!s.feasible) {
    fmt::print("no feasible schedule: an operator has no finite estimate on this design\n");
    return;
  }
  const TimeUnit unit = time_unit(s.makespan_s);
  const bool named = !ctx.names.empty();
  fmt::print("\n  {:<3} {:<10} {}{:<6} {:<8} {:>12} {:>12}  {}\n", "key", "id",
             named ? fmt::format("{:<40} ", "operator") : "", "unit", "mode", fmt::format("start ({})", unit.name),
             fmt::format("finish ({})", unit.name), "cores");
  for (size_t i = 0; i < p.tasks.size(); ++i) {
    const TaskSlot& slot = s.tasks[i];
    const TaskKind kind = p.tasks[i].kind;
    const char* mode = kind == TaskKind::None ? "-" : slot.parallel ? "parallel" : "single";
    fmt::print("  {:<3} {:<10} {}{:<6} {:<8} {:>12} {:>12}  {}\n", key_of(i), p.tasks[i].id,
               named ? fmt::format("{:<40} ", ctx.names[i].substr(0, 40)) : "", schedule::to_string(kind), mode,
               time_text(slot.start_s, unit), time_text(slot.finish_s, unit), io::cores_text(p, i, slot));
  }
  print_gantt(p, s, unit);
  std::string note =
      s.proven_optimal   ? " (proven optimal)"
      : solver == "list" ? " (list scheduling, a heuristic)"
      : time_limit_s > 0
          ? fmt::format(" (best found; optimality not proven within the time limit of {:g} s)", time_limit_s)
          : " (best found; optimality not proven within the search budget)";
  if (!s.proven_optimal && s.lower_bound_s > 0)
    note += fmt::format("\nlower bound {} {}: the makespan is at most {:.2f} % above the optimum",
                        time_text(s.lower_bound_s, unit), unit.name, 100 * (s.makespan_s / s.lower_bound_s - 1));
  fmt::print("\nmakespan {} {}{}\n", time_text(s.makespan_s, unit), unit.name, note);
  fmt::print("tensor cores: utilisation {:.1f} %, peak {:.1f} %\n", 100 * s.tensor_utilisation, 100 * s.tensor_peak);
  fmt::print("vector cores: utilisation {:.1f} %, peak {:.1f} %\n", 100 * s.vector_utilisation, 100 * s.vector_peak);
  fmt::print("energy {:.6g} J\n", s.energy_j);
}

/// The problem of a model's layer pass, with the output's context.
Problem model_problem(const ScheduleOptions& o, Context& ctx) {
  const model::ModelSpec spec = model::load_model(o.model);
  const hw::System system = resolve_system(o.system, o.arch_given);
  const hw::Architecture& arch = hw::accelerator_of(system);
  const model::Shape shape = o.shape.shape(spec);
  const model::LayerGraph graph = model::build_layer_graph(spec, shape, model::Precision{}, o.model);
  const model::Layer& layer = o.layer == "embedding" ? graph.embedding
                              : o.layer == "head"    ? graph.head
                                                     : graph.transformer;
  const bool backward = o.pass == "bwd";
  const model::OperatorGraph& ops = backward ? layer.backward : layer.forward;
  std::unique_ptr<cost::EstimateCache> cache;
  if (!o.no_cache)
    cache = std::make_unique<cost::EstimateCache>(o.cache.empty() ? cost::EstimateCache::default_path() : o.cache);
  cost::Estimator estimator(cost::CostParams{}, system.network, cache.get());
  Problem problem = schedule::layer_problem(ops, arch, estimator);
  problem.comm_as_vector = o.comm_as_vector;
  problem.overlap_across_types = o.overlap_across_types;
  const std::string& arch_name = arch.name;
  ctx.title = fmt::format("{} pass of the {} layer of {} on {} (seq {}, micro-batch {}, t = {}): {} operators",
                          backward ? "backward" : "forward", o.layer, spec.name, arch_name, shape.seq,
                          shape.micro_batch, shape.tp, ops.ops.size());
  ctx.json = {{"model", spec.name}, {"arch", arch_name},        {"layer", o.layer}, {"pass", o.pass},
              {"seq", shape.seq},   {"mbs", shape.micro_batch}, {"tp", shape.tp}};
  for (const model::Operator& op : ops.ops) ctx.names.push_back(op.name);
  return problem;
}

/// Writes the scheduling question (the input format of `phaze schedule FILE`), so that a real layer can be
/// handed to another solver or kept as a test case.
void write_question(const Problem& problem, const std::string& path) {
  const std::string text = io::schedule_input_json(problem).dump(2) + "\n";
  if (path == "-") {
    std::cout << text;
    return;
  }
  write_text_file(path, text);
}

/// The absolute time tolerance of the schedule check: relative to the problem's time scale.
double tolerance(const Problem& p) {
  double scale = 0;
  for (const schedule::Task& t : p.tasks) scale += std::max(t.single_s, t.parallel_s);
  return 1e-9 * scale;
}

void run_schedule(const ScheduleOptions& o) {
  if (o.file.empty() == o.model.empty())
    throw InputError("schedule: give exactly one of FILE (a JSON question) or --model");
  if (!o.file.empty() && !o.model_only_given.empty())
    throw InputError(fmt::format("schedule: {} applies only with --model, not with FILE", o.model_only_given[0]));
  if (!o.question_out.empty() && o.question_out != "-") check_writable("--write-question", o.question_out);
  if (!o.trace.empty()) check_writable("--trace", o.trace);

  Context ctx;
  Problem problem;
  if (!o.file.empty()) {
    problem = io::parse_schedule_input(read_text_file(o.file), o.file);
    if (o.comm_as_vector) problem.comm_as_vector = true;
    if (o.overlap_across_types) problem.overlap_across_types = true;
    ctx.title = fmt::format("schedule of {}: {} operators", o.file, problem.tasks.size());
  } else {
    problem = model_problem(o, ctx);
  }
  if (!o.question_out.empty()) {
    write_question(problem, o.question_out);
    return;
  }

  const double time_limit_s = parse_time_limit(o.time_limit);
  if (o.time_limit_given && o.solver != "ilp")
    throw InputError(fmt::format("schedule: --time-limit applies only with --solver ilp, not {}", o.solver));
  const bool ilp = o.solver == "ilp";

  // An operator without a finite estimate makes the layer infeasible on this design (layer-schedule.md 5).
  const bool finite = schedule::has_finite_latencies(problem);
  Schedule result;
  const std::unique_ptr<schedule::Solver> solver =
      ilp ? schedule::make_milp_solver(time_limit_s) : schedule::make_solver(o.solver);
  if (!solver) throw InputError(fmt::format("schedule: unknown solver '{}'", o.solver));
  if (finite) {
    const std::string reason = schedule::validate(problem);
    if (!reason.empty()) throw std::runtime_error(fmt::format("invalid layer problem: {}", reason));
    result = solver->solve(problem);
    if (!result.feasible) throw std::runtime_error(fmt::format("the {} solver found no schedule", solver->name()));
    const std::string violation = schedule::check_schedule(problem, result, tolerance(problem));
    if (!violation.empty())
      throw std::runtime_error(fmt::format("the {} solver's schedule is infeasible: {}", solver->name(), violation));
    schedule::summarize(problem, result);
  } else {
    std::cerr << "phaze: no feasible schedule: an operator has no finite estimate on this design\n";
  }

  if (!o.trace.empty()) io::write_chrome_trace(o.trace, {io::schedule_timeline(ctx.title, problem, result)});
  if (o.json) {
    nlohmann::ordered_json out = ctx.json.is_null() ? nlohmann::ordered_json::object() : ctx.json;
    const nlohmann::ordered_json result_json = io::schedule_output_json(problem, result, solver->name());
    for (const auto& [key, value] : result_json.items()) {
      out[key] = value;
      // Next to proven_optimal: false there means this limit stopped the search.
      if (key == "proven_optimal" && ilp) out["time_limit_s"] = time_limit_s;
    }
    std::cout << out.dump(2) << "\n";
    return;
  }
  print_text(ctx, problem, result, solver->name(), ilp ? time_limit_s : 0);
}

}  // namespace

void add_schedule_command(CLI::App& app) {
  auto o = std::make_shared<ScheduleOptions>();
  CLI::App* cmd = app.add_subcommand(
      "schedule", "Minimum-makespan operator schedule of one layer pass on the tensor and vector cores");
  cmd->add_option("file", o->file, "Scheduling question JSON (see layer-schedule.md); or use --model");
  cmd->add_option("--model", o->model, "Preset or Hugging Face config.json: schedule one of its layers");
  cmd->add_option("--solver", o->solver, "exact (branch and bound), ilp (MILP on CBC) or list (heuristic)")
      ->check(CLI::IsMember({"exact", "ilp", "list"}))
      ->capture_default_str();
  cmd->add_option("--time-limit", o->time_limit,
                  "Seconds the ilp solver may take in all, 0 < t <= 86400; when reached, the best schedule found "
                  "is printed, marked as not proven optimal")
      ->type_name("SECONDS")
      ->capture_default_str();
  cmd->add_flag("--json", o->json, "Print JSON");
  cmd->add_option("--trace", o->trace,
                  "Write the schedule as Chrome trace-event JSON (Perfetto, chrome://tracing): one track per core "
                  "and the link, one event per operator");
  const std::vector<std::string> model_only = {"--arch", "--system", "--seq",   "--mbs",     "--tp",
                                               "--pass", "--layer",  "--cache", "--no-cache"};
  add_system_options(cmd, o->system, " (with --model)");
  add_shape_options(cmd, o->shape);
  cmd->add_option("--pass", o->pass, "fwd or bwd")->check(CLI::IsMember({"fwd", "bwd"}))->capture_default_str();
  cmd->add_option("--layer", o->layer, "embedding, transformer or head")
      ->check(CLI::IsMember({"embedding", "transformer", "head"}))
      ->capture_default_str();
  cmd->add_option("--cache", o->cache, "Estimate cache file (default: $XDG_CACHE_HOME/phaze/estimates.sqlite)");
  cmd->add_flag("--no-cache", o->no_cache, "Do not read or write the estimate cache");
  cmd->add_flag("--comm-as-vector", o->comm_as_vector,
                "Original rule: collectives run on a vector core and are blocked by parallel operators");
  cmd->add_flag("--overlap-across-types", o->overlap_across_types,
                "A parallel operator excludes only operators sharing a core type with it");
  cmd->add_option("--write-question", o->question_out,
                  "Write the scheduling question as JSON to this file ('-': standard output) instead of solving");
  cmd->callback([o, cmd, model_only] {
    o->time_limit_given = cmd->count("--time-limit") > 0;
    o->arch_given = cmd->count("--arch") > 0;
    o->model_only_given.clear();
    for (const std::string& name : model_only)
      if (cmd->count(name) > 0) o->model_only_given.push_back(name);
    run_schedule(*o);
  });
}

}  // namespace phaze::cli
