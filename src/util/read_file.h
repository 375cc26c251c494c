#pragma once

#include <fmt/format.h>

#include <fstream>
#include <sstream>
#include <string>

#include "util/input_error.h"

namespace phaze {

/// The whole file as text; InputError naming the file when it cannot be opened.
inline std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open file", path));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace phaze
