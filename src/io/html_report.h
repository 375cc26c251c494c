#pragma once

// The HTML report of an answer (`phaze report`): one self-contained page, charts drawn by Chart.js from the
// answer's JSON, which the page carries. A search answer shows its design space (the Pareto frontier, the
// top list, the best point and the baselines by area), each model's throughput beside the baselines and
// where each model's time per batch goes; a predict answer its iteration breakdown and memory per GPU; a
// plan answer its plans side by side; any Chrome trace given with it (--trace of search, predict or
// schedule) a timeline per track.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace phaze::io {

/// What a JSON answer is, as the report draws it.
enum class ReportKind { Search, Predict, Plan };

/// "search", "predict" or "plan".
const char* report_kind_name(ReportKind kind);

/// The kind of `answer` (a search, predict or plan answer's JSON); InputError naming `source` otherwise.
ReportKind report_kind(const nlohmann::json& answer, const std::string& source);

/// The page: `answer` of `kind`, and the trace-event files `traces` (Chrome trace JSON objects), titled
/// `title`. InputError when the build has no chart library.
std::string html_report(const nlohmann::json& answer, ReportKind kind, const std::vector<nlohmann::json>& traces,
                        const std::string& title);

}  // namespace phaze::io
