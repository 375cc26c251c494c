#pragma once

// The output formats of a search, beside those of the other stages: the answer of a search as JSON, as text for people,
// and every point as CSV. Units: seconds, bytes, joules, samples and tokens per second (µm² for area).

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "search/driver.h"
#include "search/question.h"

namespace phaze::io {

/// Name of chain position `index` of a model with `layers` transformer layers: embedding, layer1..layerL, head.
std::string chain_position_name(int64_t index, int64_t layers);

nlohmann::ordered_json answer_json(const search::SearchQuestion& question, const search::SearchAnswer& answer);
std::string answer_text(const search::SearchQuestion& question, const search::SearchAnswer& answer);
/// One row per point of `answer.all`, in canonical order, with a header, written row by row to `out` (an
/// exhaustive sweep's CSV is tens of MB).
void write_points_csv(std::ostream& out, const search::SearchQuestion& question, const search::SearchAnswer& answer);
/// The answer's Pareto frontiers as CSV: one row per point of each frontier (a model's or the averages', named
/// in the first column), by area, with its chip, samples/s, energy per sample (joules) and whether it is also
/// on the frontier of samples/s against area alone.
void write_pareto_csv(std::ostream& out, const search::SearchQuestion& question, const search::SearchAnswer& answer);

}  // namespace phaze::io
