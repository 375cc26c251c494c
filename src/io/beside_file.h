#pragma once

// A model or system that an input file names: a preset by its name, anything else as a path, a relative
// one taken from the naming file's folder (so a file and what it names move together).

#include <string>

#include "hw/system.h"
#include "model/model_spec.h"

namespace phaze::io {

model::ModelSpec load_model_beside(const std::string& file, const std::string& name);
hw::System load_system_beside(const std::string& file, const std::string& name);

}  // namespace phaze::io
