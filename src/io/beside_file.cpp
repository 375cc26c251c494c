#include "io/beside_file.h"

#include <filesystem>

#include "hw/system_json.h"
#include "model/hf_config.h"
#include "model/presets.h"

namespace phaze::io {

namespace {

std::string beside(const std::string& file, const std::string& name, bool is_preset) {
  const std::filesystem::path p(name);
  if (is_preset || p.is_absolute()) return name;
  return (std::filesystem::path(file).parent_path() / p).string();
}

}  // namespace

model::ModelSpec load_model_beside(const std::string& file, const std::string& name) {
  return model::load_model(beside(file, name, model::find_preset(name).has_value()));
}

hw::System load_system_beside(const std::string& file, const std::string& name) {
  return hw::load_system(beside(file, name, hw::find_system_preset(name).has_value()));
}

}  // namespace phaze::io
