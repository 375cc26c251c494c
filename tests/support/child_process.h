#pragma once

// Child processes: for tests of files that several processes write at once, and for running code that may
// abort (an assertion inside a library) without taking the test binary down with it.

#include <sys/wait.h>
#include <unistd.h>

#include <string>
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

/// A child that reports a string through a pipe (start_reporting_child).
struct ReportingChild {
  pid_t pid = -1;
  int fd = -1;  ///< read end of the pipe
};

/// What a reporting child left: its exit status (-1 when it did not exit normally, e.g. it aborted) and
/// what it wrote.
struct ChildReport {
  int exit_code = -1;
  std::string text;
};

/// Runs `body` (returning a std::string) in a forked child process that writes the string to a pipe and
/// exits with 0, or 1 when `body` throws. The string should be short (the parent reads it only in
/// finish_child, so the pipe's buffer must hold it). {-1, -1} when pipe or fork fails.
template <typename Body>
ReportingChild start_reporting_child(Body body) {
  int fds[2];
  if (::pipe(fds) != 0) return {};
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return {};
  }
  if (pid != 0) {
    ::close(fds[1]);
    return {pid, fds[0]};
  }
  ::close(fds[0]);
  int status = 1;
  try {
    const std::string text = body();
    size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = ::write(fds[1], text.data() + done, text.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    status = done == text.size() ? 0 : 1;
  } catch (...) {
    status = 1;
  }
  ::_exit(status);
}

/// Reads everything a reporting child wrote and waits for it.
inline ChildReport finish_child(const ReportingChild& child) {
  ChildReport report;
  if (child.pid < 0) return report;
  char buffer[4096];
  ssize_t n = 0;
  while ((n = ::read(child.fd, buffer, sizeof buffer)) > 0) report.text.append(buffer, static_cast<size_t>(n));
  ::close(child.fd);
  report.exit_code = wait_for_exit_codes({child.pid}).front();
  return report;
}

}  // namespace phaze_test
