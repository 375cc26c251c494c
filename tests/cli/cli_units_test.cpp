// A value that looks like another unit than its option's (bytes for GiB, bytes/s for GiB/s, µm² for mm²) is
// refused saying so and what it would be in the option's unit; other values out of range keep the plain range
// message, and values in range are taken. mm² given as µm² has the search's own message (tests/search).

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/run_phaze.h"

namespace {

using phaze_test::run_phaze;

std::string error_of(const std::string& args) {
  const auto r = run_phaze("search --model gpt2-xl " + args + " --write-question -");
  EXPECT_EQ(r.status, 2) << args;
  return r.err;
}

TEST(WrongUnits, AreNamedWithTheValueInTheOptionsUnit) {
  struct Case {
    std::string args, says;
  };
  const std::vector<Case> cases{
      {"--hbm 34359738368", "it looks like bytes (32 GiB): --hbm takes GiB"},
      {"--hbm 32,85899345920", "it looks like bytes (80 GiB)"},
      {"--link-bandwidth 4e9", "it looks like bytes/s (3.72529 GiB/s): --link-bandwidth takes GiB/s"},
      {"--budget-mm2 278826676", "it looks like µm² (278.827 mm²): give µm² as --budget-um2"}};
  for (const Case& c : cases) EXPECT_NE(error_of(c.args).find(c.says), std::string::npos) << c.args;
  // Out of range without a likely other unit: the range alone.
  for (const std::string& args : {"--link-bandwidth 2e6", "--hbm -1"}) {
    const std::string err = error_of(args);
    EXPECT_EQ(err.find("looks like"), std::string::npos) << err;
  }
  // In range: taken.
  EXPECT_EQ(
      run_phaze("search --model gpt2-xl --hbm 32 --link-bandwidth 4 --budget-mm2 278.8 --write-question -").status, 0);
}

}  // namespace
