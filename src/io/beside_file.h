#pragma once

// A model or system that an input file names: a preset name as it is, a relative path taken from the
// naming file's folder (so a file and what it names move together).

#include <filesystem>
#include <string>

namespace phaze::io {

inline std::string beside_file(const std::string& file, const std::string& name, bool is_preset) {
  const std::filesystem::path p(name);
  if (is_preset || p.is_absolute()) return name;
  return (std::filesystem::path(file).parent_path() / p).string();
}

}  // namespace phaze::io
