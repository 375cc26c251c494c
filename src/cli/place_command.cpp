#include "cli/place_command.h"

#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include "io/placement_json.h"
#include "placement/plan_check.h"
#include "placement/planner.h"
#include "util/input_error.h"
#include "util/output_file.h"
#include "util/read_file.h"

namespace phaze::cli {

namespace {

struct PlaceOptions {
  std::string input;
  std::string output;
};

void place(const PlaceOptions& o) {
  const io::PlacementInput input = io::parse_placement_input(read_text_file(o.input), o.input);
  if (!o.output.empty()) check_writable("--output", o.output);
  // The planner exact for the file's time model: placement.md's, or ours with `correctedTerms`.
  const placement::Plan plan = placement::make_planner(input.cluster)->solve(input.chains, input.cluster);
  placement::PlanCheck hand;
  if (input.hand_set) {
    hand = placement::evaluate_hand_set(input.chains, input.cluster, *input.hand_set, input.hand_set_layers);
  } else {
    hand.reason = "no hand-set strategy in the input";
  }
  const std::string text = io::placement_output_json(input, plan, hand).dump(2) + "\n";
  if (!plan.feasible) std::cerr << "phaze: no feasible plan: no partition fits in memory on the available devices\n";
  if (input.hand_set && !hand.feasible) std::cerr << "phaze: hand-set strategy infeasible: " << hand.reason << "\n";
  if (o.output.empty()) {
    std::cout << text;
    return;
  }
  write_text_file(o.output, text);
}

}  // namespace

void add_place_command(CLI::App& app) {
  auto o = std::make_shared<PlaceOptions>();
  CLI::App* cmd = app.add_subcommand(
      "place", "Pipeline/tensor/data-parallel placement of a layer graph in the PHAZE placement format");
  cmd->add_option("input", o->input, "Placement input JSON (see placement.md)")->required();
  cmd->add_option("-o,--output", o->output, "Write the result JSON to this file instead of standard output");
  cmd->callback([o] { place(*o); });
}

}  // namespace phaze::cli
