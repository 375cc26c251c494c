#pragma once

// Piper's input format (docs/piper.md of the repository, "Input") and phaze's answer to it in JSON.

#include <nlohmann/json.hpp>
#include <string>

#include "piper/planner.h"
#include "piper/problem.h"

namespace phaze::io {

/// Reads a Piper input file's text (`source` names it in messages). Accepts what the original's files hold:
/// `mbsInBatch` (or `maxBatchSize`, the name its README gives), TMPCs keyed by width as decimal strings, any
/// number of TMPCs per width, `syncTimeFw` keyed by the node's predecessors and `syncTimeBw` by its
/// successors (each exactly those), unknown keys ignored. InputError, one line naming the file, the item and
/// the value, for anything else: a missing or mistyped field, a value out of range (docs: "Bounds"), unknown
/// or duplicate node ids, duplicate edges, a cycle, a node with no TMPC at any width.
piper::Problem read_piper_problem(const std::string& text, const std::string& source);

/// {"timePerSample": x or null, "stages": [{"nodes": [ids], "dataParallelDegree": d,
/// "tensorParallelDegree": t, "tmpcs": {"<node id>": "<TMPC id>"}}, ...]}, stages first to last, node ids
/// as in the input.
nlohmann::ordered_json piper_answer_json(const piper::Problem& problem, const piper::PiperAnswer& answer);

}  // namespace phaze::io
