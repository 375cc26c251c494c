#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "schedule/problem.h"

namespace phaze::io {

/// The kind of a unit name, or nothing.
std::optional<schedule::TaskKind> parse_unit(std::string_view unit);

/// Parses and validates a layer-scheduling question:
///   {"tensor_cores": n, "vector_cores": m,
///    "ops": [{"id": "G1", "unit": "tensor|vector|fused|comm|none", "latency_s": ℓ, "parallel_latency_s": ℓ',
///             "energy_j": e, "parallel_energy_j": e'}, ...],
///    "edges": [["G1", "SM"], ...],
///    "comm_as_vector": false, "overlap_across_types": false}
/// parallel_latency_s may be left out for comm and none units (it is then latency_s); energies default to 0
/// (parallel_energy_j to energy_j); edges and the two options may be left out. Throws InputError naming
/// `source` and the offending item.
schedule::Problem parse_schedule_input(const std::string& text, const std::string& source);

/// Writes a question in the same format (the inverse of parse_schedule_input).
nlohmann::ordered_json schedule_input_json(const schedule::Problem& problem);

/// The result: makespan_s, energy_j, utilisation and peaks per core type, the solver and whether the
/// makespan is proven optimal, and per operator its start, finish, mode and cores (null when none or all).
/// An infeasible schedule has "feasible": false and null times.
nlohmann::ordered_json schedule_output_json(const schedule::Problem& problem, const schedule::Schedule& schedule,
                                            std::string_view solver);

}  // namespace phaze::io
