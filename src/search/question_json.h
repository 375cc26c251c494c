#pragma once

// The search question as a file (docs/question.md): every setting that determines the answer, the models with
// their whole hyper-parameters so that a file is self-contained. The results file's run identity is derived
// from this JSON, so a setting written here is part of it.

#include <nlohmann/json.hpp>
#include <string>

#include "search/question.h"

namespace phaze::search {

/// The question as JSON, keys in a fixed order. The area budget is written resolved (the tpuv4-like chip's
/// area when the question has none).
nlohmann::ordered_json question_json(const SearchQuestion& question);

/// Reads a question file's text (`source` names it in messages) and validates it like the flags. Throws
/// InputError, one line naming the file, the field and the value, for malformed JSON, a missing or unknown
/// field, a value of the wrong type or out of range.
SearchQuestion parse_question(const std::string& text, const std::string& source);
/// The same from parsed JSON, checking the fields one by one but not the question as a whole (validate()).
SearchQuestion read_question(const nlohmann::json& json, const std::string& source);

/// A canonical string of everything that determines the answer, for the results file: the search and cost
/// model versions and the question's JSON (the bucket rule's settings at their defaults under the exact rule).
std::string run_identity(const SearchQuestion& question);

/// The optimizer's name in a question file and an answer: "sgd", "adam" (mixed precision) or "adam_phaze".
const char* optimizer_name(placement::Optimizer optimizer);

}  // namespace phaze::search
