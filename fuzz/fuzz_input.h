#pragma once

// Shared by the fuzz targets: the bytes libFuzzer hands over as text, and a scratch file for the readers
// that take a path (the SQLite files).

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace phaze::fuzz {

inline std::string as_text(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

/// A private directory for this process (made once) holding one scratch file at a time; SQLite also makes
/// its -wal and -shm companions beside it, which remove() deletes with it.
class ScratchFile {
 public:
  ScratchFile(const uint8_t* data, size_t size) {
    path_ = directory() + "/input.sqlite";
    FILE* f = std::fopen(path_.c_str(), "wb");
    if (f == nullptr) std::abort();
    if (size > 0 && std::fwrite(data, 1, size, f) != size) std::abort();
    if (std::fclose(f) != 0) std::abort();
  }
  ~ScratchFile() {
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::remove((path_ + suffix).c_str());
  }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  static const std::string& directory() {
    static const std::string dir = [] {
      const char* tmp = std::getenv("TMPDIR");
      std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/phaze-fuzz-XXXXXX";
      if (mkdtemp(pattern.data()) == nullptr) std::abort();
      return pattern;
    }();
    return dir;
  }
  std::string path_;
};

}  // namespace phaze::fuzz
