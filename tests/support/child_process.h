#pragma once

// Child processes for tests of files that several processes write at once.

#include <sys/wait.h>
#include <unistd.h>

#include <vector>

#include "util/input_error.h"

namespace phaze_test {

/// Runs `body` in a forked child process and returns its pid (-1 when fork fails). The child exits with 0
/// when `body` returns, 2 when it throws an InputError (the CLI's status for bad input), 1 on any other
/// exception.
template <typename Body>
pid_t start_child(Body body) {
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  int status = 1;
  try {
    body();
    status = 0;
  } catch (const phaze::InputError&) {
    status = 2;
  } catch (...) {
    status = 1;
  }
  ::_exit(status);
}

/// Waits for every child; the exit status of each, or -1 for one that did not exit normally (a signal).
inline std::vector<int> wait_for_exit_codes(const std::vector<pid_t>& children) {
  std::vector<int> codes;
  for (const pid_t pid : children) {
    int status = 0;
    const bool waited = ::waitpid(pid, &status, 0) == pid;
    codes.push_back(waited && WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  }
  return codes;
}

}  // namespace phaze_test
