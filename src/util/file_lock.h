#pragma once

#include <string>

namespace phaze {

/// An exclusive advisory lock (flock) on an existing file, held while the object lives. The system releases
/// it when the process ends in any way, SIGKILL included, so a killed run never leaves a stale lock. Two
/// searches sharing one results file would both do all the work (each resumes only what the other had
/// committed when it started); the lock makes the second one stop at once instead.
///
/// The lock is taken through a descriptor of its own. On an SQLite file, destroy it only after the database
/// connection is closed: closing a descriptor drops every POSIX lock the process holds on that file, SQLite's
/// included.
class ExclusiveFileLock {
 public:
  /// Takes the lock without waiting. InputError naming the file and `what` it is when another process holds
  /// it or the file cannot be opened.
  ExclusiveFileLock(const std::string& path, const std::string& what);
  ~ExclusiveFileLock();
  ExclusiveFileLock(const ExclusiveFileLock&) = delete;
  ExclusiveFileLock& operator=(const ExclusiveFileLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace phaze
