#pragma once

// A file's whole text, for tests that read what a command wrote.

#include <fstream>
#include <sstream>
#include <string>

namespace phaze_test {

/// The text of the file at `path` ("" when it cannot be read).
inline std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace phaze_test
