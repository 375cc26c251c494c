// End-to-end tests of `phaze estimate`: every operator of a layer with its two estimates, the cache file,
// and bad input.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "support/run_phaze.h"

namespace {

using phaze_test::quoted;
using phaze_test::run_phaze;

std::filesystem::path temp_dir(const std::string& name) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("phaze_cli_estimate_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

TEST(CliEstimate, ListsEveryOperatorOfTheLayerWithBothEstimates) {
  const auto dir = temp_dir("json");
  const auto r =
      run_phaze("estimate --model gpt3-175b --arch tpuv4-like --tp 8 --attention-backend unfused --json --cache " +
                quoted((dir / "c.sqlite").string()));
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  // models.md 3.1 / 3.2 at t = 8: 18 forward and 25 backward operators.
  EXPECT_EQ(j["forward"].size(), 18u);
  EXPECT_EQ(j["backward"].size(), 25u);
  for (const auto& op : j["forward"]) {
    EXPECT_GE(op["single_latency_s"].get<double>(), op["all_latency_s"].get<double>()) << op["id"];
    if (op["id"] == "F11") {
      // accelerator.md 7: 2·7/8 · 50,331,648 B / 4 GiB/s.
      EXPECT_DOUBLE_EQ(op["all_latency_s"].get<double>(), 0.0205078125);
    }
  }
  EXPECT_TRUE(std::filesystem::exists(dir / "c.sqlite"));
  // A second run reads the cache and prints the same numbers.
  const auto again =
      run_phaze("estimate --model gpt3-175b --arch tpuv4-like --tp 8 --attention-backend unfused --json --cache " +
                quoted((dir / "c.sqlite").string()));
  EXPECT_EQ(again.out, r.out);
  std::filesystem::remove_all(dir);
}

TEST(CliEstimate, TextOutputWithoutCache) {
  const auto r = run_phaze("estimate --model bert-large --layer head --no-cache");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("LM logits"), std::string::npos);
}

TEST(CliEstimate, BadInputExitsTwoWithOneLine) {
  const auto dir = temp_dir("bad");
  {
    std::ofstream garbage(dir / "garbage.sqlite");
    garbage << "this is not a database";
  }
  for (const std::string& args : {std::string("estimate --model gpt3-175b --arch no-such-design --no-cache"),
                                  std::string("estimate --model no-such-model --no-cache"),
                                  std::string("estimate --model gpt3-175b --tp 5 --no-cache"),
                                  std::string("estimate --model gpt3-175b --layer middle --no-cache"),
                                  "estimate --model gpt3-175b --cache " + quoted((dir / "garbage.sqlite").string())}) {
    const auto r = run_phaze(args);
    EXPECT_EQ(r.status, 2) << args;
    std::string message = r.err;
    while (!message.empty() && message.back() == '\n') message.pop_back();
    EXPECT_FALSE(message.empty()) << args;
    EXPECT_EQ(message.find('\n'), std::string::npos) << args << ": " << r.err;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
