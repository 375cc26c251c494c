// `predict` on a configuration that does not fit names near ones that do: each suggestion's flags, given to
// `predict` beside the original options, make a configuration that fits and takes the time the suggestion
// says; they come fastest first; a model far too large for its GPUs gets none, said so.

#include <gtest/gtest.h>

#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "support/run_phaze.h"

namespace {

using phaze_test::parse_json;
using phaze_test::run_phaze;

TEST(FitSuggestions, EachSuggestionFitsAsGivenFastestFirst) {
  const std::string base =
      "predict --model gpt3-175b --system dgx-a100-80gb --mbs 1 --global-batch 1536 --gpus 128 --json";
  const auto r = run_phaze(base + " --tp 8 --pp 4 --dp 4 --recompute none");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto out = parse_json(r);
  ASSERT_FALSE(out["fits"].get<bool>());
  const auto& suggestions = out["fits_with"];
  ASSERT_EQ(suggestions.size(), 3u);
  double previous = 0;
  for (const auto& s : suggestions) {
    SCOPED_TRACE(s["flags"].get<std::string>());
    // The flags replace the plan's options they name; the others stay.
    std::map<std::string, std::string> options{{"--tp", "8"}, {"--pp", "4"}, {"--dp", "4"}, {"--recompute", "none"}};
    std::istringstream words(s["flags"].get<std::string>());
    std::vector<std::string> tokens{std::istream_iterator<std::string>(words), {}};
    for (size_t i = 0; i < tokens.size(); ++i) {
      const bool valued = i + 1 < tokens.size() && tokens[i + 1].rfind("--", 0) != 0;
      options[tokens[i]] = valued ? tokens[i + 1] : "";
      if (valued) ++i;
    }
    std::string args;
    for (const auto& [option, value] : options) args += " " + option + (value.empty() ? "" : " " + value);
    const auto again = run_phaze(base + args);
    ASSERT_EQ(again.status, 0) << again.err;
    const auto fitted = parse_json(again);
    EXPECT_TRUE(fitted["fits"].get<bool>());
    EXPECT_EQ(fitted["iteration_time_s"], s["iteration_time_s"]);
    EXPECT_FALSE(fitted.contains("fits_with"));
    EXPECT_GE(s["iteration_time_s"].get<double>(), previous);
    previous = s["iteration_time_s"].get<double>();
  }
}

TEST(FitSuggestions, NothingNearFitsAndTheTextSaysSo) {
  const auto r = run_phaze(
      "predict --model gpt3-175b --system dgx-a100-80gb --tp 1 --pp 1 --dp 8 --mbs 1 --global-batch 64 --gpus 8");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("DOES NOT FIT"), std::string::npos);
  EXPECT_NE(r.out.find("would fit       nothing one or two steps away"), std::string::npos) << r.out;
}

}  // namespace
