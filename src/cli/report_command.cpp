#include "cli/report_command.h"

#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "io/html_report.h"
#include "util/input_error.h"
#include "util/json_input.h"
#include "util/output_file.h"
#include "util/read_file.h"

namespace phaze::cli {

namespace {

/// Trace files a report draws at most: each is a chart.
constexpr size_t kMaxTraces = 16;

struct ReportOptions {
  std::string answer;
  std::string output;
  std::vector<std::string> traces;
  std::string title;
};

void run(const ReportOptions& o) {
  check_writable("-o", o.output);
  if (o.traces.size() > kMaxTraces)
    throw InputError(fmt::format("--trace: {} files, at most {} allowed", o.traces.size(), kMaxTraces));
  const nlohmann::json answer = parse_json_input(read_text_file(o.answer), o.answer);
  const io::ReportKind kind = io::report_kind(answer, o.answer);
  std::vector<nlohmann::json> traces;
  for (const std::string& path : o.traces) {
    nlohmann::json trace = parse_json_input(read_text_file(path), path);
    if (!trace.is_object() || !trace.contains("traceEvents") || !trace["traceEvents"].is_array())
      throw InputError(fmt::format("--trace {}: no traceEvents list (a file written by --trace)", path));
    traces.push_back(std::move(trace));
  }
  const char* what = kind == io::ReportKind::Search    ? "co-search"
                     : kind == io::ReportKind::Predict ? "training run"
                                                       : "training plans";
  const std::string title = o.title.empty() ? fmt::format("phaze: {} of {}", what, o.answer) : o.title;
  write_text_file(o.output, io::html_report(answer, kind, traces, title));
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto o = std::make_shared<ReportOptions>();
  CLI::App* cmd = app.add_subcommand(
      "report",
      "Write one self-contained HTML page (it opens offline) with the charts of a search, predict or plan answer: "
      "the design space with the Pareto frontier and the baselines, throughput per model, time per batch; or the "
      "iteration breakdown and memory per GPU of a run or of the best plans side by side");
  cmd->add_option("answer", o->answer, "The answer's JSON (search, predict or plan with -o or --json)")->required();
  cmd->add_option("-o,--output", o->output, "The HTML file to write")->required();
  cmd->add_option("--trace", o->traces,
                  "A Chrome trace of the same run (--trace of search, predict or schedule) to draw as a timeline; "
                  "may be given several times");
  cmd->add_option("--title", o->title, "The page's title (default: what the answer is, and its file)");
  cmd->callback([o] { run(*o); });
}

}  // namespace phaze::cli
