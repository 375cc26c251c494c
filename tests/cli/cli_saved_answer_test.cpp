// `phaze show` and `phaze compare` read saved answers back: the figures they print are those of the JSON,
// and compare's ratios are the quotients of the two answers' figures.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "support/file_text.h"
#include "support/run_phaze.h"
#include "support/temp_dir.h"

namespace {

using nlohmann::json;
using phaze_test::file_text;
using phaze_test::run_phaze;
using phaze_test::TempDir;

const std::string kRun = "predict --model llama2-7b --system dgx-h100 --tp 2 --dp 4 --global-batch 64 --json";

TEST(SavedAnswers, ShowPrintsTheAnswersFigures) {
  TempDir dir;
  ASSERT_EQ(run_phaze(kRun + " > " + dir.file("a.json")).status, 0);
  const json a = json::parse(file_text(dir.file("a.json")));
  const auto shown = run_phaze("show " + dir.file("a.json"));
  ASSERT_EQ(shown.status, 0) << shown.err;
  EXPECT_NE(shown.out.find(fmt::format("iteration  {:.4f} s", a["iteration_time_s"].get<double>())), std::string::npos)
      << shown.out;
  EXPECT_NE(shown.out.find("t 2 · p 1 · d 4"), std::string::npos) << shown.out;
}

TEST(SavedAnswers, CompareGivesTheRatioOfEachFigure) {
  TempDir dir;
  ASSERT_EQ(run_phaze(kRun + " > " + dir.file("a.json")).status, 0);
  ASSERT_EQ(run_phaze(kRun + " --fp8 > " + dir.file("b.json")).status, 0);
  const json a = json::parse(file_text(dir.file("a.json"))), b = json::parse(file_text(dir.file("b.json")));
  const auto compared = run_phaze("compare " + dir.file("a.json") + " " + dir.file("b.json"));
  ASSERT_EQ(compared.status, 0) << compared.err;
  const double ratio = b["iteration_time_s"].get<double>() / a["iteration_time_s"].get<double>();
  EXPECT_TRUE(std::regex_search(
      compared.out, std::regex("iteration, s +[0-9.e+-]+ +[0-9.e+-]+ +" + fmt::format("{:.4f}", ratio) + "\n")))
      << compared.out;
  // An answer against itself: every ratio is one.
  const auto same = run_phaze("compare " + dir.file("a.json") + " " + dir.file("a.json"));
  ASSERT_EQ(same.status, 0);
  EXPECT_FALSE(std::regex_search(same.out, std::regex(" (0\\.\\d{4}|1\\.\\d*[1-9]\\d*)\n"))) << same.out;
  // Answers of two kinds are refused.
  std::ofstream(dir.file("plan.json")) << run_phaze(
                                              "plan --model llama2-7b --system dgx-h100 --gpus 8 "
                                              "--global-batch 64 --top 1 --json")
                                              .out;
  const auto kinds = run_phaze("compare " + dir.file("a.json") + " " + dir.file("plan.json"));
  EXPECT_EQ(kinds.status, 2);
  EXPECT_NE(kinds.err.find("compare answers of one kind"), std::string::npos) << kinds.err;
}

}  // namespace
