
#include "cli/run.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>

#include "cli/arch_command.h"
#include "cli/estimate_command.h"
#include "cli/model_command.h"
#include "cli/piper_command.h"
#include "cli/place_command.h"
#include "cli/plan_command.h"
#include "cli/predict_command.h"
#include "cli/report_command.h"
#include "cli/saved_answer_commands.h"
#include "cli/schedule_command.h"
#include "cli/search_command.h"
#include "cli/system_command.h"
#include "cli/validate_command.h"
#include "util/input_error.h"

namespace phaze::cli {

namespace {

/// One line on stderr: messages never span lines, whatever the library wrote.
void print_error(const std::string& message) {
  std::string line = message;
  for (char& c : line)
    if (c == '\n' || c == '\r') c = ' ';
  while (!line.empty() && line.back() == ' ') line.pop_back();
  std::cerr << "phaze: error: " << line << "\n";
}

}  // namespace

int run(int argc, const char* const* argv) {
  CLI::App app{
      "phaze: which accelerator architecture and which distribution of training gives the highest "
      "throughput"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "phaze 0.1.0");
  add_model_command(app);
  add_place_command(app);
  add_arch_command(app);
  add_system_command(app);
  add_estimate_command(app);
  add_schedule_command(app);
  add_search_command(app);
  add_evaluate_command(app);
  add_predict_command(app);
  add_plan_command(app);
  add_validate_command(app);
  add_piper_command(app);
  add_report_command(app);
  add_show_command(app);
  add_compare_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    print_error(e.what());
    return 2;
  } catch (const phaze::InputError& e) {
    print_error(e.what());
    return 2;
  } catch (const std::exception& e) {
    print_error(fmt::format("internal error: {}", e.what()));
    return 1;
  }
  return 0;
}

}  // namespace phaze::cli
