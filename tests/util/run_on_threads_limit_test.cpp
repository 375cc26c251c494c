// A thread the system refuses (a memory or process limit) once ended the process with "terminate called
// without an active exception": the started threads were destroyed while joinable. These tests lower the
// address-space limit in a child process so that thread stacks cannot be mapped, and check that the run
// reports instead, without doing any work.

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <string>

#include "support/child_process.h"
#include "support/run_phaze.h"
#include "util/run_on_threads.h"

#if defined(__SANITIZE_ADDRESS__)
#define PHAZE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PHAZE_ASAN 1
#endif
#endif

namespace {

/// Bytes of address space the process maps now (/proc/self/statm, first field, in pages).
long long mapped_bytes() {
  std::ifstream statm("/proc/self/statm");
  long long pages = 0;
  statm >> pages;
  return pages * 4096;
}

TEST(RunOnThreadsLimit, ARefusedThreadIsReportedAndNoWorkIsDone) {
#ifdef PHAZE_ASAN
  GTEST_SKIP() << "AddressSanitizer reserves terabytes of address space; an address-space limit breaks it";
#endif
  const pid_t child = phaze_test::start_child([] {
    // 256 MiB beyond what is mapped: a few dozen 8 MiB thread stacks, far fewer than the 2000 asked for.
    const rlim_t limit = static_cast<rlim_t>(mapped_bytes() + (256ll << 20));
    const rlimit lower{limit, limit};
    if (::setrlimit(RLIMIT_AS, &lower) != 0) ::_exit(3);
    std::atomic<int> runs{0};
    try {
      phaze::run_on_threads(2000, [&] { ++runs; });
    } catch (const phaze::ThreadStartError&) {
      ::_exit(runs == 0 ? 0 : 4);
    }
    ::_exit(5);  // every thread started: the limit did not bite
  });
  ASSERT_GT(child, 0);
  const int code = phaze_test::wait_for_exit_codes({child}).front();
  EXPECT_EQ(code, 0) << "3: setrlimit failed, 4: work ran before the refusal, 5: no refusal, -1: killed";
}

TEST(RunOnThreadsLimit, TheCliNamesTheThreadCount) {
#ifdef PHAZE_ASAN
  GTEST_SKIP() << "AddressSanitizer reserves terabytes of address space; an address-space limit breaks it";
#endif
  const std::string model = PHAZE_TEST_DATA "/hf/tiny-gpt2/config.json";
  // 1 GiB of address space holds the search but not 1000 stacks of 8 MiB.
  const std::string command = fmt::format(
      "ulimit -v 1048576; exec {} search --model {} --tc 1 --vc 1 --width 8 --depth 8 --glb-mib 2 "
      "--threads 1000 2>&1 >/dev/null",
      phaze_test::quoted(PHAZE_BINARY), phaze_test::quoted(model));
  FILE* pipe = ::popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string err;
  char buffer[4096];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) err.append(buffer, n);
  const int status = ::pclose(pipe);
  ASSERT_TRUE(WIFEXITED(status)) << err;
  EXPECT_EQ(WEXITSTATUS(status), 2) << err;
  phaze_test::expect_one_line(err);
  EXPECT_NE(err.find("--threads"), std::string::npos) << err;
}

}  // namespace
