#include "util/file_lock.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/input_error.h"

namespace phaze {

ExclusiveFileLock::ExclusiveFileLock(const std::string& path, const std::string& what) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd_ < 0) throw InputError(fmt::format("{}: cannot open {} to lock it ({})", path, what, std::strerror(errno)));
  int rc = 0;
  do {
    rc = ::flock(fd_, LOCK_EX | LOCK_NB);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    const int error = errno;
    ::close(fd_);
    fd_ = -1;
    if (error == EWOULDBLOCK)
      throw InputError(
          fmt::format("{}: another search is running on this {}; wait for it to end or give another file", path, what));
    throw InputError(fmt::format("{}: cannot lock {} ({})", path, what, std::strerror(error)));
  }
}

ExclusiveFileLock::~ExclusiveFileLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the lock
}

}  // namespace phaze
