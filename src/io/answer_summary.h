#pragma once

// Saved answers read back (`phaze show`, `phaze compare`): a search, predict or plan answer's JSON as a short
// text, and two answers of one kind side by side with the ratio of each figure.

#include <nlohmann/json.hpp>
#include <string>

#include "io/html_report.h"

namespace phaze::io {

/// The answer's key figures as text: a search's best design, its throughput and plans, the baselines and the
/// top list; a prediction's plan, iteration, throughput, breakdown and memory; a plan answer's ranked list.
std::string answer_summary(const nlohmann::json& answer, ReportKind kind);

/// Two answers of `kind` side by side (named `name_a`, `name_b`): each figure of both and b / a.
std::string answer_comparison(const nlohmann::json& a, const nlohmann::json& b, ReportKind kind,
                              const std::string& name_a, const std::string& name_b);

}  // namespace phaze::io
