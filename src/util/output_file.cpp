#include "util/output_file.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "util/input_error.h"

namespace phaze {

void check_writable(const std::string& option, const std::string& path) {
  namespace fs = std::filesystem;
  if (path.empty()) throw InputError(fmt::format("{}: empty path", option));
  std::error_code ec;
  const bool existed = fs::exists(path, ec);
  if (existed && fs::is_directory(path, ec))
    throw InputError(fmt::format("{} {}: is a directory, not a file", option, path));
  errno = 0;
  std::ofstream probe(path, std::ios::binary | std::ios::app);
  if (!probe) {
    const std::string reason = errno != 0 ? std::strerror(errno) : "cannot be opened";
    throw InputError(fmt::format("{} {}: cannot write the file ({})", option, path, reason));
  }
  probe.close();
  if (!existed) fs::remove(path, ec);
}

void write_text_file(const std::string& path, const std::string& text) {
  write_file(path, [&](std::ostream& out) { out << text; });
}

void write_file(const std::string& path, const std::function<void(std::ostream&)>& write) {
  std::ofstream out(path, std::ios::binary);
  if (out) write(out);
  if (!out || !out.flush()) throw InputError(fmt::format("{}: cannot write file", path));
}

}  // namespace phaze
