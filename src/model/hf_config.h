#pragma once

#include <string>

#include "model/model_spec.h"

namespace phaze::model {

/// Reads a Hugging Face `config.json` (model_type bert, gpt2, opt, llama or mistral). Unknown keys are
/// ignored; a missing required key, a wrong type or a nonsensical value throws InputError naming the file,
/// the key and the value.
ModelSpec read_hf_config(const std::string& path);
/// Same from JSON text; `source` names it in error messages.
ModelSpec parse_hf_config(const std::string& text, const std::string& source);

/// A preset name or a path to a config.json (InputError for neither).
ModelSpec load_model(const std::string& preset_or_path);

}  // namespace phaze::model
