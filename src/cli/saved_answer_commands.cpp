#include "cli/saved_answer_commands.h"

#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <string>

#include "io/answer_summary.h"
#include "io/html_report.h"
#include "util/input_error.h"
#include "util/json_input.h"
#include "util/read_file.h"

namespace phaze::cli {

void add_show_command(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("show", "Print a saved search, predict or plan answer (its JSON) as text");
  cmd->add_option("answer", *path, "The answer's JSON (-o or --json of search, predict or plan)")->required();
  cmd->callback([path] {
    const nlohmann::json answer = parse_json_input(read_text_file(*path), *path);
    std::cout << io::answer_summary(answer, io::report_kind(answer, *path));
  });
}

void add_compare_command(CLI::App& app) {
  auto paths = std::make_shared<std::pair<std::string, std::string>>();
  CLI::App* cmd = app.add_subcommand(
      "compare", "Two saved answers of one kind (search, predict or plan) side by side, with the ratio of each figure");
  cmd->add_option("a", paths->first, "The first answer's JSON")->required();
  cmd->add_option("b", paths->second, "The second answer's JSON")->required();
  cmd->callback([paths] {
    const nlohmann::json a = parse_json_input(read_text_file(paths->first), paths->first);
    const nlohmann::json b = parse_json_input(read_text_file(paths->second), paths->second);
    const io::ReportKind kind = io::report_kind(a, paths->first);
    if (io::report_kind(b, paths->second) != kind)
      throw InputError(fmt::format("{}: a {} answer; {} is a {} answer: compare answers of one kind", paths->second,
                                   io::report_kind_name(io::report_kind(b, paths->second)), paths->first,
                                   io::report_kind_name(kind)));
    std::cout << io::answer_comparison(a, b, kind, paths->first, paths->second);
  });
}

}  // namespace phaze::cli
