#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "util/input_error.h"

namespace phaze {

/// Largest input file read as text (model configs, architecture files, placement and schedule questions).
inline constexpr std::uintmax_t kMaxInputFileBytes = std::uintmax_t{256} << 20;

/// The whole file as text. InputError naming the file when it does not exist, is not a regular file (a
/// directory, a device such as /dev/zero, a FIFO: reading those may never end), is larger than
/// kMaxInputFileBytes, or cannot be read.
inline std::string read_text_file(const std::string& path) {
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) throw InputError(fmt::format("{}: no such file", path));
  if (!std::filesystem::is_regular_file(status))
    throw InputError(fmt::format("{}: not a regular file (a directory, device or pipe cannot be read as input)", path));
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec && size > kMaxInputFileBytes)
    throw InputError(
        fmt::format("{}: {} bytes, more than the {} MiB an input file may have", path, size, kMaxInputFileBytes >> 20));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open file", path));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError(fmt::format("{}: cannot read file", path));
  return text.str();
}

}  // namespace phaze
